"""Tentative turns (hands-free): started on the transcript of a pause, before the end of speech
is certain, then confirmed by the end of the utterance or withdrawn.

Threads: the stt thread calls `start` (a pause's transcript) and `settle` (the utterance's final
transcript); any thread may call `withdraw` (speech resumed, barge-in, shutdown). The llm thread
evaluates a tentative turn's prompt, then waits on `turn.pending` (turn.py) before replying;
a withdrawn turn is taken back by the conversation (`Conversation.stream(gate=...)`, turn_gate.py).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from app.ears.transcriber import Transcript
from app.loop.turn import Decision, Turn


class TentativeTurns:
    def __init__(self, submit: Callable[[Turn], None]) -> None:
        """`submit`: hands a turn to the llm thread (a queue's put)."""
        self._submit = submit
        self._current: tuple[Transcript, Turn] | None = None
        self._lock = threading.Lock()
        self.counts = {"confirmed": 0, "withdrawn": 0}  # diagnostics, tests

    @property
    def current(self) -> Turn | None:
        """The turn awaiting the end of speech, if any."""
        current = self._current
        return current[1] if current else None

    def start(
        self,
        result: Transcript,
        text: str,
        t_end: float,
        end_sample: int,
        still_current: Callable[[], bool],
        pitch_end: float | None = None,
        audio_pending: bool = False,
    ) -> Turn:
        """stt thread: submit a tentative turn for `text` (from `result`, heard at a pause whose
        speech ended at segmenter sample `end_sample`; `pitch_end`: how the voice ended,
        ears/prosody.py; `audio_pending`: the audio turn model will score it, ears/turn_model.py).
        `still_current()`: False when speech resumed meanwhile (the turn is withdrawn at once).
        Returns the turn."""
        self.withdraw()
        turn = Turn(
            text,
            t_end,
            time.perf_counter(),
            result.transcribe_s * 1000,
            pending=Decision(),
            language=result.language,
        )
        turn.end_sample, turn.pitch_end, turn.audio_pending = end_sample, pitch_end, audio_pending
        self._current = (result, turn)
        if not still_current():  # speech resumed before the turn was visible to `withdraw`
            self.withdraw_turn(turn)
        self._submit(turn)
        return turn

    def settle(self, final: Transcript) -> Turn | None:
        """stt thread, with the utterance's transcript: the tentative turn if it was started from
        this very transcript and is now confirmed (nothing more to submit); otherwise it is
        withdrawn and the caller submits an ordinary turn (None)."""
        current, self._current = self._current, None
        if current is None:
            return None
        result, turn = current
        if result is final and turn.confirm():
            with self._lock:
                self.counts["confirmed"] += 1
            return turn
        self.withdraw_turn(turn)
        return None

    def withdraw(self) -> None:
        """Any thread: end the turn awaiting the end of speech, if any."""
        if (turn := self.current) is not None:
            self.withdraw_turn(turn)

    def withdraw_turn(self, turn: Turn) -> None:
        """Withdraw `turn` if it is still undecided (no effect on ordinary or confirmed turns)."""
        if turn.withdraw():
            with self._lock:
                self.counts["withdrawn"] += 1
