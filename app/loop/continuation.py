"""Going on after a pause the assistant took for the end of the turn (hands-free).

The end of a hands-free turn is a guess: the words rule (turn_end.py) ends it after 0.2–1.2 s of
silence, and some heads of sentences sound finished ("Tell me something interesting… about the
ocean"), or are heard as finished by whisper tiny ("Tell me about" → "Tell me I'm out."). When the
user speaks again within `window_ms` of the end of a turn, they had not finished: that turn is
taken back (its reply stops; the conversation drops the exchange exactly, Responder.take_back;
front ends remove it on `retracted` with `continued`) and its audio heads the new utterance, so
whisper hears the whole sentence once and the model answers it once.

Threads: `ended`, `speech_started`, `prefixed`, `dropped` and `forget` run on the audio thread (the
segmenter's; `forget` also on a front end's), `deliver` on the stt thread. One lock orders them:
a turn delivered after its utterance was continued is never submitted; one delivered before is
what `speech_started` returns, to be taken back.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from app.loop.turn import Turn


@dataclass
class Ended:
    """An utterance whose silence ended the turn: its audio, and the turn made of it."""

    audio: np.ndarray
    t_end: float  # perf_counter at its end of speech
    turn: Turn | None = None  # set by `deliver` once the stt thread has made the turn
    continued: bool = False  # the user went on: it heads the next utterance instead


class Continuation:
    def __init__(self, window_ms: int) -> None:
        """`window_ms`: speech starting this soon after the end of a turn continues it (0: never).
        The pause between the two parts stays in the audio; the Transcriber cuts it short
        (vad.squeeze_pauses), as it does any long pause."""
        self.window_ms = window_ms
        self._lock = threading.Lock()
        self._last: Ended | None = None
        self._head: np.ndarray | None = None  # the audio heading the utterance being heard

    def prefixed(self, audio: np.ndarray) -> np.ndarray:
        """Audio thread: the utterance being heard, with the audio it continues (if any) before it."""
        head = self._head
        return audio if head is None else np.concatenate([head, audio])

    def ended(self, audio: np.ndarray, t_end: float) -> Ended:
        """Audio thread: an utterance (already `prefixed`) ended; the record goes to the stt
        thread with it."""
        record = Ended(audio, t_end)
        with self._lock:
            self._last, self._head = record, None
        return record

    def speech_started(self, t_start: float) -> Ended | None:
        """Audio thread: speech began at `t_start` (perf_counter). If that is within the window
        after the last turn's end, the new utterance continues it: returns its record (its
        `turn` is None when the stt thread has not made it yet: then it never will)."""
        with self._lock:
            last, self._last = self._last, None
            if last is None or not self.window_ms or (t_start - last.t_end) * 1000 > self.window_ms:
                return None
            last.continued = True
            self._head = last.audio
            return last

    def deliver(self, record: Ended | None, make: Callable[[], Turn | None]) -> bool:
        """stt thread: `make()` submits (or confirms) the turn of `record`'s utterance and returns
        it; it is not called, and False returned, when the user has gone on already."""
        with self._lock:
            if record is not None and record.continued:
                return False
            turn = make()
            if record is not None:
                record.turn = turn
            return True

    def dropped(self) -> Ended | None:
        """Audio thread: the utterance being heard was dropped (the echo guard took it for the
        assistant's voice). The words it continued must not be lost: their record, to be heard
        on their own, or None when there are none."""
        with self._lock:
            head, self._head = self._head, None
        if head is None:
            return None
        return Ended(head, time.perf_counter())

    def forget(self) -> None:
        """Something else came between (typed text, the talk key, another conversation): the
        next speech is a turn of its own."""
        with self._lock:
            self._last = self._head = None
