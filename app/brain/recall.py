"""Does a user turn ask about something the memory note holds?

A note written once after a shift ends up far behind the conversation: at n_ctx 4096 it sat
~100 turns (~3000 tokens) before the question "What is my name?", and a small model then answered
with an invented name (recall 0.06, the same as with no note). Models read best what is near,
and a 135M model given the whole note right before the question still took the wrong name
from it ("What is my name?" -> "Maria.", the sister). So a turn that asks about remembered facts
(or the assistant's own name) gets a recall note that holds just those, right after the user's
closed question, before the reply (kv_context.py writes it; `Conversation.stream` asks): a few
tokens, on such turns only.

The test is words, not a model: the turn is a question or a request to recall, and it names a
fact's topic (its cue words, or a word of the fact's value). A wrong "yes" costs one note's
evaluation; a wrong "no" leaves the reply to the older note, as before. Pure functions; any thread.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from app.brain.facts import Fact

_WORD = re.compile(r"[a-z0-9\u00e0-\u024f]+")  # "dog's" reads as "dog", "s"
_ASKS = re.compile(
    r"\?\s*$|^\s*(?:what|what's|whats|where|where's|who|who's|when|which|how|do|does|did|is|are|can|"
    r"could|tell|remind|say)\b|\b(?:remember|remind|recall|forgot|forget)\b",
    re.IGNORECASE,
)
_ABOUT_ME = re.compile(r"\b(?:my|i|me|i'm|mine)\b", re.IGNORECASE)
_ABOUT_YOU = re.compile(
    r"\b(?:your name|who are you|what are you called|what should i call you)\b", re.IGNORECASE
)
# Words that ask about each kind of fact ("Where do I live?" asks about `home`); a relation is
# asked about by its own words ("my dog", "Rex").
CUES: dict[str, tuple[str, ...]] = {
    "name": ("name", "who"),
    "home": ("live", "living", "home", "city", "town"),
    "origin": ("from", "grew", "origin"),
    "birthplace": ("born",),
    "work": ("work", "job", "living", "profession", "occupation"),
    "workplace": ("work", "employer", "company"),
    "age": ("old", "age"),
    "birthday": ("birthday", "born"),
    "like": ("like", "love", "enjoy", "favorite", "favourite", "prefer"),
    "dislike": ("like", "hate", "dislike", "stand"),
    "remember": ("told", "asked", "said", "remind"),  # "remember my name?" asks about the name
}
_SMALL = {"the", "a", "an", "of", "in", "on", "at", "to", "and", "is", "my", "i", "me", "you", "your"}


def words(text: str) -> set[str]:
    return set(_WORD.findall(text.lower()))


def _topic_words(fact: Fact) -> set[str]:
    """Words that name this fact's topic: the relation ("dog"), the value's words ("tea")."""
    named = words(fact.value)
    if fact.kind == "relation":
        named |= words(fact.key.split(":")[1])
    return named - _SMALL


def asked_about(text: str, facts: Sequence[Fact]) -> tuple[list[Fact], bool]:
    """What `text` asks about: the `facts` it names (a word of the value, a relation), else
    those whose kind its words ask about ("live", "birthday"), and whether it asks the
    assistant's name. Only a question or a request to recall asks; only one about the user
    (first person) asks about facts."""
    if not _ASKS.search(text):
        return [], False
    about_you = bool(_ABOUT_YOU.search(text))
    if not _ABOUT_ME.search(text):
        return [], about_you
    said = words(text)
    named = [f for f in facts if said & _topic_words(f)]  # "my dog", "tea", "Rex": the very fact
    if named:
        return named, about_you
    return [f for f in facts if said & set(CUES.get(f.kind, ()))], about_you
