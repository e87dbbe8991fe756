"""Global push-to-talk (outside the window) where the platform allows it.

X11: pynput's keyboard listener (a maintained library, its own thread) sees the key anywhere.
Wayland and others: global key grabs are not allowed to ordinary apps; `start()` returns
(False, explanation) and the in-window key keeps working. Keys go to the same `HeldKey` as the
window's (one hold, debounced), and are left to the window while it is active (it sees them
itself and knows when a text field is being typed in). Callbacks run on pynput's thread.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from typing import Any

from PySide6.QtGui import QGuiApplication

from app.gui.held_key import HeldKey

log = logging.getLogger(__name__)


class GlobalHotkey:
    """`window_has_keys` is read on pynput's thread: True while the window handles keys itself."""

    def __init__(self, held: HeldKey, window_has_keys: Callable[[], bool] = lambda: False) -> None:
        self.held, self.window_has_keys = held, window_has_keys
        self._listener: Any = None  # pynput's keyboard.Listener (imported when started)

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
            if key == target and not self.window_has_keys():
                self.held.down()

        def release(key) -> None:
            if key == target and not self.window_has_keys():
                self.held.up()

        try:
            listener = keyboard.Listener(on_press=press, on_release=release)
            listener.start()
            self._listener = listener
        except Exception as exc:
            return False, f"Global push-to-talk could not start ({exc}); the in-window key still works."
        return True, ""

    def stop(self) -> None:
        if self._listener is not None:
            self._listener.stop()
            self._listener = None
