"""Persona: who is talking to whom, and the system prompt that says so.

The prompt is talk-llama's idea adapted to chat templates. `{person}`, `{bot}`, `{time}`,
`{year}` and `{language}` (the language to answer in: "French", or "the language {person}
speaks" when the setting is automatic) are substituted by plain replacement (other braces in a
user's prompt are left alone).

Because the prompt carries the time of day, greedy replies change from one minute to the next.
Tests and benchmarks pin `now` so that a run can be repeated token for token.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from app.catalog.languages import AUTO, language_name

DEFAULT_PROMPT_FILE = Path(__file__).resolve().parents[2] / "assets" / "persona.txt"
PINNED_TIME = datetime(2025, 1, 1, 12, 0)  # what tests and benchmarks render the prompt at
FALLBACK_PROMPT = "You are {bot}, a helpful voice assistant talking with {person}. Answer briefly."


def default_prompt() -> str:
    try:
        return DEFAULT_PROMPT_FILE.read_text(encoding="utf-8").strip()
    except OSError:
        return FALLBACK_PROMPT


@dataclass(frozen=True)
class Persona:
    person: str = "User"
    bot: str = "Aria"
    prompt: str = field(default_factory=default_prompt)
    now: datetime | None = None  # fixed render time (reproducible runs); None: the wall clock
    language: str = "en"  # a whisper code, or "auto" (app/ears/languages.py)

    def render(self, now: datetime | None = None) -> str:
        now = now or self.now or datetime.now()
        values = {
            "{language}": (
                f"the language {self.person} speaks"
                if self.language == AUTO
                else language_name(self.language)
            ),
            "{person}": self.person,
            "{bot}": self.bot,
            "{time}": now.strftime("%H:%M"),
            "{year}": str(now.year),
        }
        text = self.prompt
        for key, value in values.items():
            text = text.replace(key, value)
        return text

    def fingerprint(self) -> str:
        """Identifies the persona independent of the time it was rendered (for sessions)."""
        parts = (self.person, self.bot, self.prompt) + ((self.language,) if self.language != "en" else ())
        raw = "\x00".join(parts).encode("utf-8")
        return hashlib.sha256(raw).hexdigest()[:16]
