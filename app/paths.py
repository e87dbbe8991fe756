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
