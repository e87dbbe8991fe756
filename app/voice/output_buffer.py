"""How much sound the output stream holds ahead of the device: PortAudio's suggested latency,
grown after a hole and shrunk back once playback has been calm.

50 ms (the default) never ran dry in `bench/underruns --load app` with one other core busy, but a
desktop can be busier than that: the window's monkey, with benchmarks running beside it, heard
holes inside sentences with 50 ms. A hole is heard; 50 ms more before the first word is not. So
each hole inside a sentence doubles the buffer of the next stream (they are opened per reply;
the one playing is not reopened, which would cut its sound), up to `most`; after `calm`
sentences played without a hole it halves again, never below the configured size. A stop stays
immediate whatever the size (the stream is aborted with its buffer), and the echo guard reads
each stream's own latency.

Used by one Speaker's playback thread at a time (a voice change makes a new Speaker, which takes
the same device's buffer: `for_device`).
"""

from __future__ import annotations

import logging
import threading
from typing import ClassVar

log = logging.getLogger(__name__)
LOW_S = 0.01  # what "low" (the device's lowest) is taken as when it has to grow


class OutputBuffer:
    _shared: ClassVar[dict[tuple[object, float | str, float], OutputBuffer]] = {}
    _shared_lock = threading.Lock()

    @classmethod
    def for_device(cls, device: object, configured: float | str, most: float = 0.2) -> OutputBuffer:
        """The buffer of `device` at the `configured` size, shared by the Speakers that play on
        it one after another (a new voice inherits what the machine's load taught the last)."""
        with cls._shared_lock:
            return cls._shared.setdefault((device, configured, most), cls(configured, most))

    def __init__(self, configured: float | str, most: float = 0.2, calm: int = 30) -> None:
        self.configured, self.most, self.calm = configured, most, calm
        self._grown: float | None = None  # None: the configured size
        self._calm_sentences = 0

    @property
    def latency(self) -> float | str:
        """What the next stream asks PortAudio for."""
        return self.configured if self._grown is None else self._grown

    def _base_s(self) -> float:
        return self.configured if isinstance(self.configured, float | int) else LOW_S

    def hole(self) -> None:
        """A hole inside a sentence: the next stream holds twice as much (at most `most`)."""
        self._calm_sentences = 0
        now = self._base_s() if self._grown is None else self._grown
        grown = min(self.most, now * 2)
        if grown > now:
            self._grown = grown
            log.info("output buffer for the next reply: %.0f ms (a hole inside a sentence)", grown * 1000)

    def sentence_played(self) -> None:
        """A whole sentence played without a hole; after `calm` of them the buffer halves."""
        if self._grown is None:
            return
        self._calm_sentences += 1
        if self._calm_sentences >= self.calm:
            self._calm_sentences = 0
            half = self._grown / 2
            self._grown = None if half <= self._base_s() else half
            size_ms = max(half, self._base_s()) * 1000
            log.info("output buffer for the next reply: %.0f ms (calm again)", size_ms)
