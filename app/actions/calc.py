"""Sums and unit conversions as people say them: "what's fifteen percent of 240", "twelve times
seven", "how many grams in a pound".

Number words become digits with `text2num` (en, fr, de, es, pt, it, nl, da; a small table adds
the single small numbers it leaves as words, "one", "two"); operator words become symbols; the
result is checked to hold nothing but numbers and operators and evaluated by `simpleeval`
(never Python's `eval`; powers are capped). Units: `pint` (English unit names).

Pure functions; `convert` builds pint's registry on first use (~0.4 s, cached, any thread).
"""

from __future__ import annotations

import functools
import logging
import math
import re
from typing import Any

from simpleeval import SimpleEval
from text_to_num import alpha2digit

log = logging.getLogger(__name__)

NUMBER_LANGUAGES = frozenset({"en", "fr", "de", "es", "pt", "it", "nl", "da"})
SMALL_NUMBERS = {
    "en": "zero one two three four five six seven eight nine ten",
    "fr": "zéro un deux trois quatre cinq six sept huit neuf dix",
    "de": "null eins zwei drei vier fünf sechs sieben acht neun zehn",
}
ARTICLES = {"en": ("a", "an"), "fr": ("un", "une"), "de": ("ein", "eine", "einen", "einem")}
# (words, symbol): longer phrases first
OPERATORS = {
    "en": [
        ("to the power of", "**"),
        ("multiplied by", "*"),
        ("divided by", "/"),
        ("times", "*"),
        ("over", "/"),
        ("plus", "+"),
        ("minus", "-"),
        ("squared", "**2"),
        ("cubed", "**3"),
        ("x", "*"),
    ],
    "fr": [
        ("multiplié par", "*"),
        ("divisé par", "/"),
        ("puissance", "**"),
        ("au carré", "**2"),
        ("fois", "*"),
        ("plus", "+"),
        ("moins", "-"),
    ],
    "de": [
        ("multipliziert mit", "*"),
        ("geteilt durch", "/"),
        ("zum quadrat", "**2"),
        ("hoch", "**"),
        ("mal", "*"),
        ("durch", "/"),
        ("plus", "+"),
        ("minus", "-"),
    ],
}
PERCENT_OF = {
    "en": r"(?:percent|per cent|%)\s+of",
    "fr": r"(?:pour ?cent|%)\s+(?:de|du|des)",
    "de": r"(?:prozent|%)\s+von",
}
DECIMAL_COMMA = frozenset({"fr", "de", "es", "pt", "it", "nl", "da"})
ALLOWED = re.compile(r"^[0-9.+\-*/() ]+$")
MAX_POWER = 100  # a larger power is not a sum anyone says
UNIT_WORDS = {"kilos": "kilogram", "kilo": "kilogram", "degrees": "", "degree": "", "per": "/"}


def digits(text: str, language: str) -> str:
    """`text` with its number words as digits ("twelve times seven" → "12 times 7")."""
    lang = language if language in NUMBER_LANGUAGES else "en"
    text = alpha2digit(text.lower(), lang)
    small = {w: str(i) for i, w in enumerate(SMALL_NUMBERS.get(lang, "").split())}
    return " ".join(small.get(word, word) for word in text.split())


def spoken_sum(words: str, language: str) -> tuple[str, float] | None:
    """The expression said in `words` and its value, or None when the words are not a sum
    (anything but numbers and operator words) or it has no value (a division by zero)."""
    lang = language if language in OPERATORS else "en"
    text = digits(words.strip(" ?.!"), lang)
    # "two hundred and forty" may be written "200 and 40" (whisper): one number, not a sum
    text = re.sub(r"\b(\d+00) (?:and|und|et) (\d{1,2})\b", lambda m: str(int(m[1]) + int(m[2])), text)
    if lang in DECIMAL_COMMA:
        text = re.sub(r"(\d),(\d)", r"\1.\2", text)
    else:
        text = re.sub(r"(\d),(\d{3})\b", r"\1\2", text)
    text = re.sub(rf"(\d+(?:\.\d+)?)\s*{PERCENT_OF.get(lang, '%')}", r"(\1/100)*", text)
    text = re.sub(r"(\d+(?:\.\d+)?)\s*%", r"(\1/100)", text)
    for said, symbol in OPERATORS[lang]:
        text = re.sub(rf"(?<![\w]){re.escape(said)}(?![\w])", f" {symbol} ", text)
    expression = " ".join(text.replace("^", "**").split())
    if not ALLOWED.match(expression) or not re.search(r"\d\s*[-+*/]", expression):
        return None
    if any(float(p) > MAX_POWER for p in re.findall(r"\*\*\s*\(?\s*(\d+(?:\.\d+)?)", expression)):
        return None
    try:
        value = float(SimpleEval().eval(expression))
    except (ZeroDivisionError, OverflowError, SyntaxError, ValueError, TypeError) as exc:
        log.info("no value for %r: %s", expression, exc)
        return None
    except Exception as exc:  # simpleeval's own limits (a power too large, ...)
        log.info("not evaluated %r: %s", expression, exc)
        return None
    if math.isnan(value) or math.isinf(value) or abs(value) > 1e15:
        return None
    return expression, value


def spoken_number(value: float, language: str = "en") -> str:
    """A number as it is best read aloud: whole numbers whole, others to 2 decimals (4 significant
    digits below 1), with the language's decimal comma."""
    if value == int(value) and abs(value) < 1e15:
        text = str(int(value))
    elif abs(value) >= 1:
        text = f"{value:.2f}".rstrip("0").rstrip(".")
    else:
        text = f"{value:.4g}"
    return text.replace(".", ",") if language in DECIMAL_COMMA else text


@functools.cache
def _units() -> Any:
    import pint  # ~0.4 s: only when a conversion is asked for

    return pint.UnitRegistry()


def _unit(words: str) -> str:
    kept = [UNIT_WORDS.get(w, w) for w in words.lower().strip(" ?.!").split()]
    return "_".join(w for w in kept if w).replace("_/_", "/")


def convert(quantity: str, unit: str, language: str = "en") -> tuple[float, str, float, str] | None:
    """ "a pound" in "grams" → (1, "pound", 453.59, "gram"); None when either is not a unit or
    they do not convert (English unit names)."""
    said = digits(quantity.strip(" ?.!"), language)
    match = re.fullmatch(r"(?:(?:a|an|one)\s+)?(\d+(?:[.,]\d+)?)?\s*(.+)", said)
    if match is None:
        return None
    amount = float(match.group(1).replace(",", ".")) if match.group(1) else 1.0
    registry = _units()
    try:
        source, target = registry.parse_units(_unit(match.group(2))), registry.parse_units(_unit(unit))
        result = registry.Quantity(amount, source).to(target)
    except Exception as exc:  # pint's undefined unit, dimensionality and parse errors
        log.info("no conversion of %r to %r: %s", quantity, unit, exc)
        return None
    return amount, str(source), float(result.magnitude), str(target)
