"""Audio files the user gives the app (`talk-llama transcribe`): decoded to what whisper takes,
16 kHz mono float32, or refused with a sentence that says what is wrong.

Any format libsndfile reads (WAV, FLAC, OGG/Vorbis/Opus, AIFF, ...), any channel count and any
plausible sample rate. A header's claims are not trusted: a sample rate of a few hertz would
make the resampler build hours of audio from a second of samples, and a float file may hold
NaN or infinite samples that whisper turns into garbage. Pure functions; any thread.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

RATE = 16000
# Rates a recording can really have: 1 kHz (below any telephone band) .. 1.536 MHz (the
# highest DXD/DSD-converted PCM); outside them the header is damaged.
MIN_RATE, MAX_RATE = 1000, 1_536_000


class AudioFileError(ValueError):
    """The file cannot be used as speech; the message says why, in a sentence."""


def read_audio(path: Path) -> np.ndarray:
    """Decode `path` to 16 kHz mono float32 in [-1, 1]. Raises AudioFileError."""
    import soundfile as sf
    import soxr

    try:
        info = sf.info(str(path))
        if not MIN_RATE <= info.samplerate <= MAX_RATE:
            raise AudioFileError(f"its header claims a sample rate of {info.samplerate} Hz (damaged?)")
        if not 0 < info.channels <= 64:
            raise AudioFileError(f"its header claims {info.channels} channels (damaged?)")
        data, sr = sf.read(str(path), dtype="float32", always_2d=True)
    except AudioFileError:
        raise
    except (sf.LibsndfileError, RuntimeError, ValueError, OSError, MemoryError) as exc:
        raise AudioFileError(_plain(exc)) from exc
    mono = data.mean(axis=1) if data.shape[1] > 1 else data[:, 0]
    if not np.isfinite(mono).all():  # a float file with NaN or infinite samples: silence them
        mono = np.nan_to_num(mono, nan=0.0, posinf=0.0, neginf=0.0)
    mono = np.clip(mono, -1.0, 1.0)
    if sr != RATE and len(mono):
        mono = soxr.resample(mono, sr, RATE)
    return np.ascontiguousarray(mono, dtype=np.float32)


def _plain(exc: BaseException) -> str:
    """libsndfile's reason without its 'Error opening <path>:' prefix."""
    text = str(exc).strip()
    head, sep, reason = text.partition(": ")
    return (reason if sep and head.startswith("Error opening") else text) or type(exc).__name__
