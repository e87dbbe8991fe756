"""Voices for benchmarks: espeak-ng voices always, and the app's natural voice (Piper's
en_US-joe-medium, the catalog's `joe`) when it is fetched (natural voices sound like people; a
rule tuned on espeak alone is tuned on one synthesizer)."""

from __future__ import annotations

import functools
import logging

import numpy as np
import soxr

from bench.common import speak_16k, spoken_through, until_quiet

log = logging.getLogger(__name__)
ESPEAK = ("en-us", "en-gb", "en-gb-scotland", "en-us+f3")
PIPER = "piper:joe"


@functools.cache
def _piper():
    from app.catalog import catalog
    from app.voice.natural_voice import NaturalSynthesizer

    path = catalog.default_model_path("voice")
    catalog.check_file(path, "voice")
    return NaturalSynthesizer.get(path)


def available() -> list[str]:
    """The voices this machine can speak with: espeak-ng's, and the natural one when fetched."""
    try:
        _piper()
    except Exception as exc:  # not fetched (`talk-llama models fetch joe`), or it cannot load
        log.warning("no natural voice (%s): espeak-ng voices only", exc)
        return list(ESPEAK)
    return [*ESPEAK, PIPER]


def speak(text: str, voice: str, wpm: int = 150) -> np.ndarray:
    """`text` spoken by `voice` as 16 kHz mono float32."""
    if voice != PIPER:
        return speak_16k(text, voice, wpm)
    speech = _piper().render(text)
    return soxr.resample(speech.pcm, speech.sample_rate, 16000).astype(np.float32)


def said_through(head: str, tail: str, pause_s: float, voice: str) -> np.ndarray:
    """One sentence with a thinking pause of `pause_s` after `head`: the voice stays up at it, as
    a speaker's does mid-sentence (espeak-ng: an SSML break; the natural voice: the sentence
    rendered whole and opened where the tail's first word starts)."""
    if voice != PIPER:
        return speak_16k(spoken_through(head, tail, pause_s), voice)
    speech = _piper().render(f"{head} {tail}")
    x = soxr.resample(speech.pcm, speech.sample_rate, 16000).astype(np.float32)
    cut = speech.words[len(head.split())][1] * 16000 // speech.sample_rate
    gap = np.zeros(int(16000 * pause_s), np.float32)
    return np.concatenate([until_quiet(x[:cut]), gap, x[cut:]])


def said_apart(head: str, tail: str, pause_s: float, voice: str, wpm: int = 150) -> np.ndarray:
    """`head` said alone (it ends like a finished sentence), `pause_s` of silence, then `tail`."""
    gap = np.zeros(int(16000 * pause_s), np.float32)
    return np.concatenate([until_quiet(speak(head, voice, wpm)), gap, speak(tail, voice, wpm)])
