"""Facts the user states about themselves, found by patterns over their own words.

The memory note that outlives a context shift is built from these: deterministic (the same
words give the same facts, on any brain), cheap (a few regular expressions per user turn, no
model call) and cautious: a fact is taken only from a plain statement in the first person —
not from a question, a request ("tell me a story where my name is …"), a hypothetical ("if I
lived in …") or a negation ("my name is not …") — and names and places only when written with
a capital letter. Precision is what matters (an invented fact is worse than a missed one):
tests/test_facts.py measures it on a labelled set.

Each fact has a `key` (a later fact with the same key replaces an earlier one: "I moved to
Lisbon" after "I live in Porto"), a `kind`, the `value` as the user wrote it, and a `sentence`
that says it about "the user" for the note (a small model took "their name" for its own).
Pure functions; any thread.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_CAP = r"[A-Z\u00c0-\u00de][\w'\u00c0-\u024f-]*"  # a capitalized word (Latin script, accents)
_MORE = r"[A-Z\u00c0-\u00de][\w'\u00c0-\u024f-]+"  # ... and one after it (never a lone "I")
_NAME = rf"({_CAP}(?:\s+{_MORE}){{0,2}})"
_PLACE = rf"((?:the\s+)?{_CAP}(?:(?:\s+|-)(?:(?:de|do|da|del|of|on|upon|am|an|la|le)\s+)?{_MORE}){{0,3}})"
_MONTHS = "january|february|march|april|may|june|july|august|september|october|november|december"
_DATE = (
    rf"((?:the\s+)?\d{{1,2}}(?:st|nd|rd|th)?(?:\s+of)?\s+(?i:{_MONTHS})"
    rf"|(?i:{_MONTHS})\s+\d{{1,2}}(?:st|nd|rd|th)?"
    r"|\d{1,2}[./-]\d{1,2}(?:[./-]\d{2,4})?)"
)
_RELATIONS = (
    "dog|cat|puppy|kitten|bird|parrot|rabbit|hamster|horse|fish|turtle|"
    "wife|husband|partner|boyfriend|girlfriend|son|daughter|brother|sister|"
    "mother|mom|mum|father|dad|grandmother|grandfather|grandma|grandpa|friend|"
    "best friend|boss|colleague|cousin|aunt|uncle|niece|nephew|baby"
)
_PRONOUN_OBJECTS = {
    "it", "that", "this", "these", "those", "them", "him", "her", "you", "your", "yours", "what",
    "how", "when", "where", "which", "who", "there", "here", "one", "some", "any", "me", "myself",
    "the idea", "so", "too", "very", "a lot", "lots", "much",
}  # fmt: skip
# A sentence with one of these before the pattern is not a statement of fact.
_NOT_A_STATEMENT = re.compile(
    r"\b(?i:if|unless|suppose|supposing|imagine|pretend|assume|what if|would|could|might|maybe|"
    r"perhaps|wish|story|poem|song|joke|tell me|write|say|said|says|role|game|character|"
    r"quiz|guess|not|never|no longer|don't|doesn't|didn't|isn't|wasn't)\b"
)


def _after(leads: str, value: str) -> re.Pattern[str]:
    """`value` right after one of the `leads` (|-separated, any case)."""
    return re.compile(rf"\b(?i:{leads})\s+{value}")


_UNTIL = r"(?=[,.;!]|$|\s+(?i:and|but|because|so)\b)"  # where a free-form value ends
_THING = rf"([\w' -]{{2,40}}?){_UNTIL}"
_JOB = r"((?:a|an)\s+[a-z][a-z -]{1,40}?)(?=[,.;!]|$|\s+(?i:and|but|at|in|for)\b)"
_CALLED = r"(?i:'s name is|\s+is called|\s+is named|\s+named|\s+called)"
PATTERNS: list[tuple[str, re.Pattern[str]]] = [
    ("name", _after("my name is|my name's|call me|i am called|i'm called|people call me", _NAME)),
    ("home", _after("i live in|i'm living in|i am living in|i moved to|i now live in", _PLACE)),
    ("origin", _after("i'm from|i am from|i come from|i grew up in", _PLACE)),
    ("birthplace", _after("i was born in", _PLACE)),
    ("work", _after("i work as|i'm working as|i am working as", _JOB)),
    ("workplace", _after("i work at|i work for|i'm working at|i am working at", _PLACE)),
    ("age", _after("i am|i'm|i turned", r"(\d{1,3})(?:\s+(?i:years old|years|yrs old))?(?=[,.;!]|$)")),
    ("relation", re.compile(rf"\b(?i:my)\s+((?i:{_RELATIONS})){_CALLED}\s+{_NAME}")),
    (
        "relation",
        re.compile(
            rf"\b(?i:i have|i've got|i have got|we have|we've got)\s+(?i:a|an)\s+((?i:{_RELATIONS}))"
            rf"(?:,)?\s+(?i:called|named)\s+{_NAME}"
        ),
    ),
    ("birthday", _after("my birthday is|my birthday's|i was born on", rf"(?i:on\s+)?{_DATE}")),
    ("like", _after("i (?:really |also |just )?(?:like|love|enjoy|adore)", _THING)),
    (
        "dislike",
        _after("i (?:really )?(?:hate|dislike|can't stand|cannot stand|don't like|do not like)", _THING),
    ),
    (
        "remember",
        _after("please remember that|remember that|don't forget that|do not forget that", r"(.{3,160}?)$"),
    ),
]
_CONTROL = re.compile(r"<\|[^|>]*\|>|</?s>|\[/?INST\]")  # chat-template look-alikes are never kept
_SENTENCE = re.compile(r"[^.!?;\n]+[.!?;]*")


@dataclass(frozen=True)
class Fact:
    key: str  # a later fact with the same key replaces this one
    kind: str
    value: str
    sentence: str  # about "the user", for the note (memory.told_to_you: to the user)


def extract_facts(text: str) -> list[Fact]:
    """The facts stated in one user turn, in the order said (see the module docstring)."""
    facts: dict[str, Fact] = {}
    for match in _SENTENCE.finditer(_CONTROL.sub(" ", text)):
        sentence = match.group().strip()
        if not sentence or sentence.endswith("?"):
            continue
        body = sentence.rstrip(".!;").strip()
        for kind, pattern in PATTERNS:
            for found in pattern.finditer(body):
                if _NOT_A_STATEMENT.search(body[: found.start()]):
                    continue
                fact = _fact(kind, found)
                if fact is not None:
                    facts.pop(fact.key, None)
                    facts[fact.key] = fact
    return list(facts.values())


def _fact(kind: str, found: re.Match[str]) -> Fact | None:
    value = " ".join(found.group(found.lastindex or 1).split()).strip(" '-")
    if kind == "remember":
        value = value[:160]
        return Fact(f"remember:{value.lower()}", kind, value, f'The user asked you to remember: "{value}".')
    if kind == "relation":
        relation, name = found.group(1).lower(), " ".join(found.group(2).split())
        said = f"The user's {relation} is called {name}."
        return Fact(f"relation:{relation}:{name.lower()}", kind, name, said)
    if kind in ("like", "dislike"):
        if value.lower() in _PRONOUN_OBJECTS or value.split(" ")[0].lower() in _PRONOUN_OBJECTS:
            return None
        verb = "likes" if kind == "like" else "doesn't like"
        return Fact(f"taste:{value.lower()}", kind, value, f"The user {verb} {value}.")
    if kind == "age":
        age = int(value)
        if not 3 <= age <= 120:
            return None
        return Fact("age", kind, value, f"The user is {age} years old.")
    sentences = {
        "name": f"The user's name is {value}.",
        "home": f"The user lives in {value}.",
        "origin": f"The user comes from {value}.",
        "birthplace": f"The user was born in {value}.",
        "work": f"The user works as {value}.",
        "workplace": f"The user works at {value}.",
        "birthday": f"The user's birthday is on {value}.",
    }
    return Fact(kind, kind, value, sentences[kind])
