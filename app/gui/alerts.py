"""What the assistant tells the user on its own, not as a reply: the running timers (a strip
above the chat that counts them down, with Pause and Cancel), and a timer that ended: a banner
in the window and a desktop notification from the tray icon (seen when the window is minimized
or closed to the tray); the voice says it too (the core speaks it). GUI thread.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtWidgets import QSystemTrayIcon

from app.gui.banners import BannerArea
from app.gui.timer_strip import TimerStrip
from app.loop.events import Announcement, Event, RemindersChanged, TimersChanged

NOTIFICATION_MS = 10_000


class Alerts:
    def __init__(
        self,
        banners: BannerArea,
        tray: QSystemTrayIcon,
        change_timer: Callable[[int, str], None],
        cancel_reminder: Callable[[int], None],
    ) -> None:
        self.banners = banners
        self.tray = tray
        self.timers = TimerStrip(change_timer, cancel_reminder)
        banners.pin(self.timers)

    def handle(self, ev: Event) -> bool:
        """Show `ev` if it is an alert; False for any other event."""
        if isinstance(ev, TimersChanged):
            self.timers.show_timers(ev.timers)
            return True
        if isinstance(ev, RemindersChanged):
            self.timers.show_reminders(ev.reminders)
            return True
        if not isinstance(ev, Announcement):
            return False
        self.banners.show_message(ev.source, ev.text, kind="info")
        if self.tray.isVisible() and QSystemTrayIcon.supportsMessages():
            self.tray.showMessage(
                ev.source.capitalize(), ev.text, QSystemTrayIcon.MessageIcon.Information, NOTIFICATION_MS
            )
        return True
