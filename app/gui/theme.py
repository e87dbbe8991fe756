"""Light and dark: follow the system's color scheme (Qt's style hints) or the user's choice.

`Theme.apply(choice)` with choice "system" | "light" | "dark". The look is Qt's Fusion style with
its own light palette or our dark one, set on the application, so every widget and the chat's
HTML (which reads the palette when it renders) follow. With "system", a change of the desktop's
scheme while the app runs is followed at once (`QStyleHints.colorSchemeChanged`). A platform
without a scheme (offscreen, bare X11) reads as light.

GUI thread only.
"""

from __future__ import annotations

import logging

from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtGui import QColor, QGuiApplication, QPalette
from PySide6.QtWidgets import QApplication, QStyleFactory

log = logging.getLogger(__name__)
CHOICES = ("system", "light", "dark")
LABELS = {"system": "Same as the system", "light": "Light", "dark": "Dark"}

# The dark palette (Fusion's roles). Every text color on its background meets WCAG AA (4.5:1;
# tests/test_contrast.py measures them): text on base 14.5:1, placeholder 6.5:1, selected 4.9:1.
DARK = {
    QPalette.ColorRole.Window: "#202226",
    QPalette.ColorRole.WindowText: "#e8e8ea",
    QPalette.ColorRole.Base: "#17181b",
    QPalette.ColorRole.AlternateBase: "#26323f",
    QPalette.ColorRole.ToolTipBase: "#2b2d31",
    QPalette.ColorRole.ToolTipText: "#e8e8ea",
    QPalette.ColorRole.PlaceholderText: "#9a9ca3",
    QPalette.ColorRole.Text: "#e8e8ea",
    QPalette.ColorRole.Button: "#2b2d31",
    QPalette.ColorRole.ButtonText: "#e8e8ea",
    QPalette.ColorRole.BrightText: "#ff6b5e",
    QPalette.ColorRole.Light: "#3a3d42",
    QPalette.ColorRole.Midlight: "#33363b",
    QPalette.ColorRole.Mid: "#4a4d54",
    QPalette.ColorRole.Dark: "#151618",
    QPalette.ColorRole.Shadow: "#000000",
    QPalette.ColorRole.Highlight: "#3071c0",
    QPalette.ColorRole.HighlightedText: "#ffffff",
    QPalette.ColorRole.Link: "#7fb2ff",
    QPalette.ColorRole.LinkVisited: "#b59cff",
}
DISABLED_DARK = {
    QPalette.ColorRole.WindowText: "#7d8087",
    QPalette.ColorRole.Text: "#7d8087",
    QPalette.ColorRole.ButtonText: "#7d8087",
}


# Fusion's light palette, but for the selection: its #308cc6 under white text is 3.7:1.
LIGHT = {QPalette.ColorRole.Highlight: "#2b6cb0"}


def light_palette(standard: QPalette) -> QPalette:
    pal = QPalette(standard)
    for role, color in LIGHT.items():
        pal.setColor(role, QColor(color))
    return pal


def dark_palette() -> QPalette:
    pal = QPalette()
    for role, color in DARK.items():
        pal.setColor(role, QColor(color))
    for role, color in DISABLED_DARK.items():
        pal.setColor(QPalette.ColorGroup.Disabled, role, QColor(color))
    return pal


_THEME: Theme | None = None


def theme() -> Theme:
    """The application's Theme (created on first use; needs a QApplication)."""
    global _THEME
    if _THEME is None:
        app = QApplication.instance()
        assert isinstance(app, QApplication), "create the QApplication first"
        _THEME = Theme(app)
        _THEME.destroyed.connect(_forget)
    return _THEME


def _forget() -> None:
    global _THEME
    _THEME = None


class Theme(QObject):
    """Owns the application's look. `changed(dark)` after every switch."""

    changed = Signal(bool)

    def __init__(self, app: QApplication) -> None:
        super().__init__(app)
        self._app = app
        self.choice = "system"
        self.dark = False
        self._fusion = QStyleFactory.create("Fusion")
        app.setStyle(self._fusion)
        self._light = light_palette(self._fusion.standardPalette())
        self._system = QGuiApplication.styleHints().colorScheme()
        QGuiApplication.styleHints().colorSchemeChanged.connect(self._system_changed)

    def apply(self, choice: str) -> None:
        """Use `choice` ("system", "light" or "dark"; anything else means "system")."""
        self.choice = choice if choice in CHOICES else "system"
        dark = self._system == Qt.ColorScheme.Dark if self.choice == "system" else self.choice == "dark"
        self.dark = dark
        self._app.setPalette(dark_palette() if dark else self._light)
        for widget in self._app.allWidgets():
            # Qt 6.11: the palette change does not reach widgets under a style sheet (they
            # keep the old one); setting the sheet again re-polishes them with the new palette.
            if widget.styleSheet():
                widget.setStyleSheet(widget.styleSheet())
        log.info("theme: %s (%s)", "dark" if dark else "light", self.choice)
        self.changed.emit(dark)

    def _system_changed(self, scheme: Qt.ColorScheme) -> None:
        self._system = scheme
        if self.choice == "system":
            self.apply("system")
