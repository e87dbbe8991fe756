"""What whisper wrote, made fit for a conversation: annotations ("[BLANK_AUDIO]", "(music)"), the
quote marks whisper may wrap a whole transcript in, extra whitespace, and sentences repeated in a
decoding loop. Pure functions on strings; any thread."""

from __future__ import annotations

import re

ANNOTATION = re.compile(r"\[[^\]]*\]|\([^)]*\)|\*[^*]*\*|♪+")
QUOTES = '"“”«»„'


def clean_text(text: str) -> str:
    """Remove annotations, the quote marks whisper may wrap a whole transcript in, and extra
    whitespace; keeps every script (no ASCII-only regex)."""
    text = ANNOTATION.sub(" ", text)
    text = text.replace(">>", " ")
    text = re.sub(r"\s+", " ", text).strip(" -")
    inner = text[1:-1]
    if len(text) > 1 and text[0] in QUOTES and text[-1] in QUOTES and not set(inner) & set(QUOTES):
        text = text[1:-1].strip(" -")
    return text


def collapse_repeats(text: str, duration_s: float) -> str:
    """Drop immediate repetitions of a sentence when the text is longer than the audio could
    hold (whisper's decoding loops); genuinely repeated sentences in long audio are kept."""
    if len(text.split()) <= 4 * duration_s + 3:
        return text
    sentences = re.split(r"(?<=[.!?])\s+", text)
    out: list[str] = []
    for sent in sentences:
        if not out or sent.strip().lower() != out[-1].strip().lower():
            out.append(sent)
    return " ".join(out)
