"""Level monitor of the virtual speaker, in its own process, on the shared monotonic clock.

`python -m tests.support.monitor OUT.npy` records `speaker.monitor` (selected with PULSE_SOURCE)
in 5 ms blocks and, when terminated, saves rows of (time.monotonic() at the block, RMS). Tests
compare those times with monotonic stamps taken in the app (e.g. when stop() was called). The
capture path's own latency makes measured delays slightly longer than the real ones, never shorter.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np


def main(out: str) -> None:
    os.environ["PULSE_SOURCE"] = "speaker.monitor"
    import sounddevice as sd

    rows: list[tuple[float, float]] = []
    done = False

    def stop(*_):
        nonlocal done
        done = True

    signal.signal(signal.SIGTERM, stop)

    def cb(indata, frames, t, status):
        rows.append((time.monotonic(), float(np.sqrt(np.mean(indata[:, 0] ** 2)))))

    with sd.InputStream(
        device="pulse", channels=1, samplerate=16000, blocksize=80, latency="low", callback=cb
    ):
        Path(out + ".ready").touch()
        while not done:
            time.sleep(0.01)
    np.save(out, np.array(rows))


class Monitor:
    """Start/stop the monitor subprocess; `levels()` returns (times, rms) after stop()."""

    def __init__(self, out: Path) -> None:
        self.out = out
        self.proc = subprocess.Popen([sys.executable, "-m", "tests.support.monitor", str(out)])
        ready = Path(str(out) + ".ready")
        deadline = time.monotonic() + 10
        while not ready.exists():
            if time.monotonic() > deadline or self.proc.poll() is not None:
                raise RuntimeError("level monitor did not start")
            time.sleep(0.01)
        time.sleep(0.2)

    def stop(self) -> tuple[np.ndarray, np.ndarray]:
        self.proc.terminate()
        self.proc.wait(10)
        rows = np.load(str(self.out) + ".npy") if not str(self.out).endswith(".npy") else np.load(self.out)
        return rows[:, 0], rows[:, 1]


if __name__ == "__main__":
    main(sys.argv[1])
