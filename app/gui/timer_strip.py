"""The timers that run or wait, above the chat: a name (or its length) and a countdown each,
with Pause/Resume and Cancel buttons; then the reminders and alarms to come, with the time each
comes and Cancel. Hidden while there are none. It counts down on its own (a tick from the
views' `left`) and is redrawn from each `TimersChanged` / `RemindersChanged`. GUI thread.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from datetime import datetime

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QHBoxLayout, QLabel, QPushButton, QWidget

from app.actions.reminders import Reminder
from app.actions.timers import TimerView
from app.actions.when import clock_text, day_text

TICK_MS = 250  # the label changes once a second; a quarter keeps it from skipping a second


def countdown(seconds: float) -> str:
    """ "9:05", "1:02:03": whole seconds left, rounded up (a timer at 0:00 has ended)."""
    left = int(-(-seconds // 1))
    hours, minutes, secs = left // 3600, left % 3600 // 60, left % 60
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


def title(view: TimerView) -> str:
    """The timer's name, else its length ("5 min timer")."""
    if view.name:
        return view.name
    m, s = divmod(view.seconds, 60)
    length = f"{m // 60} h {m % 60} min" if m >= 60 else f"{m} min" if m and not s else f"{m * 60 + s} s"
    return f"{length} timer"


def coming(reminder: Reminder) -> str:
    """ "Alarm 7:00 AM tomorrow", "Reminder 5:00 PM: call Anna"."""
    when = datetime.fromtimestamp(reminder.at)
    day = day_text(when, datetime.now(), "en")
    head = f"{reminder.kind.capitalize()} {clock_text(when, 'en')}{' ' + day if day else ''}"
    what = re.sub(r"^(to|about|that)\s+", "", reminder.text)
    return f"{head}: {what}" if what else head


class TimerStrip(QWidget):
    def __init__(
        self,
        change: Callable[[int, str], None],
        cancel_reminder: Callable[[int], None] = lambda _id: None,
        parent: QWidget | None = None,
    ) -> None:
        """`change(timer_id, "pause" | "resume" | "cancel")`, `cancel_reminder(id)`: what a
        button asks for."""
        super().__init__(parent)
        self.setAccessibleName("Timers and reminders")
        self._change = change
        self._cancel_reminder = cancel_reminder
        self._views: tuple[TimerView, ...] = ()
        self._reminders: tuple[Reminder, ...] = ()
        self._labels: list[tuple[QLabel, TimerView]] = []
        self._layout = QHBoxLayout(self)
        self._layout.setContentsMargins(0, 0, 0, 0)
        self._tick = QTimer(self)
        self._tick.setInterval(TICK_MS)
        self._tick.timeout.connect(self._count)
        self.hide()

    def show_timers(self, views: tuple[TimerView, ...]) -> None:
        self._views = views
        self._rebuild()

    def show_reminders(self, reminders: tuple[Reminder, ...]) -> None:
        self._reminders = reminders
        self._rebuild()

    def _rebuild(self) -> None:
        views = self._views
        while (item := self._layout.takeAt(0)) is not None:
            if (w := item.widget()) is not None:
                w.hide()
                w.setParent(None)  # gone from the strip now, freed by Qt later
                w.deleteLater()
        self._labels = []
        for view in views:
            label = QLabel()
            label.setAccessibleName(f"Timer {title(view)}")
            self._layout.addWidget(label)
            self._labels.append((label, view))
            what = "pause" if view.running else "resume"
            self._button(what.capitalize(), f"{what.capitalize()} the {title(view)}", view.id, what)
            self._button("Cancel", f"Cancel the {title(view)}", view.id, "cancel")
        for reminder in self._reminders:
            label = QLabel(coming(reminder))
            self._layout.addWidget(label)
            button = QPushButton("Cancel")
            button.setAccessibleName(f"Cancel the {reminder.kind} {coming(reminder)}")
            button.clicked.connect(lambda _=False, rid=reminder.id: self._cancel_reminder(rid))
            self._layout.addWidget(button)
        self._layout.addStretch(1)
        self._count()
        self.setVisible(bool(views) or bool(self._reminders))
        (self._tick.start if any(v.running for v in views) else self._tick.stop)()

    def texts(self) -> list[str]:
        """What each timer's label says now."""
        return [label.text() for label, _ in self._labels]

    def _button(self, text: str, name: str, timer_id: int, change: str) -> None:
        button = QPushButton(text)
        button.setAccessibleName(name)
        button.clicked.connect(lambda: self._change(timer_id, change))
        self._layout.addWidget(button)

    def _count(self) -> None:
        now = time.monotonic()
        for label, view in self._labels:
            paused = "" if view.running else " (paused)"
            label.setText(f"{title(view)}  {countdown(view.left(now))}{paused}")
