"""Which action the user's words ask for: Home Assistant's sentence matcher, `hassil`, over the
sentences of `home-assistant-intents` (timers, the time and date, lists, "never mind"; 50+
languages) and the app's own sentences in assets/intents/<language>.yaml (sums, units, the time
in a place), in the conversation's language.

Only the intents `skills.py` serves are kept: a sentence for a light or a vacuum cleaner is not
taken from the model. Home Assistant's area, floor and device names are empty lists here.

Threads: `read` may be called from any thread; a language's sentences load on first use (~20 ms)
and the first sentence with a number pays hassil's number-word tables once (~0.2-0.5 s: `warm`
pays it ahead, on the caller's thread).
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import home_assistant_intents
import yaml
from hassil import Intents, recognize_all
from hassil.intents import SlotList, TextSlotList

log = logging.getLogger(__name__)

OWN_SENTENCES = Path(__file__).resolve().parents[2] / "assets" / "intents"
EMPTY_LISTS = ("name", "area", "floor")  # Home Assistant's devices and rooms: none on a desktop


@dataclass(frozen=True)
class Request:
    """One reading of the words as an intent: `slots` as values (numbers as numbers), `said`
    the same slots as the words that filled them, `response` the key of its answer template."""

    intent: str
    language: str
    slots: dict[str, Any] = field(default_factory=dict)
    said: dict[str, str] = field(default_factory=dict)
    response: str = "default"
    wildcards: int = 0  # how many slots took free text (a reading with fewer is more certain)


class Refused(Exception):
    """A request that cannot be done: `key` names the sentence that says why, among Home
    Assistant's errors or the answers of intent `group`."""

    def __init__(self, key: str, group: str = "errors") -> None:
        super().__init__(key)
        self.key, self.group = key, group


@dataclass
class Language:
    """One language's matcher and its answer templates."""

    code: str
    intents: Intents
    responses: dict[str, Any]
    slot_lists: dict[str, SlotList]


class IntentReader:
    def __init__(self, served: frozenset[str], own: Path = OWN_SENTENCES) -> None:
        """`served`: the intent names taken (all others are left to the model)."""
        self.served = served
        self.own = own
        self._lock = threading.Lock()
        self._languages: dict[str, Language | None] = {}

    def read(self, text: str, language: str) -> list[Request]:
        """Every served reading of `text` in `language` (a whisper code: "en", "fr"), the most
        certain first; [] when none matches or the language has no sentences."""
        lang = self.language(language)
        if lang is None or not text.strip():
            return []
        found = []
        for result in recognize_all(text, lang.intents, slot_lists=lang.slot_lists, language=lang.code):
            if result.intent.name not in self.served or result.unmatched_entities:
                continue
            slots = {e.name: e.value for e in result.entities_list}
            said = {e.name: str(e.text or e.value).strip() for e in result.entities_list}
            wild = sum(1 for e in result.entities_list if e.is_wildcard)
            found.append(
                Request(result.intent.name, lang.code, slots, said, result.response or "default", wild)
            )
        found.sort(key=lambda r: (r.intent == "TalkCannot", r.wildcards))  # "cannot" only as the last word
        return found

    def templates(self, language: str) -> dict[str, Any]:
        """The answer templates of `language` (Home Assistant's `responses`, the app's merged)."""
        lang = self.language(language)
        return lang.responses if lang is not None else {}

    def warm(self, language: str) -> None:
        """Load `language` and pay hassil's one-time number tables now (blocks ~0.2-0.5 s)."""
        self.read("set a timer for five minutes", language)

    def language(self, code: str) -> Language | None:
        """The loaded language for a whisper code (None: no sentences for it)."""
        code = (code or "en").lower()
        with self._lock:
            if code not in self._languages:
                self._languages[code] = self._load(code)
            return self._languages[code]

    def _load(self, code: str) -> Language | None:
        data = _home_assistant(code)
        if data is None:
            log.info("no intent sentences for language %r: requests go to the model", code)
            return None
        own_file = self.own / f"{code}.yaml"
        if own_file.is_file():
            _merge(data, yaml.safe_load(own_file.read_text(encoding="utf-8")))
        data["intents"] = {k: v for k, v in data["intents"].items() if k in self.served}
        slot_lists: dict[str, SlotList] = {n: TextSlotList.from_strings([]) for n in EMPTY_LISTS}
        return Language(code, Intents.from_dict(data), data.get("responses", {}), slot_lists)


def _home_assistant(code: str) -> dict[str, Any] | None:
    """home-assistant-intents' data for a language code ("pt" finds "pt" or "pt-BR")."""
    known = home_assistant_intents.get_languages()
    name = code if code in known else next((k for k in known if k.split("-")[0].lower() == code), None)
    return home_assistant_intents.get_intents(name) if name else None


def _merge(into: dict[str, Any], extra: dict[str, Any]) -> None:
    """Add the app's sentences (also to Home Assistant's intents), lists and answers (the app's
    win)."""
    for name, intent in extra.get("intents", {}).items():  # more sentences for one of its own
        into.setdefault("intents", {}).setdefault(name, {"data": []})["data"] += intent["data"]
    for key in ("lists", "expansion_rules"):
        into.setdefault(key, {}).update(extra.get(key, {}))
    into["skip_words"] = [*into.get("skip_words", []), *extra.get("skip_words", [])]
    answers = into.setdefault("responses", {}).setdefault("intents", {})
    answers.update(extra.get("responses", {}).get("intents", {}))
