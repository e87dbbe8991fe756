"""Word timings of the natural voice: written words mapped onto the phonemes Piper speaks.

The mapping (app/voice/word_timing.py) must be tolerant: espeak's spoken words are not the
written ones ("2026" is four, "do not" one, "Dr." is "doctor"). Properties of the pure function
are checked by Hypothesis on made-up phoneme streams; its accuracy is checked against the real
voice's phonemizer: where a word really starts is how many sounds the text *before* it makes in
context, and each estimate must land within one word of that.
"""

from __future__ import annotations

import itertools
import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from app.voice.word_timing import sounding, word_starts

TRICKY = [
    "Dr. Smith said it's 2026, so do not wait.",
    "On 3/14/2026 at 10:30 a.m., Mr. O'Neil paid $1,250.50 for 12 books.",
    "I can't, won't and shouldn't do it; e.g. the U.S. isn't the U.K.",
    "Visit example.com — or call 555-0199 — before Jan. 5th!",
    "Well... maybe? Yes! No; perhaps: it depends.",
]

# ----- the pure function, on made-up streams ---------------------------------------------------
letters = st.text(alphabet="abcdefghijklmnoprstuvwxyz", min_size=1, max_size=8)
odd = st.sampled_from(["—", "2026", "Dr.", "it's", "-"])
words = st.lists(st.one_of(letters, odd), min_size=1, max_size=20)


def fake_phonemize(word: str) -> list[str]:
    """A labelled stand-in for a phonemizer: one sound per letter, digits spoken as 3 sounds."""
    return [c for ch in word for c in (ch * 3 if ch.isdigit() else ch) if ch.isalnum()]


@given(words, st.integers(1, 400), st.floats(0.5, 2.0))
def test_starts_are_ordered_one_per_word_and_inside_the_audio(ws, samples, stretch) -> None:
    text = " ".join(ws)
    # what was "spoken": every word's sounds, some words merged or split, each phoneme `samples`
    spoken = []
    for i, w in enumerate(ws):
        sounds = fake_phonemize(w) * max(1, round(stretch))
        spoken += [(p, samples) for p in sounds] + ([(" ", samples)] if i % 3 else [])
    starts = word_starts(text, spoken, fake_phonemize)
    assert [c for c, _ in starts] == [m.start() for m in re.finditer(r"\S+", text)]
    assert all(a[1] <= b[1] for a, b in itertools.pairwise(starts))
    total = sum(s for _, s in spoken)
    assert all(0 <= s < max(total, 1) for _, s in starts)


def test_no_words_and_no_sounds() -> None:
    assert word_starts("", [("a", 10)], fake_phonemize) == ()
    assert word_starts("— …", [(".", 10)], fake_phonemize) == ((0, 0), (2, 0))


def test_exact_when_spoken_words_match_the_written_ones() -> None:
    spoken = [(p, 100) for p in "^hɛloʊ wɝld$"]
    starts = word_starts("hello world", spoken, lambda w: list({"hello": "hɛloʊ", "world": "wɝld"}[w]))
    assert starts == ((0, 100), (6, 700))


# ----- the real voice's phonemes ---------------------------------------------------------------
@pytest.fixture(scope="module")
def joe(natural_voice_model):
    from app.voice.natural_voice import NaturalSynthesizer

    return NaturalSynthesizer.get(natural_voice_model)


@pytest.mark.parametrize("text", TRICKY)
def test_each_word_starts_within_a_word_of_where_it_is_spoken(joe, text) -> None:
    spoken = [(p, 1) for p in joe.phonemize(text)]  # one sample per phoneme: sample == index
    sound_index = [i for i, (p, _) in enumerate(spoken) if sounding([p])]
    starts = word_starts(text, spoken, joe.phonemize)
    # the truth: the sounds of the text before each word, phonemized in context
    truth = [sounding(joe.phonemize(text[:char])) if char else 0 for char, _ in starts]

    def word_at(sample: int) -> int:
        """Which written word the sound at `sample` belongs to (by the truth)."""
        heard = sum(1 for i in sound_index if i < sample)
        return max(i for i, t in enumerate(truth) if t <= heard)

    errors = [word_at(sample) - i for i, (_c, sample) in enumerate(starts)]
    assert all(abs(e) <= 1 for e in errors), list(zip(text.split(), errors, strict=False))


def test_a_cut_natural_sentence_keeps_the_words_that_had_started(joe) -> None:
    speech = joe.render("Once upon a time, there was a fox.")
    samples = [sample for _char, sample in speech.words]
    assert len(samples) == 8 and samples == sorted(samples) and samples[-1] < len(speech.pcm)
    assert speech.heard(0) == ""
    assert speech.heard(samples[1] + 1) == "Once upon"
    assert speech.heard(samples[3] + 1) == "Once upon a time,"
    assert speech.heard(len(speech.pcm)) == "Once upon a time, there was a fox."
