"""The assistant's actions (app/actions) wired to the rest: the Responder asks them before the
model (llm_worker.py passes them on); a timer that ends, a reminder or an alarm that comes is
shown (`Announcement`) and said right after the sentence being spoken; every change of the timers is a
`TimersChanged` (a window counts them down); a front end pauses, resumes or cancels a timer by
its id (`timer`).

Threads: `timer` from any thread (the timers lock themselves); the callbacks run on the timers'
thread or the one that changed them, and only emit or queue a sentence.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal

from app.actions.reminders import Reminder
from app.actions.skills import Actions, open_actions
from app.actions.timers import TimerView
from app.loop.assistant_config import AssistantConfig
from app.loop.events import Announcement, Event, RemindersChanged, TimersChanged
from app.loop.voice_control import VoiceControl
from app.system.thread_names import named_thread
from app.voice.speaker import SpeakerConfig

TimerChange = Literal["pause", "resume", "cancel"]


class ActionControl:
    def __init__(self, config: AssistantConfig, emit: Callable[[Event], None], voice: VoiceControl) -> None:
        self._emit = emit
        self._voice = voice
        self.actions: Actions | None = None
        if config.actions:
            self.actions = open_actions(
                config.stt.language,
                config.actions_dir,
                self._announce,
                self._timers,
                self._reminders,
                self._volume,
            )

    def start(self) -> None:
        """Pay the actions' first-use costs on a thread of their own (~0.5-1 s)."""
        if self.actions is not None:
            self._reminders(tuple(self.actions.reminding.reminders.upcoming()))  # kept from before
            self.actions.start()
            named_thread(self.actions.warm, "actions-warm").start()

    def timer(self, timer_id: int, change: TimerChange) -> bool:
        """Pause, resume or cancel timer `timer_id`; False when there is no such timer (it ended)."""
        timers = self.actions.timers if self.actions is not None else None
        timer = timers.by_id(timer_id) if timers is not None else None
        if timers is None or timer is None:
            return False
        return {"pause": timers.pause, "resume": timers.resume, "cancel": timers.cancel}[change](timer)

    def close(self) -> None:
        if self.actions is not None:
            self.actions.close()

    def _announce(self, text: str, language: str, source: str) -> None:
        """A timer ended, a reminder or an alarm came (their thread): shown, and said right after
        the sentence being spoken (ahead of the rest of a reply)."""
        self._emit(Announcement(text, source))
        speaker = self._voice.speaker
        if speaker is not None and speaker.available:
            speaker.say(text, language=language, next_up=True)  # after the sentence playing

    def _timers(self, views: tuple[TimerView, ...]) -> None:
        self._emit(TimersChanged(views))

    def _volume(self, level: float | None) -> float | None:
        """The voice's volume (0-1), set to `level` first unless None; None without a voice
        whose volume can change (none, or a `-s` command). Applies from the next sentence."""
        speaker = self._voice.speaker
        config = getattr(speaker, "config", None)
        if speaker is None or not speaker.available or not isinstance(config, SpeakerConfig):
            return None
        if level is not None:
            config.volume = level
        return 1.0 if config.volume is None else config.volume

    def _reminders(self, upcoming: tuple[Reminder, ...]) -> None:
        self._emit(RemindersChanged(upcoming))

    def cancel_reminder(self, reminder_id: int) -> bool:
        """Forget reminder or alarm `reminder_id` (any thread); False when it is gone already."""
        actions = self.actions
        return actions is not None and actions.reminding.reminders.cancel(reminder_id=reminder_id) > 0
