"""How the voice ends: the pitch of the last words against where the speaker's statements end.

Words alone cannot tell "What should I cook" from "What should I cook … for dinner": both are
complete sentences to a language model. The voice can: a speaker who has finished a statement
lets the pitch fall to where their statements land (final lowering), one who pauses to think
holds it level above that (a continuation contour). Rising questions also end high; the words
rule reads those as finished (loop/turn_end.py combines the two).

- `pitch(audio)`: fundamental frequency per 10 ms frame (YIN: de Cheveigné & Kawahara 2002;
  0 = unvoiced). ~2–4 ms per second of audio with numpy FFTs. Written here rather than taken from
  librosa (`librosa.yin`): for this one function librosa would bring numba and llvmlite (tens
  of MB, JIT-compiled code) into the packaged app and onto the path of every pause.
- `FinalPitch`: where one speaker's finished statements end (the median of their last pitches);
  `ending(audio)`: the pitch of the last voiced frames over it (~1 or below: fallen; clearly
  above: held up), None until two ends are known.

Threads: pure functions; a `FinalPitch` belongs to one thread (the stt thread).
"""

from __future__ import annotations

from collections import deque

import numpy as np

SR = 16000
HOP = 160  # 10 ms
LAG_MIN, LAG_MAX = SR // 400, SR // 60  # 400 Hz .. 60 Hz
WIN = 272  # integration window (17 ms); a frame is WIN + LAG_MAX samples
THRESHOLD = 0.15  # YIN's absolute threshold on the normalised difference
MIN_RMS = 0.005  # frames quieter than this (about -46 dBFS) are not judged
RELATIVE_RMS = 0.1  # nor frames 20 dB below the loudest of the audio (a hum between words)


def pitch(audio: np.ndarray) -> np.ndarray:
    """F0 in Hz of each 10 ms frame of 16 kHz mono `audio` (0 where unvoiced, or too quiet:
    below MIN_RMS or 20 dB below the loudest frame, so steady noise after the last word is not
    taken for the voice)."""
    x = np.asarray(audio, np.float32)
    size = WIN + LAG_MAX
    n = (len(x) - size) // HOP + 1
    if n <= 0:
        return np.zeros(0, np.float32)
    frames = np.lib.stride_tricks.sliding_window_view(x, size)[::HOP][:n].astype(np.float64)
    frames -= frames.mean(axis=1, keepdims=True)
    rms = np.sqrt((frames[:, :WIN] ** 2).mean(axis=1))
    # d(tau) = sum (x[j] - x[j+tau])^2 over j < WIN, for all tau at once: energies + cross terms
    nfft = 1 << (2 * size - 1).bit_length()
    head = np.fft.rfft(frames[:, :WIN], nfft)
    whole = np.fft.rfft(frames, nfft)
    cross = np.fft.irfft(np.conj(head) * whole, nfft)[:, : LAG_MAX + 1]
    sq = np.concatenate([np.zeros((n, 1)), np.cumsum(frames**2, axis=1)], axis=1)
    lags = np.arange(LAG_MAX + 1)
    energy = sq[:, lags + WIN] - sq[:, lags]
    d = energy[:, :1] + energy - 2 * cross
    d[:, 0] = 0
    # cumulative mean normalised difference
    cmnd = np.ones_like(d)
    mean = np.cumsum(d[:, 1:], axis=1) / lags[1:]
    cmnd[:, 1:] = d[:, 1:] / np.maximum(mean, 1e-12)
    out = np.zeros(n, np.float32)
    for i in np.nonzero(rms >= max(MIN_RMS, RELATIVE_RMS * rms.max()))[0]:
        row = cmnd[i]
        below = np.nonzero(row[LAG_MIN:] < THRESHOLD)[0]
        if not len(below):
            continue
        t = LAG_MIN + below[0]
        while t + 1 <= LAG_MAX and row[t + 1] < row[t]:
            t += 1
        if 0 < t < LAG_MAX:  # parabolic interpolation of the dip
            a, b, c = row[t - 1], row[t], row[t + 1]
            den = a - 2 * b + c
            shift = 0.5 * (a - c) / den if den > 0 else 0.0
        else:
            shift = 0.0
        out[i] = SR / (t + shift)
    return out


def last_pitch(audio: np.ndarray, frames: int = 8, within_s: float = 2.0) -> float | None:
    """The median F0 of the last `frames` voiced frames in the last `within_s` of `audio` (None
    with fewer than half of them voiced there)."""
    f0 = pitch(audio[-int(SR * within_s) :])
    voiced = f0[f0 > 0]
    if len(voiced) < max(3, frames // 2):
        return None
    return float(np.median(voiced[-frames:]))


class FinalPitch:
    """Where one speaker's voice lands when a statement has finished, and how a pause compares.

    `learn` takes an utterance that was heard as words (its end is a real end: the speaker
    stopped there); questions (`?`) are left out, since they may end rising. `ending` divides
    the pitch at the end of audio heard so far by the reference, the median of the last `keep`
    learnt ends: ~1, fallen as a finished statement; clearly above (`TurnEndConfig.hold_at`),
    held up. None until `min_ends` ends are known."""

    def __init__(self, keep: int = 20, min_ends: int = 2) -> None:
        self.min_ends = min_ends
        self._ends: deque[float] = deque(maxlen=keep)

    def learn(self, audio: np.ndarray, words: str) -> None:
        if not words.rstrip().endswith("?") and (f0 := last_pitch(audio)) is not None:
            self._ends.append(f0)

    @property
    def reference(self) -> float | None:
        """Hz, or None while too few ends are known."""
        return float(np.median(self._ends)) if len(self._ends) >= self.min_ends else None

    def ending(self, audio: np.ndarray) -> float | None:
        """The pitch at the end of `audio` (heard at a pause: the voice is in its last 0.6 s)
        over the reference; None if either is unknown."""
        if (ref := self.reference) is None or (f0 := last_pitch(audio, within_s=0.6)) is None:
            return None
        return f0 / ref
