"""Helpers shared by the benchmarks: synthesized speech, WER, percentiles, result output."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import soundfile as sf
import soxr

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


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


def words(text: str) -> list[str]:
    text = text.lower().replace("10", "ten")
    return re.findall(r"[a-z']+", text)


def wer(ref: str, hyp: str) -> tuple[int, int]:
    """(word edits, reference words) by Levenshtein distance over words."""
    r, h = words(ref), words(hyp)
    d = np.arange(len(h) + 1)
    for i in range(1, len(r) + 1):
        prev, d[0] = d.copy(), i
        for j in range(1, len(h) + 1):
            d[j] = min(prev[j] + 1, d[j - 1] + 1, prev[j - 1] + (r[i - 1] != h[j - 1]))
    return int(d[len(h)]), len(r)


def pct(values: list[float], q: float) -> float:
    return float(np.percentile(values, q)) if values else float("nan")


def emit(name: str, result: dict) -> None:
    """Print the machine-readable result line and keep a copy under bench/results/."""
    out = ROOT / "bench" / "results"
    out.mkdir(exist_ok=True)
    (out / f"{name}.json").write_text(json.dumps(result, indent=1))
    print(json.dumps(result))
