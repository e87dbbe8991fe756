"""Where each written word starts in a natural voice's audio, from its phoneme timings.

A Piper voice reports how many samples each phoneme lasts, but phonemes belong to espeak's
spoken words, which do not map 1:1 onto the written ones: "2026" is spoken as four words
("two thousand twenty six"), "do not" as one ("duːnˌɑːt"), "Dr." as "doctor". So each written
word is phonemized on its own to learn its *weight* (how many sounding phonemes it takes), the
weights are laid along the phonemes actually spoken (scaled to their count: context changes a
word's sound a little), and each start is snapped to a spoken-word boundary when one is close.
The result is within a word of the truth on such text (tests/test_word_timing.py), which is
what "memory = what was heard" needs: a cut reply keeps the words whose sound had started.

Pure functions; no voice or model here (natural_voice.py feeds them).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

# Codepoints that take time but are not a sound of their own: stress and length marks,
# punctuation, the spaces between spoken words, and Piper's begin/end/pad symbols.
_SILENT = set(" \t,.;:!?¡¿\"'()[]-–—…ˈˌ^$_")
_WORD = re.compile(r"\S+")
SNAP = 2  # a start this many phonemes from a spoken-word boundary moves onto it


def sounding(phonemes: Sequence[str]) -> int:
    """How many of `phonemes` are sounds (the weight of a word)."""
    return sum(1 for p in phonemes if p not in _SILENT and not p.isspace())


def word_starts(
    text: str,
    spoken: Sequence[tuple[str, int]],
    phonemize_word: Callable[[str], Sequence[str]],
) -> tuple[tuple[int, int], ...]:
    """(character offset in `text`, first sample) of each written word, in order.

    `spoken`: the phonemes as synthesized, each with its duration in samples, in order (all of
    them, silent ones included, so the sample clock is right). `phonemize_word(word)`: the
    phonemes of one written word said alone. Starts never go backwards; a word with no sound
    of its own (a dash, an emoji) starts where the next sound does.
    """
    words = [(m.start(), m.group()) for m in _WORD.finditer(text)]
    if not words:
        return ()
    sound_at: list[int] = []  # sample where each sounding phoneme starts
    boundaries: list[int] = []  # indexes into sound_at where a spoken word begins
    clock, gap = 0, True
    for phoneme, samples in spoken:
        if phoneme in _SILENT or phoneme.isspace():
            gap = gap or phoneme.isspace() or phoneme in ",.;:!?"
        else:
            if gap:
                boundaries.append(len(sound_at))
            sound_at.append(clock)
            gap = False
        clock += int(samples)
    if not sound_at:
        return tuple((char, 0) for char, _ in words)
    weights = [sounding(phonemize_word(word)) for _, word in words]
    total = sum(weights)
    if total == 0:  # nothing sounds when said alone: spread the words by their letters
        weights = [len(word) for _, word in words]
        total = sum(weights)
    scale = len(sound_at) / total
    starts: list[tuple[int, int]] = []
    before, last = 0, 0
    for (char, _word), weight in zip(words, weights, strict=True):
        index = _snap(round(before * scale), boundaries)
        index = min(max(index, last), len(sound_at) - 1)
        starts.append((char, sound_at[index]))
        last = index
        before += weight
    return tuple(starts)


def _snap(index: int, boundaries: Sequence[int]) -> int:
    """The nearest spoken-word boundary within SNAP phonemes of `index`, else `index`."""
    best = min(boundaries, key=lambda b: abs(b - index), default=index)
    return best if abs(best - index) <= SNAP else index
