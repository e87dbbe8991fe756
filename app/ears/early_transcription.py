"""Early transcription for hands-free turns: whisper starts at a pause, before the end is certain.

The Segmenter reports `pause` after a short silence and `utterance` once the silence is long
enough to end the turn. Whisper is started on the audio at the pause; if the utterance then
ends with no more speech (same end sample), that result is the turn's transcript and the end-of-
speech wait has hidden whisper's time. If the speaker goes on (`resumed`), the run in progress is
aborted through whisper.cpp's abort callback and its result dropped.

Threads: `resumed()` is called from the audio callback thread (it only bumps a counter);
`at_pause()` and `final()` from the one thread that owns the Transcriber. Both block while
whisper runs.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from app.ears.transcriber import Transcriber, Transcript


class EarlyTranscription:
    def __init__(self, transcriber: Transcriber, closing: Callable[[], bool] = lambda: False) -> None:
        """`closing`: polled during whisper runs; True aborts them (e.g. at shutdown)."""
        self.transcriber = transcriber
        self._closing = closing
        self._epoch = 0  # bumped when speech resumes: runs started before are stale
        self._early: tuple[int, int, Transcript] | None = None  # (epoch, end_sample, result)
        self.reused = 0  # early results used as the final transcript (diagnostics, tests)

    def resumed(self) -> None:
        """Speech again after a pause: abort the early run, drop its result."""
        self._epoch += 1

    def at_pause(self, audio: np.ndarray, end_sample: int, language: str | None = None) -> Transcript | None:
        """Transcribe the utterance so far (blocks); kept for `final` unless speech resumes.
        Returns the result, or None when speech resumed while whisper ran. `language`: the one
        found in this utterance while it was spoken (Transcriber.transcribe)."""
        epoch = self._epoch
        abort = lambda: self._closing() or self._epoch != epoch  # noqa: E731
        result = self.transcriber.transcribe(audio, abort=abort, language=language)
        if self._epoch != epoch:
            self._early = None
            return None
        self._early = (epoch, end_sample, result)
        return result

    def is_current(self, result: Transcript) -> bool:
        """`result` is the kept early result and no speech has resumed since (any thread)."""
        early = self._early
        return early is not None and early[2] is result and early[0] == self._epoch

    def final(self, audio: np.ndarray, end_sample: int, language: str | None = None) -> Transcript:
        """The transcript of a finished utterance: the early result when nothing was said after
        its pause (end_sample >= 0 identifies it), otherwise a fresh transcription (blocks)."""
        early, self._early = self._early, None
        if early is not None and end_sample >= 0 and early[1] == end_sample:
            self.reused += 1
            return early[2]
        return self.transcriber.transcribe(audio, abort=self._closing, language=language)
