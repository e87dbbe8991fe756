"""Drive one stage of the pipeline alone: typed inputs in, typed outputs recorded.

`Outbox` is what a stage reports to (its `Report` port: events, states, errors), kept in order
and waited on by type. `StubVoice` is a STUB neighbour: a voice that plays nothing and says so
through real `SpeakerEvent`s at once; it stands in for the Speaker in tests of the responder and
the llm worker, whose real voice path is covered by the integration tests (test_assistant,
test_heard, test_bargein on PulseAudio). Each stage under test is the real class on real models.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import TypeVar

from app.loop.events import Event, State
from app.loop.ports import Report
from app.voice.sentence_queue import SpeakerEvent

E = TypeVar("E")


class Outbox:
    """Everything a stage reported, in order; any thread may report."""

    def __init__(self) -> None:
        self.events: list[Event] = []
        self.states: list[State] = []
        self.errors: list[tuple[str, str]] = []
        self._changed = threading.Condition()

    def report(self) -> Report:
        return Report(self._emit, self._set_state, self._error)

    def _emit(self, event: Event) -> None:
        with self._changed:
            self.events.append(event)
            self._changed.notify_all()

    def _set_state(self, state: State, only_from: State | None = None) -> None:
        with self._changed:
            if only_from is None or (self.states and self.states[-1] == only_from):
                self.states.append(state)
            self._changed.notify_all()

    def _error(self, message: str, source: str) -> None:
        with self._changed:
            self.errors.append((message, source))
            self._changed.notify_all()

    def of(self, kind: type[E]) -> list[E]:
        return [e for e in self.events if isinstance(e, kind)]

    def wait_for(self, kind: type[E], timeout: float = 60, pred: Callable[[E], bool] = lambda e: True) -> E:
        """The first event of `kind` that satisfies `pred` (waiting for it)."""
        deadline = time.monotonic() + timeout
        with self._changed:
            while True:
                found = [e for e in self.of(kind) if pred(e)]
                if found:
                    return found[0]
                left = deadline - time.monotonic()
                if left <= 0:
                    raise AssertionError(f"no {kind.__name__} within {timeout} s; got {self.events[-12:]}")
                self._changed.wait(left)

    def wait_state(self, state: State, timeout: float = 60) -> None:
        deadline = time.monotonic() + timeout
        with self._changed:
            while state not in self.states:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise AssertionError(f"never {state}; states {self.states}")
                self._changed.wait(left)


class StubVoice:
    """STUB voice (see the module docstring): each sentence "plays" at once, in order, and its
    `SpeakerEvent`s (sentence_started, sentence_finished, queue_empty) go to `on_event`.
    `cut_after(n)`: from sentence n on nothing plays; a `stop()` then cuts sentence n with
    `heard` its first word, as a barge-in during it would."""

    available = True
    problem = ""
    first_chunk_words = 0
    can_hold = False

    def __init__(self, on_event: Callable[[SpeakerEvent], None] = lambda e: None) -> None:
        self.on_event = on_event
        self.said: list[str] = []
        self._stuck_at: int | None = None
        self._index = 0

    def cut_after(self, n: int) -> None:
        self._stuck_at = n

    @property
    def busy(self) -> bool:
        return self._stuck_at is not None and len(self.said) > self._stuck_at

    def say(self, sentence: str, held: bool = False, language: str = "") -> int:
        self._index += 1
        self.said.append(sentence)
        if self._stuck_at is None or len(self.said) <= self._stuck_at:
            self.on_event(SpeakerEvent("sentence_started", sentence, self._index))
            self.on_event(SpeakerEvent("sentence_finished", sentence, self._index))
            self.on_event(SpeakerEvent("queue_empty"))
        elif len(self.said) == self._stuck_at + 1:
            self.on_event(SpeakerEvent("sentence_started", sentence, self._index))
        return self._index

    def stop(self) -> None:
        if self.busy and self._stuck_at is not None:
            n = self._stuck_at
            cut = self.said[n]
            self.on_event(SpeakerEvent("sentence_cut", cut, n + 1, heard=cut.split()[0]))
            self._stuck_at = None

    def wait_synthesized(self, index: int, timeout: float) -> bool:
        return True

    def release_held(self) -> None:
        """Nothing is held (`can_hold` is False)."""

    def discard_held(self) -> None:
        """Nothing is held (`can_hold` is False)."""

    def close(self) -> None:
        """Nothing to close."""
