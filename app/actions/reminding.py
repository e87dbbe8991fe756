"""The reminder and alarm skills: "remind me at five to call Anna", "remind me in ten minutes to
check the oven", "set an alarm for seven tomorrow", "wake me up at 6:30", "snooze", "what are my
reminders", "cancel my alarms". The words are split into the moment (when.py) and what to be
reminded of; a request without a moment it can read is answered with a question, never claimed.
When one comes it is announced through `announce(text, language, source)`.

Threads: `takes`/`handle` on the llm thread; `_due` on the reminders' thread (reminders.py).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

from app.actions.calc import digits
from app.actions.intents import Refused, Request
from app.actions.reminders import Reminder, Reminders
from app.actions.when import clock_text, day_text, when_said

REMINDER_INTENTS = frozenset(
    {"TalkRemind", "TalkAlarm", "TalkSnooze", "TalkReminders", "TalkRemindersCancel"}
)
SNOOZE_MINUTES = 9
# The words that start the moment ("at five") or what to be reminded of ("to call Anna")
MOMENT = {
    "en": ("at", "in", "on", "tomorrow", "tonight", "today", "this", "next", "for"),
    "fr": (
        "à",
        "dans",
        "demain",
        "ce",
        "lundi",
        "mardi",
        "mercredi",
        "jeudi",
        "vendredi",
        "samedi",
        "dimanche",
    ),
    "de": ("um", "in", "morgen", "heute", "am"),
}
TASK = {"en": ("to", "about", "that"), "fr": ("de", "d'", "que", "qu'"), "de": ("dass", "an", "zu")}

Render = Callable[[str, str, str, dict[str, Any]], str]  # (language, intent, key, slots) -> text


class Reminding:
    def __init__(
        self,
        store: Callable[[Callable[[Reminder, bool], None]], Reminders],
        render: Render,
        announce: Callable[[str, str, str], None],
        now: Callable[[], datetime] = datetime.now,
    ) -> None:
        """`store(on_due)`: the reminders' store, told whom to call when one comes."""
        self.reminders = store(self._due)
        self._render = render
        self._announce = announce
        self._now = now
        self._last_alarm: Reminder | None = None

    def moment(self, request: Request) -> tuple[datetime, str] | None:
        """(when, what to be reminded of) in the request's words; None when no moment is read.
        An alarm's words are all the moment. A reminder's are split where the moment and the
        task are each clean of the other's words ("to call Anna | at five", "in ten minutes |
        to check the oven", "demain à sept heures | d'appeler Anna")."""
        said = request.said.get("anything", "").strip(" .!?")
        lang, now = request.language, self._now()
        if request.intent == "TalkAlarm":
            when = when_said(said, lang, now)
            return (when, "") if when else None
        words = re.sub(r"\b(d|qu)'", r"\1' ", said).split()
        starts, links = MOMENT.get(lang, MOMENT["en"]), TASK.get(lang, TASK["en"])
        found: list[tuple[int, datetime, str]] = []
        for i, word in enumerate(words[1:], 1):
            if word.lower() in starts:  # the moment last: "to call Anna | at five"
                moment_words, task_words = words[i:], words[:i]
            elif word.lower() in links:  # the moment first: "at five | to call Anna"
                moment_words, task_words = words[:i], words[i:]
            else:
                continue
            if (when := when_said(" ".join(moment_words), lang, now)) is not None:
                pairs = ((moment_words, links), (task_words, starts))
                clean = sum(not any(w.lower() in other for w in part) for part, other in pairs)
                found.append((clean, when, " ".join(task_words)))
        if found:
            _, when, task = max(found, key=lambda f: f[0])
            return when, task
        when = when_said(said, lang, now)
        return (when, "") if when else None

    def handle(self, request: Request) -> tuple[dict[str, Any], bool]:
        """The answer's slots and whether anything changed; raises Refused when it cannot."""
        intent, lang, now = request.intent, request.language, self._now()
        if intent in ("TalkRemind", "TalkAlarm"):
            found = self.moment(request)
            if found is None:
                raise Refused("no_time", intent)
            when, task = found
            kind = "alarm" if intent == "TalkAlarm" else "reminder"
            self.reminders.add(when.timestamp(), task, kind, lang)
            return self._slots(when, now, lang) | {"task": task, "what": bare(task)}, True
        if intent == "TalkSnooze":
            alarm = self._last_alarm
            if alarm is None:
                raise Refused("no_alarm", intent)
            numbers = re.findall(r"\d+", digits(request.said.get("anything", ""), lang))
            minutes = int(numbers[0]) if numbers else SNOOZE_MINUTES
            when = now + timedelta(minutes=minutes)
            self.reminders.add(when.timestamp(), alarm.text, "alarm", alarm.language)
            self._last_alarm = None
            return {"minutes": minutes}, True
        if intent == "TalkRemindersCancel":
            return {"canceled": self.reminders.cancel()}, True
        entries = [
            self._slots(datetime.fromtimestamp(r.at), now, lang) | {"what": bare(r.text), "kind": r.kind}
            for r in self.reminders.upcoming()
        ]
        return {"entries": entries}, False

    def _slots(self, when: datetime, now: datetime, lang: str) -> dict[str, Any]:
        return {"when": when, "clock": clock_text(when, lang), "day": day_text(when, now, lang)}

    def _due(self, reminder: Reminder, missed: bool) -> None:
        """The reminders' thread: one came (or came while the app was not running)."""
        when, lang = datetime.fromtimestamp(reminder.at), reminder.language
        slots = self._slots(when, self._now(), lang) | {"task": reminder.text, "what": bare(reminder.text)}
        intent = "TalkAlarmDue" if reminder.kind == "alarm" else "TalkReminderDue"
        if reminder.kind == "alarm" and not missed:
            self._last_alarm = reminder
        text = self._render(lang, intent, "missed" if missed else "default", slots)
        self._announce(text, lang, reminder.kind)


def bare(task: str) -> str:
    """What to be reminded of without its leading link word ("to call Anna" → "call Anna")."""
    return re.sub(r"^(?:(?:to|that|about|de|que|dass|zu|an)\s+|d'\s*|qu'\s*)", "", task.strip(), flags=re.I)
