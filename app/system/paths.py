"""The app's folders: settings (config), conversations (data), logs (state).

Platform folders from platformdirs (`~/.config/talk-llama`, `~/.local/share/talk-llama`,
`~/.local/state/talk-llama` on Linux); $TALK_LLAMA_CONFIG puts all three under one folder
(tests, portable installs). Below every stage: imports nothing from the app.
"""

from __future__ import annotations

import os
from pathlib import Path

import platformdirs

CONFIG_ENV = "TALK_LLAMA_CONFIG"
APP = "talk-llama"


def _override() -> Path | None:
    env = os.environ.get(CONFIG_ENV)
    return Path(env) if env else None


def config_dir() -> Path:
    root = _override()
    return root if root else Path(platformdirs.user_config_dir(APP))


def data_dir() -> Path:
    root = _override()
    return root / "data" if root else Path(platformdirs.user_data_dir(APP))


def state_dir() -> Path:
    root = _override()
    return root / "state" if root else Path(platformdirs.user_state_dir(APP))


def private_dir(path: Path) -> Path:
    """Create `path` (and parents) if needed and make it readable by its owner only (0700):
    conversations are transcripts of what someone said aloud."""
    path.mkdir(mode=0o700, parents=True, exist_ok=True)
    path.chmod(0o700)
    return path


def write_private(path: Path, text: str) -> None:
    """Write `text` atomically (a temporary file renamed into place) with mode 0600."""
    tmp = path.with_name(f".{path.name}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(text)
    os.chmod(tmp, 0o600)  # an existing temporary file keeps its old mode through O_CREAT
    os.replace(tmp, path)
