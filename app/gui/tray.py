"""The system tray icon: Talk, Mute microphone, Show window, Quit.

A tray menu cannot be held like a key, so **Talk** starts listening and the same item (now "Done
talking") ends the turn — the push-to-talk press and release. Clicking the icon shows or hides the
window. Where the desktop has no tray (`QSystemTrayIcon.isSystemTrayAvailable()` is False, e.g. a
bare X server) the icon is not shown, the menu still exists (tests read it) and closing the window
quits as before.

GUI thread only; the callbacks are the window's.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from PySide6.QtGui import QAction, QIcon
from PySide6.QtWidgets import QMenu, QSystemTrayIcon, QWidget

ICON = Path(__file__).resolve().parents[2] / "assets" / "io.github.talkllama.TalkLlama.svg"


@dataclass
class TrayActions:
    """What the tray's items do (the window's methods)."""

    press: Callable[[], None]
    release: Callable[[], None]
    set_muted: Callable[[bool], None]
    toggle_window: Callable[[], None]
    quit: Callable[[], None]


def app_icon() -> QIcon:
    icon = QIcon.fromTheme("io.github.talkllama.TalkLlama")
    return icon if not icon.isNull() else QIcon(str(ICON))


class TrayIcon(QSystemTrayIcon):
    def __init__(self, actions: TrayActions, parent: QWidget) -> None:
        super().__init__(app_icon(), parent)
        self._actions = actions
        self._talking = False
        self.setToolTip("talk-llama")
        self.menu = QMenu(parent)
        self.menu.setAccessibleName("talk-llama tray menu")
        self.talk = self._add("Talk", self._talk)
        self.mute = self._add("Mute microphone", lambda: actions.set_muted(self.mute.isChecked()))
        self.mute.setCheckable(True)
        self.show_window = self._add("Show window", actions.toggle_window)
        self.menu.addSeparator()
        self._add("Quit", actions.quit)
        self.setContextMenu(self.menu)
        self.activated.connect(self._activated)

    @staticmethod
    def available() -> bool:
        return QSystemTrayIcon.isSystemTrayAvailable()

    def _add(self, text: str, slot: Callable[[], None]) -> QAction:
        act = QAction(text, self.menu)
        act.triggered.connect(slot)
        self.menu.addAction(act)
        return act

    def _talk(self) -> None:
        """Talk = press; while listening ("Done talking") = release."""
        if self._talking:
            self._actions.release()
        else:
            self._actions.press()

    def set_muted(self, muted: bool) -> None:
        """Reflect a mute made elsewhere (the window's control)."""
        self.mute.setChecked(muted)

    def set_window_visible(self, visible: bool) -> None:
        self.show_window.setText("Hide window" if visible else "Show window")

    def set_state(self, state: str) -> None:
        """The assistant's state (every change): the tooltip, and Talk / Done talking follow it,
        however the turn was started or ended (tray, key, button, hands-free)."""
        self.setToolTip(f"talk-llama — {state}")
        self._talking = state == "listening"
        self.talk.setText("Done talking" if self._talking else "Talk")

    def _activated(self, reason: QSystemTrayIcon.ActivationReason) -> None:
        if reason == QSystemTrayIcon.ActivationReason.Trigger:
            self._actions.toggle_window()
