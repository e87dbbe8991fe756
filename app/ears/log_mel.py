"""Whisper's log-mel spectrogram in numpy: what audio models trained on whisper's features read
(the Smart Turn turn model: turn_model.py).

The recipe is whisper's (its paper and `whisper/audio.py`): 16 kHz audio, 25 ms periodic-Hann
frames every 10 ms (centred: the signal reflected by half a frame at both ends), the power
spectrum through 80 Slaney-scale mel filters (area-normalised, 0–8 kHz), log10 with a floor,
everything more than 8 (80 dB) below the loudest bin raised to it, then (x + 4) / 4; the last
frame is dropped (N samples give N / 160 frames). Written here rather than taken from
`transformers` or `librosa`: those pull in hundreds of MB for ~40 lines of arithmetic.

Pure functions; the filterbank is built once (lazily) and shared. Any thread.
"""

from __future__ import annotations

import functools

import numpy as np

RATE = 16000
N_FFT = 400  # 25 ms
HOP = 160  # 10 ms
N_MELS = 80


def _hz_to_mel(hz: np.ndarray) -> np.ndarray:
    """Slaney's mel scale: linear (3 mels per 200 Hz) below 1 kHz, logarithmic above."""
    hz = np.asarray(hz, dtype=np.float64)
    linear = hz * 3.0 / 200.0
    step = np.log(6.4) / 27.0
    return np.where(hz < 1000.0, linear, 15.0 + np.log(np.maximum(hz, 1e-9) / 1000.0) / step)


def _mel_to_hz(mel: np.ndarray) -> np.ndarray:
    mel = np.asarray(mel, dtype=np.float64)
    step = np.log(6.4) / 27.0
    return np.where(mel < 15.0, mel * 200.0 / 3.0, 1000.0 * np.exp(step * (mel - 15.0)))


@functools.cache
def mel_filters() -> np.ndarray:
    """(N_MELS, N_FFT // 2 + 1): triangles evenly spaced in mels over 0–8 kHz, each scaled to
    unit area in Hz (Slaney's normalisation)."""
    edges = _mel_to_hz(np.linspace(_hz_to_mel(np.array(0.0)), _hz_to_mel(np.array(RATE / 2)), N_MELS + 2))
    bins = np.linspace(0.0, RATE / 2, N_FFT // 2 + 1)
    lower, centre, upper = edges[:-2, None], edges[1:-1, None], edges[2:, None]
    rising = (bins[None, :] - lower) / (centre - lower)
    falling = (upper - bins[None, :]) / (upper - centre)
    triangles = np.maximum(0.0, np.minimum(rising, falling))
    return triangles * (2.0 / (upper - lower))


@functools.cache
def _window() -> np.ndarray:
    n = np.arange(N_FFT)
    return 0.5 - 0.5 * np.cos(2.0 * np.pi * n / N_FFT)  # periodic Hann


def log_mel(audio: np.ndarray) -> np.ndarray:
    """(N_MELS, len(audio) // HOP) float32 features of 16 kHz mono `audio` (len >= N_FFT // 2 + 1)."""
    x = np.asarray(audio, dtype=np.float64)
    padded = np.pad(x, N_FFT // 2, mode="reflect")
    frames = np.lib.stride_tricks.sliding_window_view(padded, N_FFT)[::HOP]
    power = np.abs(np.fft.rfft(frames * _window(), axis=1)) ** 2  # (frames, bins)
    mel = np.log10(np.maximum(power @ mel_filters().T, 1e-10)).T[:, :-1]
    mel = np.maximum(mel, mel.max() - 8.0)
    return ((mel + 4.0) / 4.0).astype(np.float32)
