"""Which user turns ask the assistant's name (app/brain/name_question.py): a labelled set in
seven languages, then the reply on the real model after the context has shifted."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.brain.conversation import Conversation, LlmConfig
from app.brain.name_question import own_name_reply
from app.brain.persona import PINNED_TIME, Persona
from app.brain.sampling import SamplingConfig
from tests.support.conversations import assert_reply_opens_with

ASKS = [
    ("What is your name?", "My name is Aria."),
    ("what's your name", "My name is Aria."),  # as whisper may write it
    ("Hey, what's your name again?", "My name is Aria."),
    ("So what should I call you?", "My name is Aria."),
    ("Comment tu t'appelles ?", "Je m'appelle Aria."),
    ("Quel est votre nom?", "Je m'appelle Aria."),
    ("Wie heißt du?", "Ich heiße Aria."),
    ("¿Cómo te llamas?", "Me llamo Aria."),
    ("Come ti chiami?", "Mi chiamo Aria."),
    ("Qual é o seu nome?", "Meu nome é Aria."),
    ("Как тебя зовут?", "Меня зовут Aria."),
]
DOES_NOT = [
    "What is my name?",  # the user's own: the memory's to answer
    "What does your name mean?",
    "What is your name? And tell me a joke.",  # more than the question
    "What is the name of your dog?",
    "Do you know my name?",
    "I like your name.",
    "Wie heißt die Hauptstadt von Frankreich?",
    "Your name is Aria, right?",
]


@pytest.mark.parametrize("text, answer", ASKS)
def test_questions_for_the_name_are_answered_with_it(text: str, answer: str) -> None:
    assert own_name_reply(text, "Aria") == answer


@pytest.mark.parametrize("text", DOES_NOT)
def test_other_turns_get_no_set_answer(text: str) -> None:
    assert own_name_reply(text, "Aria") is None


def test_the_answer_is_the_personas_name_and_none_without_one() -> None:
    assert own_name_reply("What is your name?", " Nova ") == "My name is Nova."
    assert own_name_reply("What is your name?", "") is None


@pytest.mark.slow
def test_the_reply_to_the_name_question_starts_with_the_name(llm_model: Path) -> None:
    """Sampled at the default temperature, after the system prompt that names the persona has
    been shifted past: the reply (stored and in the cache) starts with the persona's own name,
    whatever it is called; the next ordinary turn is sampled as before."""
    cfg = LlmConfig(llm_model, n_ctx=512, max_tokens=16, sampling=SamplingConfig(seed=4))
    c = Conversation(cfg, Persona(bot="Nova", now=PINNED_TIME))
    try:
        assert_reply_opens_with(c, 2, "What's your name?", "My name is Nova.")
    finally:
        c.close()
