"""A private PulseAudio server with virtual devices, for tests and benchmarks.

Devices: sink `speaker` (what the app plays; record it from `speaker.monitor`), sink `micfeed`
(play WAVs into it) and source `mic` (remapped from `micfeed.monitor`: what the app records).
`norewinds=1` keeps the first second of capture from being lost. PortAudio reaches the server
through ALSA's pulse plugin, so the environment must be set BEFORE sounddevice is imported.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

import numpy as np
import soundfile as sf

MODULES = """
load-module module-native-protocol-unix auth-anonymous=1 socket={socket}
load-module module-null-sink sink_name=speaker norewinds=1
load-module module-null-sink sink_name=micfeed norewinds=1 channels=1
load-module module-remap-source source_name=mic master=micfeed.monitor
set-default-sink speaker
set-default-source mic
"""


class VirtualAudio:
    """Start/stop the server; helpers to feed the mic and record the speaker."""

    def __init__(self) -> None:
        self.dir = Path(tempfile.mkdtemp(prefix="tl-pulse-"))
        self.socket = self.dir / "native"
        self.env = {
            "PULSE_SERVER": f"unix:{self.socket}",
            "PULSE_COOKIE": str(self.dir / "cookie"),
            "XDG_RUNTIME_DIR": str(self.dir),
            "PULSE_RUNTIME_PATH": str(self.dir),
        }
        self.proc: subprocess.Popen | None = None

    def start(self) -> VirtualAudio:
        if shutil.which("pulseaudio") is None:
            raise RuntimeError("pulseaudio is not installed (make test installs it)")
        (self.dir / "default.pa").write_text(MODULES.format(socket=self.socket))
        env = {**os.environ, **self.env, "HOME": str(self.dir)}
        log = open(self.dir / "pulse.log", "wb")  # noqa: SIM115 - the server writes it while it runs
        self.proc = subprocess.Popen(
            [
                "pulseaudio",
                "-n",
                "--daemonize=no",
                "--exit-idle-time=-1",
                "--disallow-exit",
                # No realtime threads: as root the server gets them, and on a loaded machine the
                # kernel kills it (SIGKILL at RLIMIT_RTTIME) mid-run, every device gone at once.
                "--realtime=no",
                "--high-priority=no",
                "--use-pid-file=no",
                "--system=no",
                "-F",
                str(self.dir / "default.pa"),
                "--log-target=stderr",
            ],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=log,
        )
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            if subprocess.run(["pactl", "info"], env=env, capture_output=True).returncode == 0:
                os.environ.update(self.env)
                return self
            if self.proc.poll() is not None:
                break
            time.sleep(0.05)
        raise RuntimeError(f"PulseAudio did not start: {(self.dir / 'pulse.log').read_text()[-2000:]}")

    def stop(self) -> None:
        if self.proc is not None:
            self.proc.terminate()
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
        shutil.rmtree(self.dir, ignore_errors=True)

    def pactl(self, *args: str) -> str:
        env = {**os.environ, **self.env}
        return subprocess.run(["pactl", *args], env=env, capture_output=True, text=True, check=True).stdout

    def unload_module(self, needle: str) -> str:
        """Unload the module whose arguments contain `needle` (e.g. "source_name=mic"): the
        device disappears as if unplugged. Returns what `load_module` needs to bring it back."""
        for line in self.pactl("list", "short", "modules").splitlines():
            index, name, args = ([*line.split("\t"), "", ""])[:3]
            if needle in args.split():
                self.pactl("unload-module", index)
                return f"{name} {args}".strip()
        raise RuntimeError(f"no module with {needle!r}")

    def load_module(self, spec: str) -> None:
        """Load a module again (`spec` from `unload_module`); the test server's defaults are the
        devices of MODULES again (a plugged-in device comes back as the default)."""
        self.pactl("load-module", *spec.split())
        present = self.pactl("list", "short", "sinks") + self.pactl("list", "short", "sources")
        names = {line.split("\t")[1] for line in present.splitlines() if "\t" in line}
        if "speaker" in names:  # another device may still be unplugged
            self.pactl("set-default-sink", "speaker")
        if "mic" in names:
            self.pactl("set-default-source", "mic")

    def play_into_mic(self, wav: Path) -> subprocess.Popen:
        """Start feeding a WAV file into the virtual microphone (returns the paplay process)."""
        return subprocess.Popen(["paplay", "--device=micfeed", str(wav)], env={**os.environ, **self.env})

    def play_on_speaker(self, wav: Path) -> subprocess.Popen:
        """Play a WAV on the virtual speaker (the desktop's own sounds, which its monitor hears)."""
        return subprocess.Popen(["paplay", "--device=speaker", str(wav)], env={**os.environ, **self.env})

    def record_speaker(self, out: Path) -> subprocess.Popen:
        """Start recording what is played on the virtual speaker (terminate() to stop)."""
        return subprocess.Popen(
            [
                "parecord",
                "--device=speaker.monitor",
                "--channels=1",
                "--rate=16000",
                "--format=s16le",
                "--file-format=wav",
                str(out),
            ],
            env={**os.environ, **self.env},
        )


def stop_recording(proc: subprocess.Popen, path: Path) -> tuple[np.ndarray, int]:
    proc.terminate()
    proc.wait(5)
    data, sr = sf.read(path, dtype="float32")
    return data, sr


def envelope(samples: np.ndarray, sr: int, win_s: float = 0.01) -> np.ndarray:
    """RMS per window: used to find where sound starts and stops in a recording."""
    win = max(1, int(sr * win_s))
    n = len(samples) // win
    if n == 0:
        return np.zeros(0)
    return np.sqrt(np.mean(samples[: n * win].reshape(n, win) ** 2, axis=1))
