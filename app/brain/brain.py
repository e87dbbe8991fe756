"""The brain interface: what the loop and the front ends use of a language model, whichever it
is: the local `Conversation` (one persistent llama context in this process) or a
`RemoteConversation` (an OpenAI-compatible server: llama-server, vLLM, Ollama, llama-cpp-python's).

Contract shared by both (one owner thread per brain; every call may block on the model):
- `stream(text, cancel, gate)` appends a user turn and yields the reply in pieces; `cancel`
  (any thread) stops it within one piece; the partial reply is kept, marked interrupted.
  `gate` (tentative turns, `user_turn.TurnGate`) gets the end-of-turn probability (None from a
  server) and decides: pieces before its decision are speculative; False takes the turn back
  without a trace. A failure raises `BrainError` with a message for people.
- `history`: the conversation as `Message`s; `last_stats`: the last turn's `TurnStats`;
  `context_stats()`: counters for the memory gauge (`n_past`, `n_ctx`, `dropped_turns`, ...).
- `amend_last_reply(text, unspoken, interrupted)`: the newest reply becomes what was heard (after a
  barge-in), or another version of it (after a Retry).
- `retract_last_turn()`: Retry: the newest exchange leaves the context exactly (whole turn) and
  the history; returns its user text (None if the newest turn is no finished reply); the next
  `stream` draws with another seed.
- `remembered()`: the facts the memory note holds (memory.py); `forget(key)` takes one out of it;
  `share_memory(shared)`: also read and add to the facts kept across conversations (or not: None).
- `reset()`, `close()`; sessions through `save_session` / `load_session` below.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from app.brain import session
from app.brain.conversation import Conversation
from app.brain.facts import Fact
from app.brain.persona import Persona
from app.brain.records import BrainError, LlmConfig, LoadResult, Message, RemoteConfig, TurnStats
from app.brain.shared_memory import SharedMemory
from app.brain.user_turn import TurnGate

if TYPE_CHECKING:
    from app.brain.remote import RemoteConversation

__all__ = ["Brain", "BrainError", "load_session", "open_brain", "save_session"]


class Brain(Protocol):
    persona: Persona
    history: list[Message]
    forgotten: set[str]  # fact keys the memory note leaves out (memory.py)
    last_stats: TurnStats | None
    system_prompt: str
    reads_end_of_turn: bool  # the gate of a tentative turn gets the model's end-of-turn probability

    def stream(
        self,
        text: str,
        cancel: threading.Event | None = None,
        gate: TurnGate | None = None,
        language: str = "",
    ) -> Iterator[str]: ...

    def amend_last_reply(self, text: str, unspoken: str = "", interrupted: bool = True) -> bool: ...

    def record_exchange(self, user: str, reply: str, language: str = "") -> None: ...

    def retract_last_turn(self, reseed: bool = True) -> str | None: ...

    def context_stats(self) -> dict[str, Any]: ...

    def remembered(self) -> list[Fact]: ...

    def forget(self, key: str) -> None: ...

    def share_memory(self, shared: SharedMemory | None) -> None: ...

    def reset(self) -> None: ...

    def close(self) -> None: ...


def open_brain(llm: LlmConfig, remote: RemoteConfig | None, persona: Persona) -> Brain:
    """The remote brain when `remote` is given, else the local model (blocks while it loads;
    raises ModelError / BrainError / ValueError with a message for people)."""
    if remote is not None:
        from app.brain.remote import RemoteConversation  # the openai client: ~0.6 s to import

        return RemoteConversation(remote, persona, remote.words_model)
    return Conversation(llm, persona)


def _remote(brain: Brain) -> RemoteConversation | None:
    """The brain as a RemoteConversation, or None for the local one."""
    # app.brain.remote is imported only when a remote brain is opened: without it, none exists
    remote = sys.modules.get("app.brain.remote")
    return brain if remote is not None and isinstance(brain, remote.RemoteConversation) else None


def save_session(brain: Brain, directory: Path) -> None:
    """Write the brain's session to `directory` (atomic; its owner thread)."""
    if (server := _remote(brain)) is not None:
        server.save_session(directory)
    else:
        assert isinstance(brain, Conversation)
        session.save(brain, directory)


def change_persona(brain: Brain, persona: Persona) -> None:
    """Go on under `persona` without reloading the model (its owner thread, between turns)."""
    if (server := _remote(brain)) is not None:
        server.change_persona(persona)
    else:
        assert isinstance(brain, Conversation)
        session.change_persona(brain, persona)


def load_session(brain: Brain, directory: Path) -> LoadResult:
    """Resume the session saved in `directory` (a fresh brain; its owner thread)."""
    if (server := _remote(brain)) is not None:
        return server.load_session(directory)
    assert isinstance(brain, Conversation)
    return session.load(brain, directory)
