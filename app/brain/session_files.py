"""What a session folder holds, readable without loading a model (the window lists folders).

- `session.json` + `state.bin`: a local Conversation (brain/session.py)
- `remote-session.json`: a RemoteConversation (brain/remote.py)
Both JSON files carry the readable `history`. Pure file reading; any thread.
"""

from __future__ import annotations

import json
from pathlib import Path

from app.brain.records import Message

META = "session.json"
STATE = "state.bin"
REMOTE = "remote-session.json"
ALL = (META, STATE, REMOTE)
PERSONA_CHANGED = "The new persona applies from your next message; earlier turns stay as they were."
CORRUPT = "The saved conversation was corrupt, so a new conversation starts (the file was left as it is)."


def read_history(directory: Path) -> list[Message]:
    """The readable history saved in `directory`, local or remote (empty if none or corrupt);
    the newer file wins when both exist."""
    files = [p for name in (META, REMOTE) if (p := directory / name).exists()]
    for path in sorted(files, key=lambda p: p.stat().st_mtime, reverse=True):
        try:
            meta = json.loads(path.read_text(encoding="utf-8"))
            return [Message.from_dict(m) for m in meta.get("history", [])]
        except (OSError, ValueError, TypeError, AttributeError):
            continue
    return []
