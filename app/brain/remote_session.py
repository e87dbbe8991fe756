"""A remote conversation on disk (remote-session.json): what `RemoteConversation` needs to
resume with the same request head as before, so the server's prompt cache may still hold it.

The file is the user's: read without trusting it (a damaged or hand-edited file is refused as
a whole with ValueError, never half-applied), written atomically. Pure functions; any thread.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from pathlib import Path

from app.brain.records import Exchange, Message
from app.system.paths import private_dir, write_private
from app.system.typed_json import typed_fields

VERSION = 1


@dataclass
class SavedRemote:
    """The saved state of a remote conversation."""

    persona: str  # the persona's fingerprint when it was saved
    system_prompt: str
    system_tokens: int
    kept: list[Exchange]  # the exchanges the next request resends
    history: list[Message]
    turn_count: int = 0
    shifts: int = 0
    discarded: int = 0
    dropped_turns: int = 0


def write(path: Path, saved: SavedRemote) -> None:
    private_dir(path.parent)
    data = {
        "version": VERSION,
        "persona": saved.persona,
        "system_prompt": saved.system_prompt,
        "system_tokens": saved.system_tokens,
        "kept": [asdict(ex) for ex in saved.kept],
        "history": [asdict(m) for m in saved.history],
        "counters": [saved.turn_count, saved.shifts, saved.discarded, saved.dropped_turns],
    }
    write_private(path, json.dumps(data, ensure_ascii=False, indent=1))


def read(path: Path) -> SavedRemote:
    """Raises OSError, or ValueError saying what is wrong with the file."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except RecursionError as exc:
        raise ValueError("nested too deeply") from exc
    head, wrong = typed_fields(_Head, data)
    if wrong or len(head) < 4:
        raise ValueError(f"no valid {', '.join(wrong) or 'persona, prompt or counters'}")
    kept, history = data.get("kept", []), data.get("history", [])
    if not isinstance(kept, list) or not isinstance(history, list):
        raise ValueError("the kept exchanges or the history is not a list")
    exchanges = []
    for ex in kept:
        fields, bad = typed_fields(Exchange, ex)
        if bad or len(fields) != 3:
            raise ValueError("a kept exchange is damaged")
        exchanges.append(Exchange(**fields))
    counters = head["counters"]
    if len(counters) != 4 or min(counters) < 0:
        raise ValueError("damaged counters")
    return SavedRemote(
        head["persona"], head["system_prompt"], head["system_tokens"], exchanges,
        [Message.from_dict(m) for m in history], *counters,
    )  # fmt: skip


@dataclass
class _Head:
    """The file's scalar entries, as typed_fields checks them."""

    persona: str
    system_prompt: str
    system_tokens: int
    counters: list[int]
