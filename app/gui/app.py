"""`talk-llama` with no command: the desktop window."""

from __future__ import annotations

import atexit
import logging
import os
import sys
import threading
from collections.abc import Callable
from typing import NoReturn

from PySide6.QtCore import QEvent, QObject, QTimer
from PySide6.QtWidgets import QApplication, QWidget

from app.gui.display import choose_platform
from app.gui.main_window import MainWindow
from app.gui.tray import app_icon
from app.loop.settings import AppSettings
from app.system.logs import since_start_ms

log = logging.getLogger(__name__)


def run_gui(argv: list[str] | None = None, minimized: bool = False) -> int:
    """Open the window and run Qt's event loop; exit status 2 (and one sentence on stderr) when
    there is no display to open it on."""
    platform = choose_platform()
    if platform.problem:
        print(f"talk-llama: {platform.problem}", file=sys.stderr)
        return 2
    if platform.qpa:
        os.environ["QT_QPA_PLATFORM"] = platform.qpa
    existing = QApplication.instance()
    app = existing if isinstance(existing, QApplication) else QApplication(argv or sys.argv[:1])
    log.info("Qt platform: %s", app.platformName())
    app.setApplicationName("talk-llama")
    app.setDesktopFileName("io.github.talkllama.TalkLlama")
    app.setWindowIcon(app_icon())
    window = MainWindow(AppSettings.load())
    if minimized:
        window.showMinimized()
        window.start_assistant()
    else:
        # Models load once the window has painted: the loading thread's Python work (imports,
        # whisper's load) holds the GIL and would keep the first paint waiting ~1.5 s.
        after_first_paint(window, window.start_assistant)
        window.show()
    return app.exec()


def leave(status: int) -> NoReturn:
    """End the process after the window closed: the conversation is saved (atomically) and the
    devices are closed by then; what Python's own teardown would add is freeing the models'
    memory one object at a time, ~1 s measured (Ctrl+Q to exit 1.01-1.06 s, of which the window's
    close 0.05 s), which the process's end does at once. The assistant's threads are waited for
    first (the llm thread writes the session last), then exit handlers and the log run."""
    for t in threading.enumerate():
        if t.name.startswith("assistant-"):
            t.join(10)
    atexit._run_exitfuncs()
    logging.shutdown()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(status)


class _FirstPaint(QObject):
    """Runs `then` once, after `widget`'s first paint (or after `fallback_ms`, should the
    platform never paint it), and logs when the window was first shown."""

    def __init__(self, widget: QWidget, then: Callable[[], None], fallback_ms: int = 1000) -> None:
        super().__init__(widget)
        self._widget = widget
        self._then: Callable[[], None] | None = then
        widget.installEventFilter(self)
        QTimer.singleShot(fallback_ms, self._fire)

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.Paint and self._then is not None:
            log.info("window shown %.0f ms after the process started", since_start_ms())
            QTimer.singleShot(0, self._fire)  # after this paint reaches the screen
        return False

    def _fire(self) -> None:
        then, self._then = self._then, None
        if then is not None:
            self._widget.removeEventFilter(self)
            then()


def after_first_paint(widget: QWidget, then: Callable[[], None]) -> None:
    """Call `then` on the GUI thread right after `widget` first paints (see `_FirstPaint`)."""
    _FirstPaint(widget, then)
