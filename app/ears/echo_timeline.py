"""What the speaker played, on the microphone's sample clock (the echo guard's reference).

`PlayedTimeline` keeps the last seconds of played audio at 16 kHz, indexed so that a microphone
sample and the played sample heard at the same instant share an index (see the class). Threads:
`append`/`truncate` from the speaker's playback thread, `heard` from the microphone callback,
`read`/`now` from the microphone path; the ring is guarded by `lock`.
"""

from __future__ import annotations

import threading
import time
from collections import deque

import numpy as np
import soxr

from app.ears.vad import RATE

RESTART_GAP = RATE // 20  # 50 ms: later than this behind now, playback had stopped


class PlayedTimeline:
    """The played audio at 16 kHz on the microphone's sample clock: a microphone sample's index
    is its count (from the first block's arrival); `now` runs on from the count at the pace of
    the monotonic clock (`heard`); the monotonic clock alone until the microphone delivers.

    Why the microphone's count and not the monotonic clock: the canceller needs the echo's delay
    fixed, and a speaker and a microphone on one sound card share a clock, while the callback's
    timing does not: labelling microphone blocks by when they arrived moved the echo's delay by
    tens of ms within a reply (the virtual microphone's blocks wander and drift ~2 ms a second
    against the monotonic clock), and speexdsp removed ~1 dB of a pure loopback."""

    def __init__(self, seconds: float = 4.0) -> None:
        self.t0 = time.monotonic()
        self.ring = np.zeros(int(seconds * RATE), dtype=np.float32)
        self.head = 0  # one past the last written sample
        self.lock = threading.Lock()
        self._resampler: soxr.ResampleStream | None = None
        self._rate = 0
        self._count: int | None = None  # the microphone's samples so far, as timeline index
        self._lateness: deque[float] = deque(maxlen=50)  # arrival - count, last 2 s of blocks
        self._offset = self.t0  # monotonic time of timeline index 0

    def now(self) -> int:
        return int((time.monotonic() - self._offset) * RATE)

    def heard(self, n: int) -> int:
        """The microphone delivered `n` more samples (callback thread): the index one past them.
        `now` follows the count at the pace of the monotonic clock, from the earliest recent
        arrival (the lower envelope of the last 2 s: blocks arrive late and in bursts, never
        early): every sample is labelled at or after its capture, so its echo comes after its
        reference (the canceller is causal), and a reply starts at the same place relative to
        the count whatever the last block's jitter."""
        at = time.monotonic()
        self._count = int((at - self._offset) * RATE) if self._count is None else self._count + n
        self._lateness.append(at - self._count / RATE)
        self._offset = min(self._lateness)
        return self._count

    def append(self, samples: np.ndarray, rate: int) -> bool:
        """Place the samples the speaker writes next; True when they start after a gap."""
        if rate != RATE:
            if self._resampler is None or self._rate != rate:
                self._resampler, self._rate = soxr.ResampleStream(rate, RATE, 1, dtype="float32"), rate
            samples = self._resampler.resample_chunk(samples.astype(np.float32))
        with self.lock:
            now = self.now()
            # The speaker writes at the pace of the device, so `head` stays within a few ms of
            # now; only a real gap (playback had stopped or ran dry) restarts it at now.
            restart = self.head < now - RESTART_GAP
            if restart:
                self._zero(self.head, now)
                self.head = now
            self._put(self.head, samples)
            self.head += len(samples)
            return restart

    def truncate(self) -> None:
        """Playback was cut: what was queued beyond now will never be heard."""
        with self.lock:
            now = self.now()
            if self.head > now:
                self._zero(now, self.head)
                self.head = now
            self._resampler = None

    def read(self, start: int, end: int) -> np.ndarray:
        with self.lock:
            cap = len(self.ring)
            out = np.zeros(end - start, dtype=np.float32)
            lo, hi = max(start, self.head - cap), min(end, self.head)
            if hi > lo:
                out[lo - start : hi - start] = self.ring[np.arange(lo, hi) % cap]
            return out

    def _put(self, start: int, samples: np.ndarray) -> None:
        cap = len(self.ring)
        samples = samples[-cap:]
        self.ring[np.arange(start, start + len(samples)) % cap] = samples

    def _zero(self, start: int, end: int) -> None:
        self._put(start, np.zeros(min(end - start, len(self.ring)), dtype=np.float32))
