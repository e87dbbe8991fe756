"""Keyboard handling of the main window (an application-wide event filter, GUI thread).

- The push-to-talk key (Space by default) talks while held, except while typing in a text field
  or when another button has the focus (there Space presses that button, as everywhere).
- Enter/Return activates the focused button (Qt only does that for dialog default buttons).
Escape (stop) is a plain shortcut of the window.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QEvent, QObject
from PySide6.QtGui import QKeySequence
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

TEXT_INPUTS = (QLineEdit, QTextEdit, QPlainTextEdit, QAbstractSpinBox, QComboBox)
ENTER_KEYS = (0x01000004, 0x01000005)  # Qt.Key_Return, Qt.Key_Enter


class WindowKeys(QObject):
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
        self._down = False

    def install(self) -> None:
        QApplication.instance().installEventFilter(self)

    def remove(self) -> None:
        QApplication.instance().removeEventFilter(self)

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:
        kind = event.type()
        if kind not in (QEvent.Type.KeyPress, QEvent.Type.KeyRelease):
            return False
        focus = QApplication.focusWidget() or (obj if isinstance(obj, QWidget) else None)
        if focus is not None and focus.window() is not self.window:
            return False  # a dialog
        if isinstance(focus, QAbstractButton) and focus is not self.ptt_button:
            if event.key() in ENTER_KEYS and not event.isAutoRepeat():
                if kind == QEvent.Type.KeyPress:
                    focus.animateClick()
                return True
            return False  # Space and the rest: the button's own keys
        if QKeySequence(event.key()).toString() != self.ptt_key:
            return False
        if isinstance(focus, TEXT_INPUTS) and not (isinstance(focus, QTextEdit) and focus.isReadOnly()):
            return False  # typing
        if event.isAutoRepeat():
            return True
        if kind == QEvent.Type.KeyPress and not self._down:
            self._down = True
            self.ptt_button.setDown(True)
            self.press()
        elif kind == QEvent.Type.KeyRelease and self._down:
            self._down = False
            self.ptt_button.setDown(False)
            self.release()
        return True
