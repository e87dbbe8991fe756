"""The audio turn model as a service to the stt thread and the end-of-turn decision: does the
utterance so far *sound* finished (ears/turn_model.py, ~50 ms on one core)?

Two ways in. For a brain that reads no words (a server without the words reader) every pause is
scored while whisper transcribes it (`at_pause` → a Future the stt thread waits for). Beside a
brain that reads the words, the pause's audio is only kept (`keep`), and scored when the words'
probability turns out unsure (`score(turn, then)`, asked by end_of_turn.EndOfTurn).

Threads: `load` and `close` on the stt thread; the model runs on one worker thread owned here
("turn-model"); `score` may be called from any thread and calls `then(turn)` on the worker.
A model that cannot load is reported once (source "turn") and nothing is ever scored.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

import numpy as np

from app.ears.turn_model import TurnModel, TurnModelUnavailable
from app.loop.turn import Turn
from app.system.cpu import core_taken
from app.system.thread_names import name_os_thread

log = logging.getLogger(__name__)


class SoundScorer:
    def __init__(self, path: Path | None, error: Callable[[str, str], None]) -> None:
        """`path`: the turn model (None: no scoring); `error(message, source)`: how a model
        that cannot load is told."""
        self.path = path
        self._error = error
        self.model: TurnModel | None = None
        self._worker: ThreadPoolExecutor | None = None
        self._kept: tuple[int, np.ndarray] | None = None  # (end_sample, audio) of the newest pause

    @property
    def ready(self) -> bool:
        return self._worker is not None

    def load(self) -> None:
        """stt thread, before it reports itself loaded (the first pause may need the model)."""
        if self.path is None:
            return
        try:
            self.model = TurnModel(self.path)
            self._worker = ThreadPoolExecutor(1, "turn-model", initializer=name_os_thread)
        except TurnModelUnavailable as exc:
            self._error(f"Hands-free turns end by your words alone: {exc}", "turn")

    def close(self) -> None:
        """stt thread, after it has ended: the worker stops, the model is freed."""
        if self._worker is not None:
            self._worker.shutdown(wait=True)
        self.model = self._worker = self._kept = None

    def at_pause(self, audio: np.ndarray) -> Future[float | None] | None:
        """Score `audio` now (None: no model)."""
        return self._worker.submit(self._probability, audio) if self._worker is not None else None

    def keep(self, end_sample: int, audio: np.ndarray | None) -> None:
        """The newest pause's audio, for a later `score` (None: nothing to score at this pause).
        Kept before the llm thread can see the pause's turn."""
        self._kept = (end_sample, audio) if audio is not None else None

    def score(self, turn: Turn, then: Callable[[Turn], None]) -> bool:
        """Any thread: score tentative `turn`'s pause; `scored` then `then(turn)` on the worker.
        False (nothing started) without a model, or when a newer pause replaced `turn`'s."""
        kept, worker = self._kept, self._worker
        if kept is None or worker is None or kept[0] != turn.end_sample:
            return False
        try:
            future = worker.submit(self._probability, kept[1])
        except RuntimeError:  # shut down meanwhile
            return False
        future.add_done_callback(lambda f: then(scored(turn, f.result())))
        return True

    def _probability(self, audio: np.ndarray) -> float | None:
        """The turn model's P that the utterance so far is a finished turn (None: it failed)."""
        assert self.model is not None
        try:
            with core_taken():  # the llm computes with one thread fewer meanwhile (system/cpu.py)
                return self.model.probability(audio)
        except Exception:  # onnxruntime failing on one clip must not cost the turn
            log.exception("the turn model failed on a pause")
            return None


def scored(turn: Turn, p: float | None) -> Turn:
    """`turn`'s sound is known: P (None: not known) and no longer pending."""
    turn.audio_end = p
    turn.audio_pending = False
    return turn
