"""How a long conversation's replies are scored: whether each answers its question's topic,
whether they fall into one template, and how varied they are (bench/longchat, bench/memory and
the long-conversation tests share it)."""

from __future__ import annotations

import re
from collections import Counter

FIRST_SCORED = 20  # replies 21+ are scored: by then a conversation has history to copy from

STOPWORDS = frozenset(
    """a an the and or but if of to in on at by for with about from into over under up down out is
    are was were be been being am do does did have has had i you he she it we they me my your our
    their his her its this that these those what which who whom whose when where why how can could
    should would will shall may might must not no yes so than too very just also any some all each
    tell give me please thanks thank there here one like get know say said really more most much
    many make made let lets""".split()  # noqa: SIM905 (a word list reads better as text)
)


def words(text: str) -> list[str]:
    return re.findall(r"[a-z']+", text.lower())


def stem(word: str) -> str:
    return word[:-1] if word.endswith("s") and len(word) > 3 else word


def content_words(text: str) -> set[str]:
    return {stem(w) for w in words(text) if len(w) >= 3 and w not in STOPWORDS}


def scores(questions: list[str], replies: list[str]) -> dict:
    """Template share, on-topic share and distinct-2 of the scored replies."""
    qs, rs = questions[FIRST_SCORED:], replies[FIRST_SCORED:]
    grams = [set(zip(*(words(r)[i:] for i in range(4)), strict=False)) for r in rs]
    counts = Counter(g for per_reply in grams for g in per_reply)
    top, top_n = counts.most_common(1)[0] if counts else ((), 0)
    on_topic = sum(bool(content_words(q) & {stem(w) for w in words(r)}) for q, r in zip(qs, rs, strict=True))
    pairs = [p for r in rs for p in zip(words(r), words(r)[1:], strict=False)]
    return {
        "template_share": round(top_n / len(rs), 3),
        "template": " ".join(top),
        "on_topic": round(on_topic / len(rs), 3),
        "distinct2": round(len(set(pairs)) / max(len(pairs), 1), 3),
    }
