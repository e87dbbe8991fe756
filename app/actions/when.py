"""When the user said: "at five", "at 7:30 pm", "at seven tomorrow", "tomorrow at 6", "in ninety
seconds", "in two hours", "on Friday at noon" — as a local datetime in the future.

Number words become digits first (calc.digits). A clock time without am/pm is the next one to
come (at 14:30, "at five" is 17:00 today, "at two" is 2:00 tomorrow). A clock time is read here
(dateparser reads a bare "at five" as a day of the month); everything else — "in ten minutes",
"dans dix minutes", "on Friday" — is `dateparser`'s, preferring the future.

Pure functions (dateparser's first call loads its language tables: ~0.1 s).
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta

from app.actions.calc import digits

TOMORROW = {"en": "tomorrow", "fr": "demain", "de": "morgen"}
EVENING = {"en": ("tonight", "this evening", "in the evening"), "fr": ("ce soir",), "de": ("heute abend",)}
WEEKDAYS = {
    "en": ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"),
    "fr": ("lundi", "mardi", "mercredi", "jeudi", "vendredi", "samedi", "dimanche"),
    "de": ("montag", "dienstag", "mittwoch", "donnerstag", "freitag", "samstag", "sonntag"),
}
NOON = {"en": "noon", "fr": "midi", "de": "mittag"}
CLOCK = re.compile(
    r"(?:\bat\b|\bà\b|\bum\b)?\s*(?P<h>\d{1,2})(?:\s*(?::|h|\.)\s*(?P<m>\d{2}))?\s*"
    r"(?P<ampm>a\.?\s?m\.?|p\.?\s?m\.?)?\s*(?:o'clock|heures?|uhr)?",
    re.IGNORECASE,
)


def when_said(text: str, language: str, now: datetime) -> datetime | None:
    """The moment `text` names (None when it names none, or one already past)."""
    lang = language if language in TOMORROW else "en"
    said = " ".join(digits(text, lang).lower().replace("half past", "past-half").split())
    if re.search(r"\b(in|dans)\b\s+\d|\bin\s+(an?|one)\b", said):  # "in 90 seconds": a span from now
        return _dateparser(said, lang, now)
    moment = _clock(said, lang, now)
    if moment is None:
        moment = _dateparser(said, lang, now)
    return moment if moment is not None and moment > now else None


def _clock(said: str, lang: str, now: datetime) -> datetime | None:
    """A clock time (and "tomorrow", "tonight") in `said`; None when it holds none."""
    half = re.search(r"past-half\s+(\d{1,2})", said)
    if half:
        said = said.replace(half.group(0), f"{half.group(1)}:30")
    if NOON[lang] in said:
        said = said.replace(NOON[lang], "12:00")
    clocks = [m for m in CLOCK.finditer(said) if m.group("h")]
    if not clocks:
        return None
    m = clocks[-1]
    hour, minute = int(m.group("h")), int(m.group("m") or 0)
    if hour > 23 or minute > 59:
        return None
    ampm = (m.group("ampm") or "").replace(".", "").replace(" ", "")
    if ampm == "pm" and hour < 12:
        hour += 12
    elif ampm == "am" and hour == 12:
        hour = 0
    evening = any(e in said for e in EVENING[lang])
    if evening and hour < 12:
        hour += 12
    day = now.replace(hour=0, minute=0, second=0, microsecond=0)
    if TOMORROW[lang] in said:
        day += timedelta(days=1)
    elif weekday := next((w for w in WEEKDAYS[lang] if re.search(rf"\b{w}\b", said)), None):
        found = _dateparser(weekday, lang, now)
        day = found.replace(hour=0, minute=0, second=0, microsecond=0) if found is not None else day
    at = timedelta(hours=hour, minutes=minute)
    twelve = [timedelta(hours=12)] if not ampm and not evening and 1 <= hour < 12 else []
    choices = [day + at + extra for extra in (timedelta(0), *twelve)]
    if day.date() == now.date():
        choices += [c + timedelta(days=1) for c in choices]
    return next((c for c in sorted(choices) if c > now), None)  # the next one to come


def _dateparser(said: str, lang: str, now: datetime) -> datetime | None:
    import dateparser  # its tables load on first use

    settings = {"PREFER_DATES_FROM": "future", "RELATIVE_BASE": now.replace(tzinfo=None)}
    found = dateparser.parse(said, languages=[lang], settings=settings)
    return found.replace(tzinfo=now.tzinfo) if found is not None else None


DAYS = {
    "en": (
        "tomorrow",
        "on {}",
        ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"),
    ),
    "fr": ("demain", "{}", ("lundi", "mardi", "mercredi", "jeudi", "vendredi", "samedi", "dimanche")),
    "de": (
        "morgen",
        "am {}",
        ("Montag", "Dienstag", "Mittwoch", "Donnerstag", "Freitag", "Samstag", "Sonntag"),
    ),
}


def clock_text(moment: datetime, language: str) -> str:
    """The time as said in `language`: "5:05 PM", "17 h 05", "17:05 Uhr"."""
    h, m = moment.hour, moment.minute
    if language == "fr":
        return f"{h} h {m:02d}"
    if language == "de":
        return f"{h}:{m:02d} Uhr"
    return f"{12 if h % 12 == 0 else h % 12}:{m:02d} {'AM' if h < 12 else 'PM'}"


def day_text(moment: datetime, now: datetime, language: str) -> str:
    """ "" for today, "tomorrow", else the weekday ("on Friday"); the date beyond a week."""
    tomorrow, on, names = DAYS.get(language, DAYS["en"])
    days = (moment.date() - now.date()).days
    if days == 0:
        return ""
    if days == 1:
        return tomorrow
    if days < 7:
        return on.format(names[moment.weekday()])
    return on.format(moment.strftime("%Y-%m-%d"))
