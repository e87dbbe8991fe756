"""Idle footprint: CPU (% of one core) and resident memory of the app doing nothing.

Modes, each a real `talk-llama` process on the default models and the virtual audio devices,
with faint noise (-50 dBFS, like a quiet room) playing into the microphone the whole time:
- `window`: the window (push-to-talk, level meter visible), Qt offscreen;
- `window-minimized`: the same, started with `--minimized`;
- `chat`: the hands-free terminal assistant (`talk-llama chat`).
Each process is measured over `--seconds` (default 30) once both models are loaded (the log
file says so) and a few seconds have passed. Targets (issue #18): window <= 2%, minimized
<= 1%, hands-free terminal <= 3%.
Run: .venv/bin/python -m bench.idle [--seconds 30] [--modes window,window-minimized,chat]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import psutil
import soundfile as sf

from bench.common import ROOT, emit
from tests.support.pulse import VirtualAudio

COMMANDS = {
    "window": [],
    "window-minimized": ["--minimized"],
    "chat": ["chat"],
}


def noise_wav(path: Path, seconds: float, dbfs: float = -50.0) -> Path:
    rng = np.random.default_rng(0)
    noise = rng.standard_normal(int(16000 * seconds)).astype(np.float32) * 10 ** (dbfs / 20)
    sf.write(path, noise, 16000, subtype="PCM_16")
    return path


def wait_ready(log_file: Path, proc: subprocess.Popen, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        text = log_file.read_text(errors="replace") if log_file.exists() else ""
        if "speech recognition ready" in text and "language model ready" in text:
            return
        if proc.poll() is not None:
            raise RuntimeError(f"the app exited early ({proc.returncode})")
        time.sleep(0.2)
    raise TimeoutError("models did not load")


def measure(mode: str, audio: VirtualAudio, seconds: float, settle: float) -> dict:
    with tempfile.TemporaryDirectory(prefix="tl-idle-") as tmp:
        env = {**os.environ, **audio.env, "TALK_LLAMA_CONFIG": tmp, "QT_QPA_PLATFORM": "offscreen"}
        proc = subprocess.Popen(
            [sys.executable, "-m", "app", *COMMANDS[mode]],
            env=env,
            cwd=ROOT,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            wait_ready(Path(tmp) / "state" / "talk-llama.log", proc)
            time.sleep(settle)
            ps = psutil.Process(proc.pid)
            c0, t0 = ps.cpu_times(), time.monotonic()
            time.sleep(seconds)
            c1, t1 = ps.cpu_times(), time.monotonic()
            cpu = (c1.user + c1.system - c0.user - c0.system) / (t1 - t0) * 100
            rss = ps.memory_info().rss / 2**20
        finally:
            proc.terminate()
            proc.wait(30)
    return {"cpu_percent": round(cpu, 2), "rss_mb": round(rss, 1)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seconds", type=float, default=30)
    ap.add_argument("--settle", type=float, default=5)
    ap.add_argument("--modes", default=",".join(COMMANDS))
    args = ap.parse_args()
    audio = VirtualAudio().start()
    result: dict = {"bench": "idle", "seconds": args.seconds, "modes": {}}
    try:
        with tempfile.TemporaryDirectory() as tmp:
            feed = audio.play_into_mic(noise_wav(Path(tmp) / "noise.wav", 3600))
            try:
                for mode in args.modes.split(","):
                    result["modes"][mode] = measure(mode, audio, args.seconds, args.settle)
                    print(f"# {mode}: {result['modes'][mode]}", flush=True)
            finally:
                feed.terminate()
    finally:
        audio.stop()
    emit("idle", result)


if __name__ == "__main__":
    main()
