"""talk-llama's wake command (`-w`): an utterance counts only if it starts with the phrase.

Matching is fuzzy (Levenshtein similarity >= 0.7, as in talk-llama) because whisper rarely spells
a spoken name the same way twice. Words are compared in any script; Chinese and Japanese, which
write no spaces, are compared character by character. Pure functions.
"""

from __future__ import annotations


def similarity(a: str, b: str) -> float:
    """1 - Levenshtein distance / longer length (talk-llama's measure for the wake command)."""
    if not a and not b:
        return 1.0
    prev = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        cur = [i]
        for j, cb in enumerate(b, 1):
            cur.append(min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (ca != cb)))
        prev = cur
    return 1.0 - prev[-1] / max(len(a), len(b))


AFTER_WAKE = " ,.!?;:、，。！？،"  # between the wake phrase and the words (¿ ¡ open what follows)


def _norm(text: str) -> str:
    return " ".join("".join(c for c in text.lower() if c.isalnum() or c.isspace()).split())


def _unspaced(text: str) -> bool:
    """Written without spaces between words (Chinese, Japanese)."""
    return any("\u3040" <= c <= "\u30ff" or "\u3400" <= c <= "\u9fff" for c in text)


def strip_wake_command(text: str, wake: str, threshold: float = 0.7) -> str | None:
    """talk-llama's -w: the utterance must start with the wake phrase (similarity >= threshold);
    returns the rest, or None when the phrase is absent."""
    wake_norm = _norm(wake)
    if " " not in wake_norm and _unspaced(wake_norm):  # characters, not words
        letters = [(i, c.lower()) for i, c in enumerate(text) if c.isalnum()]
        n = len(wake_norm)
        if len(letters) < n or similarity("".join(c for _, c in letters[:n]), wake_norm) < threshold:
            return None
        return text[letters[n - 1][0] + 1 :].lstrip(AFTER_WAKE)
    words, wake_words = text.split(), wake_norm.split()
    n = len(wake_words)
    if len(words) < n:
        return None
    head = _norm(" ".join(words[:n]))
    if similarity(head, " ".join(wake_words)) < threshold:
        return None
    return " ".join(words[n:]).lstrip(AFTER_WAKE)
