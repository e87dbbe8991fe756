"""Reminders and alarms: moments on the wall clock, kept in a private file (0600, written
atomically) so that they survive a restart, and said when they come — also while the window is
minimized or closed to the tray (the process runs on). One that came while the app was not
running is said at the next start, as missed.

Threads: every method may be called from any thread (one lock); `on_due(reminder, missed)` runs
on the reminders' thread ("reminders", started by `start`), never under the lock. The thread
wakes at least once a minute, so a clock changed or a machine resumed from sleep is noticed.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path

from app.actions.sleeper import Sleeper
from app.system.paths import private_dir, write_private

log = logging.getLogger(__name__)
RECHECK_S = 60.0


@dataclass(frozen=True)
class Reminder:
    id: int
    at: float  # epoch seconds
    text: str  # what to remind of ("" for an alarm)
    kind: str = "reminder"  # or "alarm"
    language: str = "en"


class Reminders(Sleeper):
    def __init__(
        self,
        path: Path,
        on_due: Callable[[Reminder, bool], None],
        clock: Callable[[], float] = time.time,
        on_change: Callable[[tuple[Reminder, ...]], None] | None = None,
    ) -> None:
        """`on_change(upcoming)`: they changed (added, cancelled, said; the thread that changed
        them, never under the lock)."""
        super().__init__()
        self.path = path
        self.on_due = on_due
        self.on_change = on_change
        self.clock = clock
        self._opened = clock()  # one due before this was missed (the app was not running)
        self._items: list[Reminder] = self._read()

    def start(self) -> None:
        """Start saying them when they come (those already past first, as missed)."""
        with self._wake:
            if self._thread is None and not self._closed:
                self._thread = threading.Thread(target=self._run, daemon=True, name="reminders")
                self._thread.start()

    def add(self, at: float, text: str, kind: str = "reminder", language: str = "en") -> Reminder:
        with self._wake:
            item = Reminder(max((r.id for r in self._items), default=0) + 1, at, text.strip(), kind, language)
            self._items.append(item)
            self._save()
            self._wake.notify()
        self._changed()
        return item

    def upcoming(self) -> list[Reminder]:
        """The reminders and alarms still to come, soonest first."""
        with self._wake:
            return sorted(self._items, key=lambda r: r.at)

    def cancel(self, kind: str | None = None, reminder_id: int | None = None) -> int:
        """Forget every one (of `kind`; or the one `reminder_id`); how many."""
        with self._wake:
            gone = [
                r
                for r in self._items
                if (kind is None or r.kind == kind) and (reminder_id is None or r.id == reminder_id)
            ]
            self._items = [r for r in self._items if r not in gone]
            self._save()
            self._wake.notify()
        self._changed()
        return len(gone)

    def _changed(self) -> None:
        if self.on_change is not None:
            self.on_change(tuple(self.upcoming()))

    def _run(self) -> None:
        while True:
            with self._wake:
                if self._closed:
                    return
                now = self.clock()
                due = [r for r in self._items if r.at <= now]
                if due:
                    self._items = [r for r in self._items if r not in due]
                    self._save()
                else:
                    soonest = min((r.at for r in self._items), default=now + RECHECK_S)
                    self._wake.wait(max(0.0, min(RECHECK_S, soonest - now)))
                    continue
            self._changed()
            for reminder in sorted(due, key=lambda r: r.at):
                self.on_due(reminder, reminder.at < self._opened)

    def _read(self) -> list[Reminder]:
        try:
            raw = json.loads(self.path.read_text(encoding="utf-8"))
            return [Reminder(**item) for item in raw]
        except FileNotFoundError:
            return []
        except (OSError, ValueError, TypeError) as exc:  # damaged: said, and started afresh
            log.warning("reminders file %s unreadable (%s): starting with none", self.path, exc)
            return []

    def _save(self) -> None:
        try:
            private_dir(self.path.parent)
            text = json.dumps([asdict(r) for r in self._items], ensure_ascii=False, indent=1)
            write_private(self.path, text)
        except OSError as exc:
            log.warning("reminders not saved to %s: %s", self.path, exc)
