"""When whisper's first decode of an utterance is not to be trusted, and where to cut it for a
second: a decode that went wrong (symbols and no word, a loop, more words than the speech holds),
or one that dropped the words before a pause (fewer syllables than the speech holds: whisper
tiny gave "10 minutes." for "Set a timer for [500 ms] 10 minutes.", every time on that clip).
Pure functions; any thread. transcriber.py decodes again."""

from __future__ import annotations

import re

import numpy as np

from app.ears.hallucinations import overlong, syllables
from app.ears.transcript_text import ANNOTATION

# Whole transcripts of clear speech measured 3.7 syllables per second of speech and more (VAD frames,
# 184 clips: four voices, commands and paused utterances); the two that dropped a head, 2.9-3.3.
DROPPED_BELOW = 3.5  # syllables per second of speech
MIN_CUT_PAUSE_FRAMES = 15  # 300 ms: a pause between phrases, not between words
MORE_SYLLABLES = 1.5  # a cut decode is taken when it holds this many times the syllables


def went_wrong(raw_text: str, looped: bool, text: str, speech_ms: int) -> bool:
    """whisper's decode failed, rather than the audio holding no words: it wrote symbols and no
    word (a loop of quote marks: `" " " "`), looped, or wrote more than the speech can hold.
    `text` is what cleaning and `unloop` kept of `raw_text`. Decoding again differently can
    recover the words (the same audio decoded again the same way fails the same way)."""
    symbols_only = bool(ANNOTATION.sub(" ", raw_text).strip()) and not re.search(r"\w", raw_text)
    return symbols_only or looped or overlong(text, speech_ms)


def dropped_words(text: str, speech_ms: int) -> bool:
    """Fewer syllables than `speech_ms` of speech holds: whisper left words out (Latin script
    only; other scripts are never judged)."""
    n = syllables(text)
    return n is not None and speech_ms > 0 and n < DROPPED_BELOW * speech_ms / 1000


def longest_pause(speech: np.ndarray) -> tuple[int, int] | None:
    """(first, end) frame of the longest run of non-speech frames between two speech frames of
    `speech` (vad.speech_frames), when it is at least `MIN_CUT_PAUSE_FRAMES` long; else None."""
    idx = np.flatnonzero(speech)
    if len(idx) < 2:
        return None
    gaps = np.diff(idx) - 1
    k = int(np.argmax(gaps))
    if gaps[k] < MIN_CUT_PAUSE_FRAMES:
        return None
    return int(idx[k]) + 1, int(idx[k + 1])
