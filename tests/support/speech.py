"""Speech made for tests and benchmarks with the espeak-ng command (not the app's TTS): clips,
sentences with a thinking pause in them, and cuts of clips at their pauses. 16 kHz float32."""

from __future__ import annotations

import subprocess
import tempfile
from pathlib import Path

import numpy as np
import soundfile as sf
import soxr


def espeak_command(text: str, out: Path | str, voice: str = "en-us", wpm: int = 140) -> list[str]:
    """The espeak-ng command line that writes `text` (plain, or SSML from "<speak>") to `out`."""
    ssml = ["-m"] if text.lstrip().startswith("<speak>") else []
    return ["espeak-ng", "-v", voice, "-s", str(wpm), *ssml, "-w", str(out), text]


def spoken_through(head: str, tail: str, pause_s: float) -> str:
    """SSML for one sentence with a thinking pause after `head`: the voice stays up at the pause,
    as a speaker's does mid-sentence (speaking the head alone ends it like a finished sentence)."""
    return f"<speak>{head} <break time='{round(pause_s * 1000)}ms'/> {tail}</speak>"


def until_quiet(x: np.ndarray, keep_s: float = 0.0) -> np.ndarray:
    """`x` up to its last sound (|x| > 0.01: espeak's trailing silence off), plus `keep_s` more."""
    loud = np.nonzero(np.abs(x) > 0.01)[0]
    return x[: loud[-1] + 1 + int(keep_s * 16000)] if len(loud) else x


def before_pause(x: np.ndarray, pause_s: float, keep_s: float = 0.02) -> np.ndarray:
    """16 kHz `x` up to its first silence of most of `pause_s`, plus `keep_s` of it (what the stt
    thread has at that pause)."""
    loud = np.nonzero(np.abs(x) > 0.01)[0]
    gap = np.nonzero(np.diff(loud) > int(pause_s * 16000 * 0.8))[0][0]
    return x[: loud[gap] + 1 + int(keep_s * 16000)]


def speak_16k(text: str, voice: str = "en-us", wpm: int = 140) -> np.ndarray:
    """espeak-ng speech for `text` as 16 kHz float32 (the espeak-ng command, not the app's TTS)."""
    with tempfile.NamedTemporaryFile(suffix=".wav") as f:
        subprocess.run(espeak_command(text, f.name, voice, wpm), check=True)
        data, sr = sf.read(f.name, dtype="float32")
    return soxr.resample(data, sr, 16000).astype(np.float32)
