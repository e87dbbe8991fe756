"""Cut streaming reply text into speakable sentences as soon as each one is complete.

`SentenceSplitter.feed(piece)` returns the sentences completed by that piece; `flush()` returns the
rest at the end of the reply. A sentence ends at . ! ? (and the other scripts' ends: the Arabic
؟ and ۔, the Devanagari । and ॥, the Greek ;) followed by whitespace, or a newline, but not at
abbreviations (Dr., e.g., U.S.), decimals (3.14), ellipses (... or …) or inside quotes (“…”, «…»,
「…」, 『…』). Chinese and Japanese write no spaces: 。！？ end a sentence whatever follows. The
Spanish ¿ and ¡ open a sentence and stay with it. A run-on sentence is cut at a clause break
(, ; : — and the CJK ，、；：) once it is longer than `max_chars`, so the first audio is not held
back by one long sentence.

`speakable(text)` turns text meant for the eye into text for the ear: markdown symbols removed,
URLs shortened to their host, emoji dropped. Pure functions/objects; no threads.
"""

from __future__ import annotations

import re

ABBREVIATIONS = frozenset(
    [
        "mr",
        "mrs",
        "ms",
        "dr",
        "prof",
        "sr",
        "jr",
        "st",
        "vs",
        "etc",
        "e.g",
        "i.e",
        "a.m",
        "p.m",
        "u.s",
        "u.k",
        "no",
        "approx",
        "dept",
        "est",
        "fig",
        "inc",
        "ltd",
        "co",
        "mt",
        "jan",
        "feb",
        "mar",
        "apr",
        "jun",
        "jul",
        "aug",
        "sep",
        "sept",
        "oct",
        "nov",
        "dec",
    ]
)
WIDE_TERMINALS = "。！？｡．"  # they end a sentence with no space after (CJK)
TERMINALS = ".!?;؟۔।॥" + WIDE_TERMINALS
CLOSERS = "\"'”’)]»」』）】"
OPEN_QUOTES = {"“": "”", '"': '"', "«": "»", "「": "」", "『": "』"}
CLAUSE_BREAK = re.compile(r"[,;:—–،](?=\s)|\s[-–—]\s|[，、；：]")


class SentenceSplitter:
    """Incremental sentence splitter for streamed text (one per reply; not thread-safe)."""

    def __init__(
        self, max_chars: int = 140, min_chars: int = 30, first_clause_chars: int = 0, first_words: int = 0
    ) -> None:
        """`first_clause_chars` > 0: the FIRST chunk may end at a clause break once it is this
        long, so speech starts sooner (later chunks are whole sentences). `first_words` > 0: the
        first chunk also ends after that many words when no break came sooner (a voice whose
        synthesis time grows with the chunk: the natural voice)."""
        self.max_chars = max_chars
        self.min_chars = min_chars
        self.first_clause_chars = first_clause_chars
        self.first_words = first_words
        self._emitted_any = False
        self._buf = ""

    def feed(self, piece: str) -> list[str]:
        self._buf += piece
        return self._drain(final=False)

    def flush(self) -> list[str]:
        out = self._drain(final=True)
        rest = self._buf.strip()
        self._buf = ""
        if rest:
            out.append(rest)
        return out

    def _drain(self, final: bool) -> list[str]:
        out: list[str] = []
        while True:
            cut = _find_boundary(self._buf, final)
            if cut is None and len(self._buf.strip()) > self.max_chars:
                cut = self._clause_cut(self.min_chars)
            if cut is None and not self._emitted_any and self.first_clause_chars:
                cut = self._clause_cut(self.first_clause_chars)
            if cut is None and not self._emitted_any and self.first_words:
                cut = self._word_cut(self.first_words)
            if cut is None:
                return out
            sentence, self._buf = self._buf[:cut].strip(), self._buf[cut:]
            if sentence:
                out.append(sentence)
                self._emitted_any = True

    def _word_cut(self, words: int) -> int | None:
        """Just after the `words`-th word, once a space shows it is complete; not inside a
        number ("3.", "1,") or right before what ends the sentence anyway."""
        found = list(re.finditer(r"\S+\s", self._buf))
        if len(found) <= words:  # the word after them must have begun: it may end the sentence
            return None
        cut = found[words - 1].end()
        return None if found[words - 1].group()[-2] in ".,:;" else cut

    def _clause_cut(self, min_chars: int) -> int | None:
        for m in CLAUSE_BREAK.finditer(self._buf):
            if m.end() >= min_chars:
                return m.end()
        return None


def _prev_word(text: str, i: int) -> str:
    j = i
    while j > 0 and not text[j - 1].isspace() and text[j - 1] not in "\"'“(":
        j -= 1
    return text[j:i]


def _is_abbreviation(text: str, i: int) -> bool:
    """Does the '.' at text[i] end an abbreviation ("Dr."), a dotted acronym ("U.S.") or an initial?"""
    word = _prev_word(text, i)
    low = word.lower()
    return (
        low in ABBREVIATIONS
        or re.fullmatch(r"[a-z](\.[a-z])+", low) is not None
        or (len(word) == 1 and word.isupper())
    )


def _greek_question(text: str, i: int) -> bool:
    """Is the ';' at text[i] a Greek question mark (a Greek letter before it)?"""
    word = _prev_word(text, i)
    return bool(word) and "\u0370" <= word[-1] <= "\u03ff"


def _find_boundary(text: str, final: bool) -> int | None:
    """Index just after the first complete sentence in `text`, or None if none is complete yet."""
    depth: str | None = None  # closing quote we are waiting for
    n = len(text)
    i = 0
    while i < n:
        ch = text[i]
        if depth is not None:
            if ch == depth:
                depth = None
            i += 1
            continue
        if ch in OPEN_QUOTES and (ch != '"' or i == 0 or text[i - 1].isspace()):
            depth = OPEN_QUOTES[ch]
            i += 1
            continue
        if ch == "\n":
            if text[:i].strip():
                return i + 1
            i += 1
            continue
        if ch == "…" or text.startswith("..", i):
            while i < n and text[i] in ".…":
                i += 1
            continue
        if ch in TERMINALS:
            j = i + 1
            while j < n and text[j] in TERMINALS:
                j += 1
            while j < n and text[j] in CLOSERS:
                j += 1
            if j >= n:
                return n if final else None  # cannot tell yet (3.|14, "Dr.| Smith", "?!")
            if ch == ";" and not _greek_question(text, i):
                i = j  # a semicolon ends a clause, except in Greek, where it is the question mark
                continue
            if ch in WIDE_TERMINALS:
                return j
            if not text[j].isspace():
                i = j
                continue
            if ch == "." and j == i + 1 and _is_abbreviation(text, i):
                i = j
                continue
            return j
        i += 1
    return None


_CODE_FENCE = re.compile(r"^\s*```.*$", re.MULTILINE)
_HEADING = re.compile(r"^\s{0,3}#{1,6}\s+", re.MULTILINE)
_BULLET = re.compile(r"^\s*(?:[-*+•]|\d+[.)])\s+", re.MULTILINE)
_EMPHASIS = re.compile(r"(?<!\w)(\*\*|__|\*|_|~~|`)(?=\S)(.+?)(?<=\S)\1(?!\w)")
_LINK = re.compile(r"\[([^\]]+)\]\((?:[^)]+)\)")
_URL = re.compile(r"\b(?:https?://|www\.)([^\s/:?#]+)[^\s]*", re.IGNORECASE)
_EMOJI = re.compile(
    "[\U0001f000-\U0001faff\U00002600-\U000027bf\U0001f900-\U0001f9ff\U00002b00-\U00002bff\ufe0f\u200d]"
)
_SPACES = re.compile(r"[ \t]{2,}")


def speakable(text: str) -> str:
    """Text for the ear: no markdown symbols, URLs as their host, no emoji."""
    text = _CODE_FENCE.sub("", text)
    text = _LINK.sub(r"\1", text)
    text = _URL.sub(lambda m: m.group(1).removeprefix("www."), text)
    text = _HEADING.sub("", text)
    text = _BULLET.sub("", text)
    for _ in range(2):  # nested emphasis like ***x***
        text = _EMPHASIS.sub(r"\2", text)
    text = text.replace("`", "")
    text = _EMOJI.sub("", text)
    text = _SPACES.sub(" ", text)
    return text.strip()
