"""The timers that run or wait, above the chat: a name (or its length) and a countdown each,
with Pause/Resume and Cancel buttons; hidden while there are none. It counts down on its own
(a 1 s tick from the views' `left`) and is redrawn from each `TimersChanged`. GUI thread.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QHBoxLayout, QLabel, QPushButton, QWidget

from app.actions.timers import TimerView

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


class TimerStrip(QWidget):
    def __init__(self, change: Callable[[int, str], None], parent: QWidget | None = None) -> None:
        """`change(timer_id, "pause" | "resume" | "cancel")`: what a button asks for."""
        super().__init__(parent)
        self.setAccessibleName("Timers")
        self._change = change
        self._views: tuple[TimerView, ...] = ()
        self._labels: list[tuple[QLabel, TimerView]] = []
        self._layout = QHBoxLayout(self)
        self._layout.setContentsMargins(0, 0, 0, 0)
        self._tick = QTimer(self)
        self._tick.setInterval(TICK_MS)
        self._tick.timeout.connect(self._count)
        self.hide()

    def show_timers(self, views: tuple[TimerView, ...]) -> None:
        self._views = views
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
        self._layout.addStretch(1)
        self._count()
        self.setVisible(bool(views))
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
