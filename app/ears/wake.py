"""talk-llama's wake command (`-w`): an utterance counts only if it starts with the phrase.

Matching is fuzzy (Levenshtein similarity >= 0.7, as in talk-llama) because whisper rarely spells
a spoken name the same way twice. Pure functions.
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


def strip_wake_command(text: str, wake: str, threshold: float = 0.7) -> str | None:
    """talk-llama's -w: the utterance must start with the wake phrase (similarity >= threshold);
    returns the rest, or None when the phrase is absent."""
    norm = lambda s: " ".join("".join(c for c in s.lower() if c.isalnum() or c.isspace()).split())  # noqa: E731
    words, wake_words = text.split(), norm(wake).split()
    n = len(wake_words)
    if len(words) < n:
        return None
    head = norm(" ".join(words[:n]))
    if similarity(head, " ".join(wake_words)) < threshold:
        return None
    return " ".join(words[n:]).lstrip(" ,.!?")
