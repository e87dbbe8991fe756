"""Does a user turn ask for words to be said back exactly?

"Please repeat this word exactly: pineapple" is the one request whose answer is known before the
model speaks. A 135M model, 100 turns into a conversation, answered it "I'd repeat this word
exactly: PINEAS'FINES": the word is split into several tokens, and neither greedy decoding nor
DRY turned off nor a note naming the word kept it whole (probes on bench/memory's sessions).
So the reply to such a request starts with the words themselves (`Conversation.stream` forces
their tokens, then the model goes on from there, e.g. with a period or a remark), and what the
user hears begins with exactly what they asked for.

The test is words, and narrow on purpose (a wrong "yes" would put the user's words in the
assistant's mouth): the turn opens with a verb that asks for a repeat ("repeat", "say", the same
in French, German, Spanish, Italian, Portuguese and Russian), perhaps after "please", "can you"
and the like, and the words follow after a colon or in quotes ("Say 'good night'", "Repeat
after me: the quick brown fox"), or as "repeat the word X". "I'd say: it's fine" and "What does
'ananas' mean?" do not open so. At most `MAX_WORDS` words: a longer passage is dictation, not a
repeat. Pure functions; any thread.
"""

from __future__ import annotations

import re

MAX_WORDS = 12
_VERB = (
    r"(?:repeat|say|r[ée]p[èée]te[rz]?|dis|sag|sage|wiederhole|wiederholen|repite|repita|di|d[íi]"
    r"|ripeti|d[ìi]|repete|diga|fale|повтори|повторите|скажи|скажите)"
)
_POLITE = (
    r"(?:please|pls|can you|could you|would you|will you|now|ok|okay|just|kindly|bitte|"
    r"kannst du|s'il te pla[iî]t|s'il vous pla[iî]t|peux-tu|pouvez-vous|por favor|puedes|"
    r"per favore|пожалуйста)"
)
_HEAD = rf"^\s*(?:{_POLITE}[\s,]+)*{_VERB}\b"
_COLON = re.compile(rf"{_HEAD}[^:\"“«]{{0,60}}:\s*(?P<words>.+?)\s*$", re.IGNORECASE)
_QUOTED = re.compile(rf"{_HEAD}[^\"“«']{{0,60}}[\"“«'](?P<words>[^\"”»']+)[\"”»']", re.IGNORECASE)
_THE_WORD = re.compile(rf"{_HEAD} (?:the|this) word (?P<words>[\w'-]+)", re.IGNORECASE)
_EDGES = "\"'“”«».!?,;:… "


def words_to_repeat(text: str) -> str | None:
    """The words `text` asks to be said back exactly, as the user wrote them (their quotes and
    the sentence's end taken off), or None when it asks for no repeat."""
    for pattern in (_QUOTED, _COLON, _THE_WORD):
        found = pattern.search(text)
        if found is None:
            continue
        words = found.group("words").strip(_EDGES)
        if words and len(words.split()) <= MAX_WORDS:
            return words
    return None
