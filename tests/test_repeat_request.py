"""Which user turns ask for words to be said back exactly (app/brain/repeat_request.py): a
labelled set, then the reply on the real model: it starts with the words, after many turns too."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.brain.conversation import Conversation, LlmConfig
from app.brain.persona import PINNED_TIME, Persona
from app.brain.repeat_request import MAX_WORDS, words_to_repeat
from app.brain.sampling import SamplingConfig
from tests.support.conversations import assert_reply_opens_with

ASKS = [
    ("Please repeat this word exactly: pineapple", "pineapple"),
    ("Please repeat this word exactly: pineapple.", "pineapple"),  # whisper's period
    ("Repeat after me: the quick brown fox.", "the quick brown fox"),
    ("Say 'good night'", "good night"),
    ('Can you say "hello world"?', "hello world"),
    ("repeat the word banana", "banana"),
    ('Please, say: "Robin".', "Robin"),
    ("Répète ce mot : ananas", "ananas"),
    ("Sag bitte: Guten Morgen", "Guten Morgen"),
    ("Повтори: ананас", "ананас"),
]
DOES_NOT = [
    "I'd say: it's fine",  # the user's own statement
    "What does 'ananas' mean?",  # a question about the word
    "Could you repeat that?",  # no words given
    "Say something nice",
    "Tell me a story about a dragon.",
    "My favourite word is: pineapple",
    "Repeat after me: " + " ".join(["word"] * (MAX_WORDS + 1)),  # dictation, not a repeat
]


@pytest.mark.parametrize("text, words", ASKS)
def test_requests_to_repeat_give_their_words(text: str, words: str) -> None:
    assert words_to_repeat(text) == words


@pytest.mark.parametrize("text", DOES_NOT)
def test_other_turns_ask_for_no_repeat(text: str) -> None:
    assert words_to_repeat(text) is None


@pytest.mark.slow
def test_the_reply_to_a_repeat_request_starts_with_the_words(llm_model: Path) -> None:
    """Sampled at the default temperature, in a conversation whose context has shifted: the
    reply (stored and in the cache) starts with the word; the next ordinary turn is sampled
    as before."""
    cfg = LlmConfig(llm_model, n_ctx=512, max_tokens=16, sampling=SamplingConfig(seed=3))
    c = Conversation(cfg, Persona(now=PINNED_TIME))
    try:
        assert_reply_opens_with(c, 1, "Please repeat this word exactly: pineapple", "pineapple")
    finally:
        c.close()
