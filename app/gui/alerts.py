"""What the assistant tells the user on its own, not as a reply: a timer that ended. Shown as a
banner in the window and as a desktop notification from the tray icon (seen when the window is
minimized or closed to the tray); the voice says it too (the core speaks it). GUI thread.
"""

from __future__ import annotations

from PySide6.QtWidgets import QSystemTrayIcon

from app.gui.banners import BannerArea
from app.loop.events import Event, TimerEnded

NOTIFICATION_MS = 10_000


class Alerts:
    def __init__(self, banners: BannerArea, tray: QSystemTrayIcon) -> None:
        self.banners = banners
        self.tray = tray

    def handle(self, ev: Event) -> bool:
        """Show `ev` if it is an alert; False for any other event."""
        if not isinstance(ev, TimerEnded):
            return False
        self.banners.show_message("timer", ev.text, kind="info")
        if self.tray.isVisible() and QSystemTrayIcon.supportsMessages():
            self.tray.showMessage("Timer", ev.text, QSystemTrayIcon.MessageIcon.Information, NOTIFICATION_MS)
        return True
