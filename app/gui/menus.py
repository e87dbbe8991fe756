"""The window's menus and the keyboard shortcuts sheet (Help → Keyboard shortcuts, F1).

One table, `window_keys`, lists the keys that are not menu items (push-to-talk, Escape, Enter,
Tab); the sheet shows it together with every menu action's shortcut, read from the actions
themselves, so the sheet cannot drift from what the keys do. GUI thread only.
"""

from __future__ import annotations

import html
from collections.abc import Callable
from dataclasses import dataclass

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction, QActionGroup, QKeySequence
from PySide6.QtWidgets import QDialog, QDialogButtonBox, QLabel, QMainWindow, QVBoxLayout, QWidget

from app.gui import theme
from app.gui.about import AboutDialog
from app.loop.settings import AppSettings


@dataclass
class MenuActions:
    """What the menu items do (the window's methods)."""

    new_conversation: Callable[[], None]
    retry: Callable[[], None]
    export_markdown: Callable[[], None]
    export_json: Callable[[], None]
    memory: Callable[[], None]
    settings: Callable[[], None]
    set_muted: Callable[[bool], None]
    set_theme: Callable[[str], None]
    set_sidebar: Callable[[bool], None]
    quit: Callable[[], None]


def window_keys(ptt_key: str, hands_free: bool) -> list[tuple[str, str]]:
    """Keys that work in the window without a menu item: (keys, what they do)."""
    talk = (
        "Talk to the assistant while it is speaking: it stops and listens"
        if hands_free
        else "Hold to talk, release to send (not while typing in the message box)"
    )
    return [
        (ptt_key, talk),
        ("Esc", "Stop the reply now"),
        ("Enter", "Send the typed message (on a focused button: press it)"),
        (
            "Tab / Shift+Tab",
            "Move between the conversation, the message box, the buttons and the conversations list",
        ),
        ("Enter (conversations list)", "Open the selected conversation"),
        ("F2 (conversations list)", "Rename the selected conversation"),
        ("Delete (conversations list)", "Delete the selected conversation (Undo follows)"),
    ]


def build_menus(window: QMainWindow, do: MenuActions, settings: AppSettings) -> dict[str, QAction]:
    """Fill `window`'s menu bar; returns the actions by name (tests and the tray use them)."""
    bar = window.menuBar()
    acts: dict[str, QAction] = {}

    def add(menu, name: str, text: str, slot, key=None, checkable: bool = False) -> QAction:
        act = QAction(text, window)
        if key is not None:
            act.setShortcut(key)
        act.setCheckable(checkable)
        act.triggered.connect(slot)
        menu.addAction(act)
        acts[name] = act
        return act

    conv = bar.addMenu("&Conversation")
    add(conv, "new", "&New conversation", do.new_conversation, QKeySequence("Ctrl+N"))
    add(conv, "retry", "&Retry last reply", do.retry, QKeySequence("Ctrl+R"))
    add(conv, "export_md", "Export as &Markdown…", do.export_markdown, QKeySequence("Ctrl+E"))
    add(conv, "export_json", "Export as &JSON…", do.export_json)
    add(conv, "memory", "What I re&member…", do.memory)
    conv.addSeparator()
    add(conv, "mute", "&Mute microphone", lambda: do.set_muted(acts["mute"].isChecked()), "Ctrl+M", True)
    add(conv, "settings", "&Settings…", do.settings, QKeySequence("Ctrl+,"))
    conv.addSeparator()
    add(conv, "quit", "&Quit", do.quit, QKeySequence("Ctrl+Q"))

    view = bar.addMenu("&View")
    sidebar = add(
        view,
        "sidebar",
        "&Conversations list",
        lambda: do.set_sidebar(acts["sidebar"].isChecked()),
        "Ctrl+B",
        True,
    )
    sidebar.setChecked(settings.sidebar)
    looks = view.addMenu("&Appearance")
    group = QActionGroup(window)
    for choice in theme.CHOICES:
        act = add(looks, f"theme_{choice}", theme.LABELS[choice], lambda _=False, c=choice: do.set_theme(c))
        act.setCheckable(True)
        act.setChecked(choice == settings.theme)
        group.addAction(act)

    help_menu = bar.addMenu("&Help")
    add(help_menu, "shortcuts", "&Keyboard shortcuts", lambda: KeyboardSheet(window, acts).exec(), "F1")
    add(help_menu, "about", "&About talk-llama", lambda: AboutDialog(window).exec())
    return acts


class KeyboardSheet(QDialog):
    """Every shortcut of the window, in one list."""

    def __init__(self, window: QWidget, actions: dict[str, QAction]) -> None:
        super().__init__(window)
        self.setWindowTitle("Keyboard shortcuts")
        self.setAccessibleName("Keyboard shortcuts")
        settings = getattr(window, "settings", None)
        rows = window_keys(getattr(settings, "ptt_key", "Space"), getattr(settings, "hands_free", False))
        for act in actions.values():
            if not act.shortcut().isEmpty():
                what = act.text().replace("&", "").rstrip("…")
                rows.append((act.shortcut().toString(QKeySequence.SequenceFormat.NativeText), what))
        self.rows = rows
        cells = "".join(
            f"<tr><td style='padding:3px 14px 3px 0'><b>{html.escape(k)}</b></td>"
            f"<td style='padding:3px 0'>{html.escape(v)}</td></tr>"
            for k, v in rows
        )
        table = QLabel(f"<table>{cells}</table>")
        table.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        table.setAccessibleName("Shortcut list")
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        lay = QVBoxLayout(self)
        lay.addWidget(table)
        lay.addWidget(buttons)
