"""`talk-llama` with no command: the desktop window."""

from __future__ import annotations

import sys

from PySide6.QtWidgets import QApplication

from app.gui.main_window import MainWindow
from app.loop.settings import AppSettings


def run_gui(argv: list[str] | None = None) -> int:
    app = QApplication.instance() or QApplication(argv or sys.argv[:1])
    app.setApplicationName("talk-llama")
    app.setDesktopFileName("talk-llama")
    window = MainWindow(AppSettings.load())
    window.show()  # the window appears at once; models load in the background
    window.start_assistant()
    return app.exec()
