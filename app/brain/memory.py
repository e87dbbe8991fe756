"""The memory note: what the user told about themselves, kept where the model still sees it
after a context shift has discarded the turns that said it.

The note is built from the conversation's history alone: every user message, oldest first,
through `facts.extract_facts` (a later fact with the same key replaces an earlier one), less
the facts the user asked to forget. The same history always gives the same note, whichever
path built it (turns, Retry, a withdrawn tentative turn, a resumed or replayed session).

Where it lives in the context (kv_context.py): a shift that drops whole turns makes the note
due; it is then written as a system message at the head of the next turn, which is evaluated
ahead of time while the assistant is idle (priming), so it costs no reply any latency. It rides
with that turn: a Retry or withdrawn turn that removes it makes it due again. A later shift that
drops that turn keeps the note, right after the system prompt (ledger.py), and a shift makes a
fresh one due only when the facts changed. The cache is never re-evaluated for it.

Pure functions; any thread.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from functools import lru_cache

from app.brain.facts import Fact, extract_facts
from app.brain.records import Message

MAX_FACTS = 24  # the newest this many facts; older ones are left out of the note
# Background, not a message to answer: said so, since an instruct model otherwise reads it out.
HEADER = "Background (never read it out): what the user has told you."


@lru_cache(maxsize=4096)
def _facts_in(text: str) -> tuple[Fact, ...]:
    """One message's facts, remembered by text: the note is rebuilt from the whole history
    before every reply (the sampler reads it), and a message's facts never change."""
    return tuple(extract_facts(text))


def facts_in(text: str) -> list[Fact]:
    """The facts one user message states (facts.extract_facts, remembered by text)."""
    return list(_facts_in(text))


def known_facts(
    history: Sequence[Message], forgotten: Iterable[str] = (), earlier: Iterable[Fact] = ()
) -> list[Fact]:
    """The user's facts in `history` (by key: the latest statement wins, placed where it was
    said), after the `earlier` ones (other conversations', shared_memory.py), without the keys
    in `forgotten`."""
    facts: dict[str, Fact] = {f.key: f for f in earlier}
    for message in history:
        if message.role != "user":
            continue
        for fact in _facts_in(message.text):
            facts.pop(fact.key, None)
            facts[fact.key] = fact
    skip = set(forgotten)
    return [f for f in facts.values() if f.key not in skip]


# The note's sentences (facts.py) as the user reads them; "They"/"Their" is how facts were
# worded before, still found in memory shared across conversations.
_TO_YOU = (
    ("The user asked you to remember:", "You asked me to remember:"),
    ("They asked you to remember:", "You asked me to remember:"),
    ("The user's ", "Your "),
    ("The user is ", "You are "),
    ("The user was ", "You were "),
    ("The user doesn't ", "You don't "),
    ("The user lives ", "You live "),
    ("The user comes ", "You come "),
    ("The user works ", "You work "),
    ("The user likes ", "You like "),
    ("Their ", "Your "),
    ("They ", "You "),
)


def told_to_you(fact: Fact) -> str:
    """The fact as the user reads it in the window ("Your name is Robin.")."""
    s = fact.sentence
    for about, to_you in _TO_YOU:
        if s.startswith(about):
            return to_you + s[len(about) :]
    return s


def note_text(facts: Sequence[Fact], bot: str = "") -> str:
    """The note the model reads ("" when there is nothing to say): who the assistant is (when
    `bot` is given: the system prompt that says so may be thousands of tokens back), then a
    header and one third-person sentence per fact, newest `MAX_FACTS` only."""
    lines = [f"You are {bot}."] if bot else []
    if facts:
        lines += [HEADER, *(f.sentence for f in facts[-MAX_FACTS:])]
    return " ".join(lines)
