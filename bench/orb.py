"""The voice orb's animation: frames per second while the assistant speaks, and the GUI thread's
CPU time per frame, on a quiet machine and with one core kept busy by another program. Baseline in
the same run: the same window idle (no state that moves; after a second to settle), whose frame
count should be zero.

Offscreen Qt, the real MainWindow without an assistant; output levels arrive from a thread 25
times a second as the Speaker's would (a 2 Hz syllable rhythm), through the bridge's queued signal.
Target: >= 30 frames a second while speaking (issue #16).
Run: .venv/bin/python -m bench.orb [--seconds 3]
"""

from __future__ import annotations

import argparse
import math
import os
import subprocess
import tempfile
import threading
import time

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from bench.common import emit


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=3.0)
    args = ap.parse_args()
    os.environ.setdefault("TALK_LLAMA_HOME", tempfile.mkdtemp(prefix="bench-orb-"))
    from PySide6.QtWidgets import QApplication

    from app.gui.main_window import MainWindow
    from app.loop.events import OutputLevel, State, StateChanged
    from app.loop.settings import AppSettings

    app = QApplication([])
    w = MainWindow(AppSettings())
    w.show()
    app.processEvents()

    def run(state: State, seconds: float) -> tuple[float, float]:
        """(frames a second, GUI-thread CPU ms per frame) with the window in `state`."""
        stop = threading.Event()

        def levels() -> None:
            t0 = time.monotonic()
            while not stop.wait(0.04):
                rms = 0.02 + 0.1 * abs(math.sin(2 * math.pi * (time.monotonic() - t0)))
                w.bridge._forward(OutputLevel(rms))

        w.bridge._forward(StateChanged(state))
        settle = time.monotonic()
        while time.monotonic() - settle < 1.0:  # a moving level eases out, then stops
            app.processEvents()
            time.sleep(0.002)
        feeder = threading.Thread(target=levels, daemon=True)
        feeder.start()
        frames0, cpu0, t0 = w.ptt.frames, time.thread_time(), time.monotonic()
        while time.monotonic() - t0 < seconds:
            app.processEvents()
            time.sleep(0.002)
        frames = w.ptt.frames - frames0
        cpu = (time.thread_time() - cpu0) * 1000
        stop.set()
        feeder.join()
        return frames / (time.monotonic() - t0), cpu / max(frames, 1)

    out: dict[str, float] = {}
    for condition in ("quiet", "busy"):
        hog = subprocess.Popen(["sh", "-c", "while :; do :; done"]) if condition == "busy" else None
        try:
            fps, ms = run(State.SPEAKING, args.seconds)
            idle_fps, _ = run(State.IDLE, 1.0)
        finally:
            if hog is not None:
                hog.kill()
        out[f"{condition}_fps"] = round(fps, 1)
        out[f"{condition}_gui_ms_per_frame"] = round(ms, 2)
        out[f"{condition}_idle_fps"] = round(idle_fps, 1)
    w.close()
    emit("orb", out)


if __name__ == "__main__":
    main()
