"""`talk-llama` with no command: the desktop window."""

from __future__ import annotations

import logging
import os
import sys

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication

from app.gui.display import choose_platform
from app.gui.main_window import MainWindow
from app.logs import since_start_ms
from app.loop.settings import AppSettings

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
    app = QApplication.instance() or QApplication(argv or sys.argv[:1])
    log.info("Qt platform: %s", app.platformName())
    app.setApplicationName("talk-llama")
    app.setDesktopFileName("io.github.talkllama.TalkLlama")
    window = MainWindow(AppSettings.load())
    if minimized:
        window.showMinimized()
    else:
        window.show()  # the window appears at once; models load in the background
    window.start_assistant()
    # the first turn of the event loop: the window has been mapped and painted
    QTimer.singleShot(0, lambda: log.info("window shown %.0f ms after the process started", since_start_ms()))
    return app.exec()
