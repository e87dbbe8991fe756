"""AssistantBridge: owns the core Assistant for the GUI and re-emits its events as a Qt signal.

Core events arrive on worker threads; `event` is a Qt signal, so connected slots run on the GUI
thread (queued connection). Creating, reloading and shutting down the Assistant happen on a
short-lived background thread (Anki's background-operation discipline): the GUI never blocks,
and completion or failure comes back as a signal.
"""

from __future__ import annotations

import logging
import threading
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, Signal

from app.brain.records import Message
from app.loop.assistant import Assistant
from app.loop.assistant_config import AssistantConfig
from app.loop.events import Event

if TYPE_CHECKING:
    from app.brain.persona import Persona
    from app.voice.speaker import SpeakerConfig

log = logging.getLogger(__name__)


class AssistantBridge(QObject):
    arrived = Signal(object)  # an assistant event (app.loop.events.Event), delivered on the GUI thread
    shutdown_done = Signal()

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.assistant: Assistant | None = None
        self._lock = threading.Lock()
        self._levels = True
        self._muted = False

    def _forward(self, ev: Event) -> None:
        self.arrived.emit(ev)

    def start(self, config: AssistantConfig) -> None:
        """Start (or restart with new settings) in the background."""
        old = self.assistant
        self.assistant = Assistant(config, self._forward)
        self.assistant.set_level_updates(self._levels)
        self.assistant.set_muted(self._muted)
        new = self.assistant

        def work() -> None:
            with self._lock:
                if old is not None:
                    old.shutdown(free_models=True)
                new.start()

        threading.Thread(target=work, name="gui-assistant-start", daemon=True).start()

    # Thin pass-throughs: each returns immediately.
    def press(self) -> None:
        if self.assistant:
            self.assistant.press()

    def release(self) -> None:
        if self.assistant:
            self.assistant.release()

    def send_text(self, text: str) -> None:
        if self.assistant:
            self.assistant.send_text(text)

    def interrupt(self) -> None:
        if self.assistant:
            self.assistant.interrupt()

    def new_conversation(self) -> None:
        if self.assistant:
            self.assistant.new_conversation()

    def cancel_reminder(self, reminder_id: int) -> None:
        """Cancel a reminder or an alarm (the strip's buttons)."""
        if self.assistant:
            self.assistant.doing.cancel_reminder(reminder_id)

    def change_timer(self, timer_id: int, change: str) -> None:
        """Pause, resume or cancel a timer (the timers strip's buttons)."""
        if self.assistant and change in ("pause", "resume", "cancel"):
            self.assistant.doing.timer(timer_id, change)  # type: ignore[arg-type]

    def open_conversation(self, directory: Path, save: bool = True) -> bool:
        """True when an assistant will switch (a `switched` event follows)."""
        if self.assistant:
            self.assistant.open_conversation(directory, save)
            return True
        return False

    def retry(self) -> None:
        if self.assistant:
            self.assistant.retry()

    def choose_version(self, index: int) -> None:
        if self.assistant:
            self.assistant.choose_version(index)

    def report_memory(self) -> None:
        if self.assistant:
            self.assistant.report_memory()

    def forget(self, key: str) -> None:
        if self.assistant:
            self.assistant.forget(key)

    def change_voice(self, speaker: SpeakerConfig) -> None:
        if self.assistant:
            self.assistant.change_voice(speaker)

    def change_persona(self, persona: Persona) -> None:
        if self.assistant:
            self.assistant.change_persona(persona)

    def share_memory(self, path: Path | None) -> None:
        if self.assistant:
            self.assistant.share_memory(path)

    def set_hands_free(self, on: bool) -> None:
        if self.assistant:
            self.assistant.set_hands_free(on)

    def set_muted(self, muted: bool) -> None:
        """Mute the microphone (kept across restarts)."""
        self._muted = muted
        if self.assistant:
            self.assistant.set_muted(muted)

    def set_level_updates(self, enabled: bool) -> None:
        """Microphone levels only while the window can show them (kept across restarts)."""
        self._levels = enabled
        if self.assistant:
            self.assistant.set_level_updates(enabled)

    def history(self) -> list[Message]:
        conv = self.assistant.conversation if self.assistant else None
        return list(conv.history) if conv else []

    def forgotten(self) -> set[str]:
        """The fact keys the open conversation's memory leaves out (for an export)."""
        conv = self.assistant.conversation if self.assistant else None
        return set(conv.forgotten) if conv else set()

    def shutdown(self, timeout: float = 1.8) -> None:
        """Blocking, bounded: used when the window closes."""
        if self.assistant is not None:
            self.assistant.shutdown(timeout)
        self.shutdown_done.emit()
