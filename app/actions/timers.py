"""Kitchen timers: several at once, each with an optional name; pause, resume, add or take off
time, cancel, and how long is left. A timer that ends is taken off the list and handed to
`on_done` (the assistant announces it).

Threads: every method may be called from any thread (one lock). `on_done` runs on the timers'
own thread ("timers", started with the first timer), never under the lock; `on_change` (the
list as `TimerView`s, for a window's countdown) on the thread that changed it, never under it.
Timers live as long as the process: they are not saved (alarms and reminders would be).
"""

from __future__ import annotations

import itertools
import math
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from app.actions.sleeper import Sleeper


@dataclass
class Timer:
    id: int
    seconds: int  # its length as set
    name: str = ""
    deadline: float | None = None  # monotonic time it ends, while it runs
    paused_left: float | None = None  # seconds left, while it is paused

    @property
    def running(self) -> bool:
        return self.deadline is not None

    def left(self, now: float) -> float:
        """Seconds left (0 once it has ended)."""
        if self.deadline is not None:
            return max(0.0, self.deadline - now)
        return self.paused_left or 0.0

    def describe(self, now: float) -> dict[str, Any]:
        """The fields Home Assistant's timer answers read (HassTimerStatus)."""
        left = math.ceil(self.left(now))
        hours, minutes, seconds = left // 3600, left % 3600 // 60, left % 60
        if hours:  # "1 hour and 5 minutes" is precise enough
            seconds = 0
        return {
            "id": self.id,
            "name": self.name,
            "area": None,
            "is_active": self.running,
            "total_seconds_left": left,
            "rounded_hours_left": hours,
            "rounded_minutes_left": minutes,
            "rounded_seconds_left": seconds,
            "start_hours": self.seconds // 3600,
            "start_minutes": self.seconds % 3600 // 60,
            "start_seconds": self.seconds % 60,
        }


@dataclass(frozen=True)
class TimerView:
    """A timer as it was at `at` (the timers' clock): enough to count down without asking."""

    id: int
    name: str
    seconds: int
    running: bool
    left_s: float
    at: float

    def left(self, now: float) -> float:
        return max(0.0, self.left_s - (now - self.at)) if self.running else self.left_s


class Timers(Sleeper):
    def __init__(
        self,
        on_done: Callable[[Timer], None],
        clock: Callable[[], float] = time.monotonic,
        on_change: Callable[[tuple[TimerView, ...]], None] | None = None,
    ) -> None:
        super().__init__()
        self.on_done = on_done
        self.on_change = on_change
        self.clock = clock
        self._ids = itertools.count(1)
        self._timers: list[Timer] = []

    def start(self, seconds: int, name: str = "") -> Timer:
        """A new running timer of `seconds` (at least 1)."""
        timer = self._start(seconds, name)
        self._changed(True)
        return timer

    def _start(self, seconds: int, name: str) -> Timer:
        with self._wake:
            timer = Timer(next(self._ids), max(1, int(seconds)), name.strip())
            timer.deadline = self.clock() + timer.seconds
            self._timers.append(timer)
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, daemon=True, name="timers")
                self._thread.start()
            self._wake.notify()
            return timer

    def all(self) -> list[Timer]:
        """The timers, the one that ends first first (paused ones last)."""
        with self._wake:
            now = self.clock()
            return sorted(self._timers, key=lambda t: (not t.running, t.left(now)))

    def by_id(self, timer_id: int) -> Timer | None:
        return next((t for t in self.all() if t.id == timer_id), None)

    def find(self, name: str = "", seconds: int | None = None) -> list[Timer]:
        """The timers named `name` (case does not matter) and/or set for `seconds`; all of them
        when neither is given."""
        wanted = name.strip().lower()
        return [
            t
            for t in self.all()
            if (not wanted or t.name.lower() == wanted) and (seconds is None or t.seconds == seconds)
        ]

    def cancel(self, timer: Timer) -> bool:
        return self._changed(self._cancel(timer))

    def _cancel(self, timer: Timer) -> bool:
        with self._wake:
            if timer not in self._timers:
                return False
            self._timers.remove(timer)
            self._wake.notify()
            return True

    def pause(self, timer: Timer) -> bool:
        return self._changed(self._pause(timer))

    def _pause(self, timer: Timer) -> bool:
        with self._wake:
            if timer not in self._timers or timer.deadline is None:
                return False
            timer.paused_left, timer.deadline = timer.left(self.clock()), None
            self._wake.notify()
            return True

    def resume(self, timer: Timer) -> bool:
        return self._changed(self._resume(timer))

    def _resume(self, timer: Timer) -> bool:
        with self._wake:
            if timer not in self._timers or timer.deadline is not None:
                return False
            timer.deadline, timer.paused_left = self.clock() + (timer.paused_left or 0.0), None
            self._wake.notify()
            return True

    def add(self, timer: Timer, seconds: float) -> bool:
        """Add `seconds` (negative: take off; it ends at once when none are left)."""
        return self._changed(self._add(timer, seconds))

    def _add(self, timer: Timer, seconds: float) -> bool:
        with self._wake:
            if timer not in self._timers:
                return False
            if timer.deadline is not None:
                timer.deadline += seconds
            else:
                timer.paused_left = max(0.0, (timer.paused_left or 0.0) + seconds)
            self._wake.notify()
            return True

    def views(self) -> tuple[TimerView, ...]:
        """The timers as they are now, the one ending first first."""
        now = self.clock()
        return tuple(TimerView(t.id, t.name, t.seconds, t.running, t.left(now), now) for t in self.all())

    def _changed(self, changed: bool) -> bool:
        if changed and self.on_change is not None:
            self.on_change(self.views())
        return changed

    def _run(self) -> None:
        while True:
            with self._wake:
                if self._closed:
                    return
                now = self.clock()
                due = [t for t in self._timers if t.deadline is not None and t.deadline <= now]
                for timer in due:
                    self._timers.remove(timer)
                if not due:
                    ends = [t.deadline for t in self._timers if t.deadline is not None]
                    self._wake.wait(min(ends) - now if ends else None)
                    continue
            self._changed(True)
            for timer in due:
                self.on_done(timer)
