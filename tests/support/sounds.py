"""Background sounds for tests and benchmarks: silence, coloured noise, mains hum, typing,
music-like tones and a room's babble, each at a desk's level."""

from __future__ import annotations

import numpy as np

RATE = 16000


def noise(kind: str, seconds: float, rng: np.random.Generator) -> np.ndarray:
    """Background sound of `kind`, RMS -30 dBFS (silence: -70 dBFS)."""
    n = int(seconds * RATE)
    t = np.arange(n) / RATE
    if kind == "silence":
        x = rng.standard_normal(n) * 1e-4
    elif kind in ("white", "pink", "brown"):
        spectrum = np.fft.rfft(rng.standard_normal(n))
        f = np.maximum(np.fft.rfftfreq(n, 1 / RATE), 1.0)
        spectrum /= {"white": 1.0, "pink": np.sqrt(f), "brown": f}[kind]
        x = np.fft.irfft(spectrum, n)
    elif kind == "hum":
        x = sum(np.sin(2 * np.pi * 50 * k * t) / k for k in range(1, 8))
    elif kind == "keyboard":
        x = np.zeros(n)
        for at in np.cumsum(rng.exponential(RATE / 7, size=int(seconds * 10))).astype(int):
            if at + 400 < n:
                x[at : at + 400] += rng.standard_normal(400) * np.exp(-np.arange(400) / 60)
    elif kind == "music":
        x = np.zeros(n)
        notes = (220.0, 261.6, 329.6, 392.0, 440.0, 523.3)
        for start in range(0, n, RATE // 2):
            chord = rng.choice(notes, 3, replace=False)
            seg = t[start : start + RATE // 2]
            vibrato = 1 + 0.004 * np.sin(2 * np.pi * 5 * seg)
            x[start : start + RATE // 2] = sum(np.sin(2 * np.pi * f0 * seg * vibrato) for f0 in chord)
    else:
        raise ValueError(kind)
    x = np.asarray(x, np.float64)
    level_db = -70 if kind == "silence" else -30
    return (x / (np.sqrt(np.mean(x**2)) + 1e-12) * 10 ** (level_db / 20)).astype(np.float32)
