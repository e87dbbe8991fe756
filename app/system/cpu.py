"""How many threads to compute with on a shared desktop.

ggml's threads (llama.cpp, whisper.cpp) wait for each other at every operation: a thread that
has to share its core with another program holds all of them up. Measured here (2 cores, one
busy with another program): generation fell from 57 to 19 tokens/s with 2 threads, 38 with 1.
So the right count is the number of cores the rest of the machine leaves free, not the number
of cores.

`FreeCores.threads()` measures, since its previous call, how busy the whole machine was minus
this process's own work, and returns the cores left free (at least 1). A stage calls it before
each piece of work (a turn, a transcription) and hands the number to its library. An explicit
thread count from the user is a hard choice and bypasses it (`threads_for`).

Work known to run beside a stage counts too: while the audio turn model scores a pause
(`core_taken`, ~50 ms on one onnxruntime thread), or a server on this machine evaluates the turn
the words reader reads (brain/words_reader.py), the language model computes with one thread
fewer (`cores_taken`). Measured here beside the turn model: with 2 llama threads the model took
~127 ms (p50 of 5) and tokens 10-21 ms; with 1, ~62 ms and 12-15 ms.

Threads: one `FreeCores` per caller thread (its measurement window is its own); `core_taken`
and `cores_taken` from any thread. Below every stage: imports nothing from the app.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

import psutil

MIN_WINDOW_S = 0.25  # a shorter window is noise: the previous answer stands
_taken = 0  # cores this process's side work holds now (core_taken)
_taken_lock = threading.Lock()


class FreeCores:
    def __init__(self, cores: int | None = None) -> None:
        self.cores = cores or os.cpu_count() or 1
        self._me = psutil.Process()
        self._last = self._sample()
        self._answer = self.cores

    def _sample(self) -> tuple[float, float, float]:
        """(wall time, machine busy seconds, this process's seconds)."""
        t = psutil.cpu_times()
        busy = t.user + t.nice + t.system + getattr(t, "irq", 0.0) + getattr(t, "softirq", 0.0)
        own = self._me.cpu_times()
        return time.monotonic(), busy, own.user + own.system

    def others_busy(self) -> float:
        """Cores the rest of the machine kept busy since the previous call (0..cores)."""
        now = self._sample()
        wall = now[0] - self._last[0]
        if wall < MIN_WINDOW_S:
            return self.cores - self._answer
        others = max(0.0, (now[1] - self._last[1]) - (now[2] - self._last[2])) / wall
        self._last = now
        return min(float(self.cores), others)

    def threads(self) -> int:
        """Threads to use now: the cores left free, rounded, at least 1."""
        free = self.cores - self.others_busy()
        self._answer = max(1, min(self.cores, int(free + 0.5)))
        return self._answer


def threads_for(explicit: int | None, free: FreeCores) -> int:
    """The user's explicit count when given (a hard choice), else what the machine leaves free."""
    return explicit if explicit else free.threads()


@contextmanager
def core_taken() -> Iterator[None]:
    """Around a short piece of this process's own work that keeps one core busy: ggml stages
    that compute meanwhile use one thread fewer (`cores_taken`). Any thread; blocks nothing."""
    global _taken
    with _taken_lock:
        _taken += 1
    try:
        yield
    finally:
        with _taken_lock:
            _taken -= 1


def cores_taken() -> int:
    """Cores held by `core_taken` blocks right now."""
    return _taken
