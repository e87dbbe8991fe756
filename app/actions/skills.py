"""Carrying out what the user asked for: `Actions.pick` finds the first reading of the words
that a skill here takes (pure: nothing happens yet), `Actions.do` does it and words the answer
with the language's template (Home Assistant's answers for its intents, the app's for its own;
rendered in Jinja's sandbox).

A reading whose free text is not what the skill needs ("what is the capital of France" is no
sum) is left to the model. An action that cannot be done ("cancel the timer" with none running)
answers with Home Assistant's own error sentence; it is never claimed.

Threads: `pick` and `do` run on the llm thread; timers end on the timers' thread, reminders
and alarms come on the reminders' thread, and both are announced through `announce(text,
language, source)`.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from jinja2.sandbox import SandboxedEnvironment

from app.actions import calc, clock
from app.actions.controls import CONTROLS, Controls
from app.actions.intents import IntentReader, Refused, Request
from app.actions.lists import Lists
from app.actions.reminders import Reminder, Reminders
from app.actions.reminding import REMINDER_INTENTS, Reminding
from app.actions.timers import Timer, Timers, TimerView
from app.system.paths import data_dir

log = logging.getLogger(__name__)

TIMER_INTENTS = frozenset(
    {
        "HassStartTimer",
        "HassCancelTimer",
        "HassCancelAllTimers",
        "HassPauseTimer",
        "HassUnpauseTimer",
        "HassIncreaseTimer",
        "HassDecreaseTimer",
        "HassTimerStatus",
    }
)
SERVED = TIMER_INTENTS | {
    "HassGetCurrentTime",
    "HassGetCurrentDate",
    "HassShoppingListAddItem",
    "HassNevermind",
    "TalkCalculate",
    "TalkConvert",
    "TalkTimeIn",
    "TalkListRead",
    "TalkListAdd",
    *REMINDER_INTENTS,
    *CONTROLS,
    "TalkStop",
    "TalkCannot",  # asked for what no tool here does (messages, lights, music, the weather)
}
LISTS = {"default": "shopping", "todo": "to-do", "notes": "notes"}  # a list's answer key: its file

# Requests that only tell something: their whole sentence matched is a finished turn (an early
# end is repaired by going on talking, and nothing was done twice)
TELLING = frozenset(
    {
        "HassGetCurrentTime", "HassGetCurrentDate", "TalkTimeIn", "TalkCalculate", "TalkConvert",
        "HassTimerStatus", "TalkListRead", "TalkReminders",
    }
)  # fmt: skip

# What each action is called where the window and the terminal show that it ran
DONE = {
    "HassStartTimer": "Started a timer",
    "HassCancelTimer": "Cancelled a timer",
    "HassCancelAllTimers": "Cancelled the timers",
    "HassPauseTimer": "Paused a timer",
    "HassUnpauseTimer": "Resumed a timer",
    "HassIncreaseTimer": "Added time to a timer",
    "HassDecreaseTimer": "Took time off a timer",
    "HassTimerStatus": "Looked at the timers",
    "HassGetCurrentTime": "Read the clock",
    "HassGetCurrentDate": "Read the calendar",
    "TalkTimeIn": "Read the clock",
    "TalkCalculate": "Calculated",
    "TalkConvert": "Converted units",
    "HassShoppingListAddItem": "Added to the shopping list",
    "TalkListRead": "Read a list",
    "TalkListAdd": "Added to a list",
    "HassNevermind": "Nothing to do",
    "TalkCannot": "Asked for something it cannot do yet",
    "TalkOpen": "Asked before opening",
    "TalkConfirm": "Opened it",
    "TalkDeny": "Left it closed",
    "TalkVolume": "Changed the voice's volume",
    "TalkStop": "Stopped",
    "TalkRemind": "Set a reminder",
    "TalkAlarm": "Set an alarm",
    "TalkSnooze": "Snoozed the alarm",
    "TalkReminders": "Read the reminders",
    "TalkRemindersCancel": "Cancelled the reminders",
}


def describe(action: dict[str, Any]) -> str:
    """One line saying what ran and with what ("Started a timer: minutes five")."""
    intent = str(action.get("intent"))
    slots = {k: v for k, v in (action.get("slots") or {}).items() if k != "anything"}
    line = DONE.get(intent, intent) + (
        ": " + ", ".join(f"{k} {v}" for k, v in slots.items()) if slots else ""
    )
    return line + (" (could not be done)" if action.get("failed") and intent != "TalkCannot" else "")


@dataclass(frozen=True)
class Outcome:
    """What was done: the intent, its slots as said, the answer to speak ("" for "never mind"),
    and whether it changed anything (a timer set) or only told something."""

    intent: str
    said: dict[str, str] = field(default_factory=dict)
    reply: str = ""
    changed: bool = False
    failed: bool = False  # it could not be done (the answer says why)

    def record(self) -> dict[str, Any]:
        """The action as the turn's record has it (`--jsonl`, the saved reply's details)."""
        return {
            "intent": self.intent,
            "slots": dict(self.said),
            "changed": self.changed,
            "failed": self.failed,
        }


class Actions:
    def __init__(
        self,
        folder: Path,
        announce: Callable[[str, str, str], None],
        default_language: str = "en",
        reader: IntentReader | None = None,
        on_timers: Callable[[tuple[TimerView, ...]], None] | None = None,
        on_reminders: Callable[[tuple[Reminder, ...]], None] | None = None,
        volume: Callable[[float | None], float | None] | None = None,
    ) -> None:
        """`folder`: where the lists and the reminders are kept; `announce(text, language,
        source)`: a timer ended, a reminder or an alarm came (their threads); `on_timers`,
        `on_reminders`: they changed (all of them now; the thread that changed them);
        `volume(level)`: set the voice's volume (0-1; None: leave it) and return it (None: no voice)."""
        self.reader = reader or IntentReader(SERVED)
        self.lists = Lists(folder / "lists")
        self.default_language = default_language
        self._announce = announce
        self.timers = Timers(self._timer_done, on_change=on_timers)
        self._timer_language: dict[int, str] = {}
        self.controls = Controls(volume)  # opening after a yes; the voice's volume
        self._jinja = SandboxedEnvironment()
        path = folder / "reminders.json"
        store = lambda on_due: Reminders(path, on_due, on_change=on_reminders)  # noqa: E731
        self.reminding = Reminding(store, self._render, announce)

    # ----- reading and doing ---------------------------------------------------------------------
    def pick(self, text: str, language: str = "") -> Request | None:
        """The reading of `text` a skill takes, the most certain first; None: the model answers."""
        for request in self.reader.read(text, language or self.default_language):
            if self._takes(request):
                return request
        return None

    def finished(self, request: Request) -> float | None:
        """The words' end-of-turn probability for a tentative turn (turn_end.py): 1 for a
        request that only tells something, whose words matched a whole sentence; None (the
        sound and the silence decide) for one that changes something."""
        return 1.0 if request.intent in TELLING else None

    def do(self, request: Request) -> Outcome:
        """Carry `request` out and word the answer. Never raises: a request it cannot do says
        why; a tool that fails says Home Assistant's "an unexpected error occurred" (logged)."""
        said = dict(request.said)
        if request.intent not in ("TalkConfirm", "TalkDeny"):  # the question was left unanswered
            self.controls.forget_question()
        try:
            slots, changed = self._handle(request)
        except Refused as refusal:
            text = self._render(request.language, refusal.group, refusal.key, said)
            return Outcome(request.intent, said, text, failed=True)
        except Exception:  # a tool's own failure (a full disk, a library's error): said, not raised
            log.exception("action %s failed", request.intent)
            text = self._render(request.language, "errors", "handle_error", said)
            return Outcome(request.intent, said, text, failed=True)
        text = self._render(request.language, request.intent, request.response, {**said, **slots})
        log.info("action %s %s → %r", request.intent, said, text)
        return Outcome(request.intent, said, text, changed=changed)

    def warm(self) -> None:
        """Pay the first use's costs now (the default language's sentences and number words,
        the unit table: ~0.5-1 s; blocks, any thread)."""
        self.reader.warm(self.default_language)
        calc.convert("a pound", "grams")

    def start(self) -> None:
        """Reminders start to come (those missed while the app was not running first)."""
        self.reminding.reminders.start()

    def close(self) -> None:
        self.timers.close()
        self.reminding.reminders.close()

    # ----- the skills ------------------------------------------------------------------------------
    def _takes(self, request: Request) -> bool:
        """Whether the free text of `request` is what its skill needs (pure)."""
        said, lang = request.said, request.language
        match request.intent:
            case "TalkCalculate":
                return calc.spoken_sum(said.get("expression", ""), lang) is not None
            case "TalkConvert":
                return calc.convert(said.get("quantity", ""), said.get("unit", ""), lang) is not None
            case "TalkTimeIn":
                return clock.zone_of(said.get("place", "")) is not None
            case "HassStartTimer":
                return "conversation_command" not in said and _seconds(request.slots, "") > 0
            case "TalkConfirm" | "TalkDeny":  # a yes or no only answers a question just asked
                return self.controls.asked()
        return request.intent in SERVED

    def _handle(self, request: Request) -> tuple[dict[str, Any], bool]:
        """The slots the answer's template reads beyond the words, and whether anything changed."""
        said, lang, intent = request.said, request.language, request.intent
        if intent in TIMER_INTENTS:
            return self._timer(request)
        if intent in REMINDER_INTENTS:
            return self.reminding.handle(request)
        if intent in CONTROLS:
            return self.controls.handle(request)
        match intent:
            case "HassGetCurrentTime":
                return {"time": clock.now()}, False
            case "HassGetCurrentDate":
                return {"date": clock.now().date()}, False
            case "TalkTimeIn":
                return {
                    "time": clock.now(clock.zone_of(said["place"])),
                    "place": said["place"].strip(" ?.!"),
                }, False
            case "TalkCalculate":
                found = calc.spoken_sum(said["expression"], lang)
                assert found is not None  # _takes checked it
                expression = said["expression"].strip(" ?.!")
                return {"expression": expression, "result": calc.spoken_number(found[1], lang)}, False
            case "TalkConvert":
                converted = calc.convert(said["quantity"], said["unit"], lang)
                assert converted is not None
                quantity, unit = said["quantity"].strip(" ?.!"), said["unit"].strip(" ?.!")
                return {
                    "quantity": quantity,
                    "unit": unit,
                    "result": calc.spoken_number(converted[2], lang),
                }, False
            case "HassShoppingListAddItem":
                self.lists.add(said["item"])
                return {"item": said["item"]}, True
            case "TalkListRead":
                return {"entries": self.lists.items(LISTS[request.response])}, False
            case "TalkListAdd":
                self.lists.add(said["item"], LISTS[request.response])
                return {"item": said["item"]}, True
        if intent == "TalkCannot":  # asked for what no tool does: said so, never claimed
            raise Refused(request.response, group=intent)
        return {}, False  # HassNevermind: nothing to do, nothing to say

    def _timer(self, request: Request) -> tuple[dict[str, Any], bool]:
        slots, intent = request.slots, request.intent
        timers = self.timers
        if intent == "HassStartTimer":
            timer = timers.start(_seconds(slots, ""), request.said.get("name", ""))
            self._timer_language[timer.id] = request.language
            return {}, True
        if intent == "HassCancelAllTimers":
            found = timers.all()
            for timer in found:
                timers.cancel(timer)
            return {"canceled": len(found)}, bool(found)
        start = _seconds(slots, "start_")
        found = timers.find(request.said.get("name", ""), start or None)
        if intent == "HassTimerStatus":
            if not found and (start or "name" in slots):
                raise Refused("timer_not_found")
            now = timers.clock()
            return {"timers": [t.describe(now) for t in found]}, False
        if not found:
            raise Refused("timer_not_found")
        if len(found) > 1:
            raise Refused("multiple_timers_matched")
        timer = found[0]
        match intent:
            case "HassCancelTimer":
                timers.cancel(timer)
            case "HassPauseTimer":
                timers.pause(timer)
            case "HassUnpauseTimer":
                timers.resume(timer)
            case "HassIncreaseTimer":
                timers.add(timer, _seconds(slots, ""))
            case "HassDecreaseTimer":
                timers.add(timer, -_seconds(slots, ""))
        return {}, True

    def _timer_done(self, timer: Timer) -> None:
        """The timers' thread: a timer ended; say so in the language it was set in."""
        language = self._timer_language.pop(timer.id, self.default_language)
        length = self._render(language, "TalkTimerLength", "default", _parts(timer.seconds), sentence=False)
        text = self._render(language, "TalkTimerDone", "default", {"name": timer.name, "length": length})
        self._announce(text, language, "timer")

    # ----- answers -----------------------------------------------------------------------------------
    def _render(
        self, language: str, intent: str, key: str, slots: dict[str, Any], sentence: bool = True
    ) -> str:
        """A template of `language` filled in, on one line ("" when it has none); a `sentence`
        starts with a capital and ends with a stop."""
        templates = self.reader.templates(language)
        group = (
            templates.get("errors", {})
            if intent == "errors"
            else templates.get("intents", {}).get(intent, {})
        )
        source = group.get(key) or group.get("default") or ""
        try:
            text = " ".join(self._jinja.from_string(source).render(slots=slots).split())
        except Exception as exc:  # a template this version of the sentences words differently
            log.warning("answer template %s/%s failed: %s", intent, key, exc)
            text = ""
        text = re.sub(r" +([.,;!?])", r"\1", text)  # a slot left empty leaves no gap
        if not sentence:
            return text
        if text and text[-1] not in ".!?":
            text += "."
        return text[:1].upper() + text[1:]


def open_actions(
    language: str,
    folder: Path | None,
    announce: Callable[[str, str, str], None],
    on_timers: Callable[[tuple[TimerView, ...]], None] | None = None,
    on_reminders: Callable[[tuple[Reminder, ...]], None] | None = None,
    volume: Callable[[float | None], float | None] | None = None,
) -> Actions:
    """The assistant's actions for a whisper `language` ("auto": English until a turn says
    otherwise), keeping lists and reminders in `folder` (None: the app's data folder)."""
    default = language if language not in ("", "auto") else "en"
    folder = folder or data_dir()
    return Actions(folder, announce, default, on_timers=on_timers, on_reminders=on_reminders, volume=volume)


def _parts(seconds: int) -> dict[str, int]:
    return {"hours": seconds // 3600, "minutes": seconds % 3600 // 60, "seconds": seconds % 60}


def _number(value: Any) -> float:
    """A slot's value as a number ("half" is a half)."""
    if isinstance(value, int | float):
        return float(value)
    text = str(value).strip().lower()
    if text in ("half", "1/2", "demi", "demie", "halb", "halbe"):
        return 0.5
    try:
        return float(text)
    except ValueError:
        return 0.0


def _seconds(slots: dict[str, Any], prefix: str) -> int:
    """hours/minutes/seconds slots (with `prefix`: start_hours ...) as seconds."""
    total = sum(
        _number(slots.get(prefix + unit, 0)) * size
        for unit, size in (("hours", 3600), ("minutes", 60), ("seconds", 1))
    )
    return round(total)
