"""Session files: resume a Conversation after a restart without re-evaluating it.

A session folder holds `state.bin` (llama.cpp's context state with its token list, written by
`llama_state_save_file`) and `session.json` (format version, model and persona fingerprints,
n_ctx, the token ledger and the readable history). Both are written to temporary names and
renamed into place, state first, so a crash mid-save leaves the previous session intact.

On load: if the fingerprints and n_ctx match and the state's tokens agree with the ledger, the
cache is restored as it was (no evaluation). Otherwise, or when the state is unreadable, the
session is reported (`LoadResult.message`) and the newest history that fits is re-evaluated.
Nothing here is fatal. Call from the thread that owns the Conversation.
"""

from __future__ import annotations

import ctypes
import json
import logging
import os
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any

import llama_cpp

from app.brain.conversation import Conversation
from app.brain.ledger import Ledger
from app.brain.persona import Persona
from app.brain.records import LoadResult, Message
from app.brain.session_files import CORRUPT, META, STATE
from app.brain.turn_language import message_as_read
from app.catalog.catalog import sha256_of
from app.system.paths import private_dir, write_private

log = logging.getLogger(__name__)
VERSION = 2  # 2: the ledger records where each reply starts


def fingerprint(conv: Conversation) -> dict[str, object]:
    return {
        "version": VERSION,
        "model_sha256": sha256_of(Path(conv.config.model_path)),
        "persona": conv.persona.fingerprint(),
        "n_ctx": conv.n_ctx,
    }


def save(conv: Conversation, directory: Path) -> None:
    """Atomically write the session (blocking; ~tens of ms for small contexts)."""
    private_dir(directory)
    conv.unprime()  # a session holds whole turns only
    try:
        _write(conv, directory)
    finally:
        conv.prime()


def _write(conv: Conversation, directory: Path) -> None:
    n = conv.n_past
    tokens = (llama_cpp.llama_token * n)(*conv.llama.input_ids[:n].tolist())
    tmp_state = directory / f".{STATE}.tmp"
    if not llama_cpp.llama_state_save_file(conv.llama.ctx, str(tmp_state).encode(), tokens, n):
        tmp_state.unlink(missing_ok=True)
        raise OSError(f"llama.cpp could not write {tmp_state}")
    meta = {
        **fingerprint(conv),
        "n_past": n,
        "system_prompt": conv.system_prompt,
        "ledger": {
            "n_keep": conv.ledger.n_keep,
            "turns": conv.ledger.turns,
            "replies": conv.ledger.replies,
            "notes": conv.ledger.notes,
            "recalls": conv.ledger.recalls,
            "pinned": conv.ledger.pinned,
            "recall_at": conv.ledger.recall_at,
        },
        "note_due": conv.note_due,
        "forgotten": sorted(conv.forgotten),
        "shifts": conv.shifts,
        "discarded": conv.discarded,
        "dropped_turns": conv.dropped_turns,
        "turn_count": conv.turn_count,
        "history": [asdict(m) for m in conv.history],
        "saved_at": time.time(),
    }
    os.chmod(tmp_state, 0o600)
    tmp_meta = directory / f".{META}.tmp"
    try:  # both new files complete before either replaces the old pair (a full disk keeps it)
        write_private(tmp_meta, json.dumps(meta, ensure_ascii=False, indent=1))
    except OSError:
        tmp_state.unlink(missing_ok=True)
        raise
    os.replace(tmp_state, directory / STATE)
    os.replace(tmp_meta, directory / META)


def load(conv: Conversation, directory: Path) -> LoadResult:
    """Restore `conv` from `directory` (see module docstring). `conv` must be fresh."""
    conv.unprime()
    try:
        return _load(conv, directory)
    finally:
        conv.prime()


def _load(conv: Conversation, directory: Path) -> LoadResult:
    t0 = time.perf_counter()
    meta_path = directory / META
    if not meta_path.exists():
        return LoadResult(False)
    try:
        meta = json.loads(meta_path.read_text(encoding="utf-8"))
        if not isinstance(meta, dict) or not isinstance(meta.get("history", []), list):
            raise ValueError("not a saved conversation")
        history = [Message.from_dict(m) for m in meta.get("history", [])]
        forgotten = meta.get("forgotten", [])
        if not isinstance(forgotten, list) or not all(isinstance(k, str) for k in forgotten):
            raise ValueError("forgotten facts unreadable")
    except (OSError, ValueError, TypeError, RecursionError) as exc:
        log.warning("session %s is corrupt (%s); starting a new conversation", meta_path, exc)
        return LoadResult(False, message=CORRUPT, seconds=time.perf_counter() - t0)
    conv.forgotten = set(forgotten)
    expected = fingerprint(conv)
    mismatch = [k for k, v in expected.items() if meta.get(k) != v]
    if not mismatch:
        problem = _restore_state(conv, directory, meta)
        if problem is None:
            conv.history = history
            conv.note_due = meta.get("note_due") is True
            conv.shifts, conv.discarded = _count(meta, "shifts"), _count(meta, "discarded")
            conv.dropped_turns = _count(meta, "dropped_turns")
            conv.turn_count = _count(meta, "turn_count", len(history) // 2)
            return LoadResult(True, seconds=time.perf_counter() - t0)
        log.warning("saved state unusable (%s); re-evaluating the conversation", problem)
        msg = "The saved memory of the conversation was unusable, so the assistant read it again."
    else:
        log.warning("session made with a different %s; re-evaluating the conversation", ", ".join(mismatch))
        msg = _changed_message(mismatch)
    replayed = replay(conv, history)
    return LoadResult(False, replayed, msg, time.perf_counter() - t0)


def _count(meta: dict[str, Any], key: str, default: int = 0) -> int:
    """A counter of the saved session (a damaged one counts as `default`)."""
    value = meta.get(key, default)
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else default


def _changed_message(changed: list[str]) -> str:
    """What a changed setting means for the conversation, in plain words."""
    if changed == ["persona"]:
        return "The new persona applies from your next message; earlier turns stay as they were."
    what = {"model_sha256": "language model", "n_ctx": "memory size", "persona": "persona"}
    named = [what[k] for k in changed if k in what] or ["app version"]
    return f"The conversation continues with the new {' and '.join(named)} (the assistant read it again)."


def _restore_state(conv: Conversation, directory: Path, meta: dict[str, Any]) -> str | None:
    try:
        n_past = int(meta["n_past"])
        saved = meta["ledger"]
        ledger = Ledger(
            int(saved["n_keep"]),
            [int(x) for x in saved["turns"]],
            [int(x) for x in saved["replies"]],
            [int(x) for x in saved.get("notes", [])],  # sessions saved before the memory note
            [int(x) for x in saved.get("recalls", [])],  # ... and before the recall note
            int(saved.get("pinned", 0)),  # ... and before the note was kept across shifts
            [int(x) for x in saved.get("recall_at", [])],  # ... and before it moved to the reply
        )
    except (KeyError, TypeError, ValueError) as exc:
        return f"ledger unreadable ({exc!r})"
    if ledger.n_past != n_past or ledger.n_keep != conv.ledger.n_keep:
        return "ledger does not match the saved token count"
    cap = conv.n_ctx
    tokens = (llama_cpp.llama_token * cap)()
    n_out = ctypes.c_size_t(0)
    ok = llama_cpp.llama_state_load_file(
        conv.llama.ctx, str(directory / STATE).encode(), tokens, cap, ctypes.byref(n_out)
    )
    if not ok or n_out.value != n_past:
        # A failed load may leave the cache half-written: rebuild the system prompt.
        conv.restart_context()
        return "state file unreadable or truncated"
    conv.llama.input_ids[:n_past] = list(tokens[:n_past])
    conv.llama.n_tokens = n_past
    conv.ledger = ledger
    conv.state_replaced()
    if conv.cache_pos_max() != n_past - 1:
        conv.restart_context()
        return "restored cache is inconsistent"
    return None


def change_persona(conv: Conversation, persona: Persona) -> int:
    """Go on under `persona`, the model staying loaded: the new system prompt is evaluated and
    the newest turns re-read, as a resume with another persona does (earlier turns keep the
    names they were said with). Returns the turns re-read. Owner thread, between turns."""
    conv.unprime()
    try:
        conv.persona, conv.system_prompt = persona, persona.render()
        conv.restart_context()
        return replay(conv, list(conv.history))
    finally:
        conv.prime()


def replay(conv: Conversation, history: list[Message]) -> int:
    """Re-evaluate the newest complete turns of `history` that fit in half the free context."""
    pairs = [
        (u, a)
        for u, a in zip(history[::2], history[1::2], strict=False)
        if u.role == "user" and a.role == "assistant"
    ]
    budget = (conv.n_ctx - conv.ledger.n_keep) // 2
    chosen: list[tuple[Message, Message]] = []
    used = 0
    for u, a in reversed(pairs):
        cost = conv.turn_cost(message_as_read(u, conv.persona), a.text)
        if used + cost > budget:
            break
        chosen.append((u, a))
        used += cost
    chosen.reverse()
    conv.history = list(history)  # the memory note is built from it
    conv.note_due = len(chosen) < len(pairs)  # older turns left out: the first one read opens with it
    for u, a in chosen:
        conv.append_turn(message_as_read(u, conv.persona), a.text)
    return len(chosen)
