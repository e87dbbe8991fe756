"""Where the interpreter stalls: every Python thread's stack at the moment one thread could not
run Python for longer than a threshold (a C call holding the GIL, or the CPU taken by others).

A probe thread re-arms `faulthandler.dump_traceback_later` every few milliseconds. When it cannot
run for `threshold` seconds, faulthandler's own C thread (which needs no GIL) writes every Python
thread's stack to the file; the thread that holds the GIL at that moment is the one marked
"Current thread". When the probe runs again it logs how late it was, so the n-th log line and
the n-th dump describe the same stall. The speaker's playback thread writes a 20 ms block at a
time into a ~50 ms buffer: a stall longer than the buffer is a hole in the speech.

Diagnostics for benchmarks (tests.support.monkey --stalls FILE); never used by the app.
"""

from __future__ import annotations

import faulthandler
import logging
import threading
import time
from pathlib import Path
from typing import IO

log = logging.getLogger("tests.support.stalls")


class StallWatch:
    """Started once per process (faulthandler has a single timer); stop() ends it. The probe
    thread is a daemon: it never keeps the process alive."""

    def __init__(self, path: Path, threshold: float = 0.045, period: float = 0.005) -> None:
        self.path, self.threshold, self.period = path, threshold, period
        self.stalls: list[tuple[float, float]] = []  # (wall time the probe ran again, seconds late)
        self._file: IO[str] | None = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="stall-probe", daemon=True)

    def start(self) -> StallWatch:
        self._file = open(self.path, "w")  # noqa: SIM115 - held until stop()
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()
        faulthandler.cancel_dump_traceback_later()
        if self._file is not None:
            self._file.close()

    def _run(self) -> None:
        assert self._file is not None
        last = time.monotonic()
        while not self._stop.is_set():
            faulthandler.dump_traceback_later(self.threshold, repeat=False, file=self._file)
            self._stop.wait(self.period)
            now = time.monotonic()
            late = now - last - self.period
            if late > self.threshold:
                self.stalls.append((time.time(), late))
                n = len(self.stalls)
                log.info("stall: the probe ran %.0f ms late (stacks: %s, #%d)", late * 1000, self.path, n)
            last = now
