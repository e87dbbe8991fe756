"""Global push-to-talk (outside the window) where the platform allows it.

X11: pynput's keyboard listener (a maintained library, its own thread) sees the key anywhere.
Wayland and others: global key grabs are not allowed to ordinary apps; `start()` returns
(False, explanation) and the in-window key keeps working. Callbacks run on pynput's thread;
the AssistantBridge methods they call are thread-safe and return at once.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable

from PySide6.QtGui import QGuiApplication

log = logging.getLogger(__name__)


class GlobalHotkey:
    def __init__(self, on_press: Callable[[], None], on_release: Callable[[], None]) -> None:
        self.on_press, self.on_release = on_press, on_release
        self._listener = None
        self._down = False

    def start(self, key_name: str) -> tuple[bool, str]:
        platform = QGuiApplication.platformName()
        if platform != "xcb" or not os.environ.get("DISPLAY"):
            return False, (
                f"Global push-to-talk is not available on '{platform}' (Wayland does not let apps "
                f"watch keys outside their window). The {key_name} key works while this window is active."
            )
        try:
            from pynput import keyboard
        except Exception as exc:  # python-xlib missing or no X connection
            return False, f"Global push-to-talk unavailable ({exc}); the in-window key still works."
        target = getattr(keyboard.Key, key_name.lower(), None) or keyboard.KeyCode.from_char(
            key_name.lower()[:1]
        )

        def press(key) -> None:
            if key == target and not self._down:
                self._down = True
                self.on_press()

        def release(key) -> None:
            if key == target and self._down:
                self._down = False
                self.on_release()

        try:
            self._listener = keyboard.Listener(on_press=press, on_release=release)
            self._listener.start()
        except Exception as exc:
            return False, f"Global push-to-talk could not start ({exc}); the in-window key still works."
        return True, ""

    def stop(self) -> None:
        if self._listener is not None:
            self._listener.stop()
            self._listener = None
