"""Which user turns ask about a remembered fact (app/brain/recall.py): a labelled set. Pure."""

from __future__ import annotations

import pytest

from app.brain.memory import known_facts
from app.brain.recall import asked_about
from app.brain.records import Message

TOLD = [
    "My name is Robin.",
    "I live in Porto.",
    "My dog is called Rex.",
    "I work as a nurse.",
    "I like green tea.",
    "My birthday is on the 4th of May.",
    "Remember that the code is 4512.",
]
FACTS = known_facts([Message("user", s) for s in TOLD])

DOG, CODE = "relation:dog:rex", "remember:the code is 4512"
ASKS = [
    ("What is my name?", ["name"]),
    ("Do you remember my name", ["name"]),  # whisper may leave the question mark out
    ("Where do I live?", ["home"]),
    ("What's my dog called?", [DOG]),
    ("What is my dog's name?", [DOG]),  # the dog, not the user's own name
    ("How is Rex doing, do you think he misses me?", [DOG]),
    ("What do I do for work?", ["work"]),
    ("What is my job?", ["work"]),
    ("Which drink do I like?", ["taste:green tea"]),
    ("When is my birthday?", ["birthday"]),
    ("What is the code I asked you to remember?", [CODE]),
    ("Remind me what I told you earlier.", [CODE]),
    ("What is your name?", ["you"]),
    ("Who are you?", ["you"]),
    ("Who are you, and do you know my name?", ["name", "you"]),
]
DOES_NOT = [
    "My name is Robin.",  # a statement, not a question
    "What is the capital of France?",  # not about the user
    "Tell me a story about a dragon.",
    "How long should I boil an egg?",  # about the user, but nothing remembered
    "What should I cook tonight?",
    "Where is the nearest beach?",
]


def keys(text: str) -> list[str]:
    facts, about_you = asked_about(text, FACTS)
    return [f.key for f in facts] + (["you"] if about_you else [])


@pytest.mark.parametrize("text, asked", ASKS)
def test_questions_about_what_is_remembered_find_just_those_facts(text: str, asked: list[str]) -> None:
    assert keys(text) == asked


@pytest.mark.parametrize("text", DOES_NOT)
def test_other_turns_ask_about_nothing(text: str) -> None:
    assert keys(text) == []


def test_with_nothing_remembered_only_the_assistants_name_is_asked_about() -> None:
    assert asked_about("What is my name?", []) == ([], False)
    assert asked_about("What is your name?", []) == ([], True)
