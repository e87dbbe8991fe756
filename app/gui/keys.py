"""Keyboard handling of the main window (an application-wide event filter, GUI thread).

- The push-to-talk key (Space by default) talks while held, wherever the focus is, except while
  typing in a text field: a button with the focus does not take Space (after a click on Stop,
  holding Space talks; it does not press Stop again). Presses and releases go through a
  `HeldKey` shared with the global hotkey, so auto-repeat's release/press pairs never end a hold.
- Enter/Return activates the focused button (Qt only does that for dialog default buttons).
Escape (stop) is a plain shortcut of the window.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QCoreApplication, QEvent, QObject, Signal
from PySide6.QtGui import QKeyEvent, QKeySequence
from PySide6.QtWidgets import (
    QAbstractButton,
    QAbstractSpinBox,
    QApplication,
    QComboBox,
    QLineEdit,
    QPlainTextEdit,
    QTextEdit,
    QWidget,
)

from app.gui.held_key import HeldKey

TEXT_INPUTS = (QLineEdit, QTextEdit, QPlainTextEdit, QAbstractSpinBox, QComboBox)
ENTER_KEYS = (0x01000004, 0x01000005)  # Qt.Key_Return, Qt.Key_Enter


def _app() -> QCoreApplication:
    app = QApplication.instance()
    assert app is not None, "a QApplication exists before any window"
    return app


class WindowKeys(QObject):
    """The window's keys. `held` is the push-to-talk hold (also fed by the global hotkey); its
    settled release arrives on a timer thread and is handed to the GUI thread by a signal."""

    _released = Signal()

    def __init__(
        self,
        window: QWidget,
        ptt_button: QAbstractButton,
        press: Callable[[], None],
        release: Callable[[], None],
    ) -> None:
        super().__init__(window)
        self.window, self.ptt_button = window, ptt_button
        self.press, self.release = press, release
        self.ptt_key = "Space"
        self._released.connect(self._show_released)
        self.held = HeldKey(self._pressed, self._released_elsewhere)
        self.window_active = False  # read by the global hotkey's thread: the window has the keys

    def _pressed(self) -> None:
        self.ptt_button.setDown(True)
        self.press()

    def _released_elsewhere(self) -> None:
        self.release()  # thread-safe; the button's look follows on the GUI thread
        self._released.emit()

    def _show_released(self) -> None:
        self.ptt_button.setDown(False)

    def install(self) -> None:
        _app().installEventFilter(self)

    def remove(self) -> None:
        _app().removeEventFilter(self)
        self.held.cancel()

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:
        kind = event.type()
        if obj is self.window and kind in (QEvent.Type.WindowActivate, QEvent.Type.WindowDeactivate):
            self.window_active = kind == QEvent.Type.WindowActivate
            return False
        if kind not in (QEvent.Type.KeyPress, QEvent.Type.KeyRelease) or not isinstance(event, QKeyEvent):
            return False
        focus = QApplication.focusWidget() or (obj if isinstance(obj, QWidget) else None)
        if focus is not None and focus.window() is not self.window:
            return False  # a dialog
        is_ptt = QKeySequence(event.key()).toString() == self.ptt_key
        typing = isinstance(focus, TEXT_INPUTS) and not (isinstance(focus, QTextEdit) and focus.isReadOnly())
        if isinstance(focus, QAbstractButton) and focus is not self.ptt_button and not is_ptt:
            if event.key() in ENTER_KEYS and not event.isAutoRepeat():
                if kind == QEvent.Type.KeyPress:
                    focus.animateClick()
                return True
            return False  # arrows and the rest: the button's own keys
        if not is_ptt or typing:
            return False
        if kind == QEvent.Type.KeyPress:
            self.held.down()  # a repeat continues the hold; so does a release/press pair
        elif not event.isAutoRepeat():
            self.held.up()
        return True
