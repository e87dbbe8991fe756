"""Echo guard for hands-free mode: the assistant must not hear itself as a user turn.

While the assistant speaks, the microphone also picks up its voice (speakers, or a loopback in
tests). `EchoGuard` learns how loud that echo is relative to what is being played (the coupling)
and, during playback, judges a microphone block to be the user talking over the assistant only
when it is clearly louder than the expected echo. Sustained user speech (`barge_ms`) is a barge-in.
Outside playback and its short tail (`tail_ms`, room reverberation), the microphone is not gated.

Thread-safety: `note_output` is called from the speaker's thread, `mic_block` from the audio
callback thread; both only assign floats.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np


@dataclass
class EchoConfig:
    margin_db: float = 10.0  # user speech must exceed the expected echo by this much
    barge_ms: int = 300  # this much over-echo speech during playback is a barge-in
    tail_ms: int = 350  # the gate stays closed this long after playback ends
    min_user_rms: float = 0.01


class EchoGuard:
    def __init__(self, config: EchoConfig | None = None) -> None:
        self.config = config or EchoConfig()
        self.coupling = 1.0  # mic_rms / output_rms; starts pessimistic (loud echo)
        self._out_rms = 0.0
        self._playing_until = 0.0
        self._over_ms = 0.0

    def note_output(self, rms: float, duration_s: float) -> None:
        """The speaker is playing a block of this RMS for `duration_s` from now."""
        self._out_rms = rms
        self._playing_until = time.monotonic() + duration_s + self.config.tail_ms / 1000

    def playback_stopped(self) -> None:
        self._playing_until = time.monotonic() + self.config.tail_ms / 1000
        self._out_rms = 0.0

    @property
    def gated(self) -> bool:
        return time.monotonic() < self._playing_until

    def mic_block(self, block: np.ndarray) -> tuple[bool, bool]:
        """Judge one microphone block: (pass it to the segmenter?, is this a barge-in?)."""
        if not self.gated:
            self._over_ms = 0.0
            return True, False
        rms = float(np.sqrt(np.mean(block.astype(np.float64) ** 2)))
        expected = self.coupling * self._out_rms
        if self._out_rms > 1e-4 and rms > 1e-6:
            # learn the coupling from blocks that look like pure echo (slowly, and downwards fast)
            ratio = rms / self._out_rms
            self.coupling += (0.3 if ratio < self.coupling else 0.01) * (ratio - self.coupling)
        loud = rms > max(self.config.min_user_rms, expected * 10 ** (self.config.margin_db / 20))
        self._over_ms = self._over_ms + 1000 * len(block) / 16000 if loud else 0.0
        barge = self._over_ms >= self.config.barge_ms
        if barge:
            self._over_ms = 0.0
        return False, barge
