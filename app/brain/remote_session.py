"""A remote conversation on disk (remote-session.json): what `RemoteConversation` needs to
resume with the same request head as before, so the server's prompt cache may still hold it.

The file is the user's: read without trusting it (a damaged or hand-edited file is refused as
a whole with ValueError, never half-applied), written atomically. `write`/`read` are pure
functions (any thread); `save`/`load` move a conversation to and from the file (its owner thread).
"""

from __future__ import annotations

import json
import logging
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Protocol

from app.brain.persona import Persona
from app.brain.records import Exchange, LoadResult, Message
from app.brain.session_files import CORRUPT
from app.system.paths import private_dir, write_private
from app.system.typed_json import typed_fields

log = logging.getLogger(__name__)


class RemoteState(Protocol):
    """What a remote conversation keeps between runs (`RemoteConversation`; named here as a
    protocol so this module does not import the brain that imports it)."""

    persona: Persona
    system_prompt: str
    system_tokens: int
    kept: list[Exchange]
    history: list[Message]
    turn_count: int
    shifts: int
    discarded: int
    dropped_turns: int
    note: str
    forgotten: set[str]


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
    note: str = ""  # the memory note in the request head
    forgotten: list[str] = field(default_factory=list)  # fact keys the user asked to forget


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
        "note": saved.note,
        "forgotten": saved.forgotten,
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
    note, forgotten = data.get("note", ""), data.get("forgotten", [])  # older files have neither
    if (
        not isinstance(note, str)
        or not isinstance(forgotten, list)
        or not all(isinstance(k, str) for k in forgotten)
    ):
        raise ValueError("the memory note or the forgotten facts are damaged")
    turns, shifts, discarded, dropped = counters
    return SavedRemote(
        head["persona"], head["system_prompt"], head["system_tokens"], exchanges,
        [Message.from_dict(m) for m in history], turns, shifts, discarded, dropped, note, forgotten,
    )  # fmt: skip


def save(conv: RemoteState, path: Path) -> None:
    """Atomically write `conv` (its exact request head included) to `path`."""
    saved = SavedRemote(
        conv.persona.fingerprint(), conv.system_prompt, conv.system_tokens, conv.kept, conv.history,
        conv.turn_count, conv.shifts, conv.discarded, conv.dropped_turns, conv.note, sorted(conv.forgotten),
    )  # fmt: skip
    write(path, saved)


def load(conv: RemoteState, path: Path) -> LoadResult:
    """Resume `conv` from `path`: the same request head as before (the server's cache may
    still hold it); under another persona it goes on with the new system prompt."""
    if not path.exists():
        return LoadResult(False)
    try:
        saved = read(path)
    except (OSError, ValueError) as exc:
        log.warning("remote session %s unreadable (%s)", path, exc)
        return LoadResult(False, message=CORRUPT)
    conv.kept, conv.history = saved.kept, saved.history
    conv.turn_count, conv.shifts, conv.discarded = saved.turn_count, saved.shifts, saved.discarded
    conv.dropped_turns = saved.dropped_turns
    conv.note, conv.forgotten = saved.note, set(saved.forgotten)
    if saved.persona == conv.persona.fingerprint():
        conv.system_prompt, conv.system_tokens = saved.system_prompt, saved.system_tokens
        return LoadResult(True)
    return LoadResult(
        False, message="The new persona applies from your next message; earlier turns stay as they were."
    )


@dataclass
class _Head:
    """The file's scalar entries, as typed_fields checks them."""

    persona: str
    system_prompt: str
    system_tokens: int
    counters: list[int]
