"""The window's look and keyboard (issue #16, points 4 and 5): light and dark, following the
system's scheme, narrow and 2× scaled, the keyboard shortcuts sheet, accessible names, the tray
menu (talk, mute, show, quit) and closing to the tray. Real window (offscreen) on the real
assistant; screenshots under tests/artifacts/screenshots/."""

from __future__ import annotations

import os
import subprocess
import sys

from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication, QKeySequence, QPalette
from PySide6.QtWidgets import (
    QAbstractButton,
    QApplication,
    QLabel,
    QWidget,
)

from app.gui.menus import KeyboardSheet
from app.gui.settings_dialog import SettingsDialog
from app.loop.settings import AppSettings
from tests.conftest import espeak
from tests.support.process import LineReader
from tests.test_gui import SHOTS, close_window, open_window, shot


def _window_color() -> str:
    return QApplication.instance().palette().color(QPalette.ColorRole.Window).name()


def test_dark_light_and_following_the_system(qtbot, config_dir, virtual_audio) -> None:
    w = open_window(qtbot, AppSettings(person="Sam", bot="Max", n_ctx=1024, theme="dark"))
    try:
        assert w.theme.dark and _window_color() == "#202226"
        w.input.setFocus()
        qtbot.keyClicks(w.input, "Tell me about the moon in two sentences.")
        qtbot.keyClick(w.input, Qt.Key.Key_Return)
        qtbot.waitUntil(lambda: len(w.chat.messages) == 2 and bool(w.chat.messages[1].latency), timeout=90000)
        qtbot.wait(100)
        # the chat's HTML takes its colors from the dark palette (the muted details line)
        qtbot.waitUntil(lambda: "#9a9ca3" in w.chat.toHtml().lower(), timeout=5000)
        shot(w, "dark-conversation")
        # View → Appearance → Light: applied and remembered
        w.menu_actions["theme_light"].trigger()
        assert not w.theme.dark and _window_color() != "#202226"
        base = QApplication.instance().palette().color(QPalette.ColorRole.Base)
        for widget in (w.chat, w.sidebar.list, w.input):  # the widgets, not only the application
            assert widget.palette().color(QPalette.ColorRole.Base) == base, widget.accessibleName()
        assert AppSettings.load().theme == "light"
        # "Same as the system" follows the desktop's scheme as it changes. Offscreen Qt has no
        # desktop, so the test emits the style hints' signal the desktop would cause (labelled).
        w.menu_actions["theme_system"].trigger()
        hints = QGuiApplication.styleHints()
        hints.colorSchemeChanged.emit(Qt.ColorScheme.Dark)
        assert w.theme.dark and _window_color() == "#202226"
        hints.colorSchemeChanged.emit(Qt.ColorScheme.Light)
        assert not w.theme.dark
        # a manual choice is not overridden by the system
        w.menu_actions["theme_dark"].trigger()
        hints.colorSchemeChanged.emit(Qt.ColorScheme.Light)
        assert w.theme.dark
    finally:
        w.menu_actions["theme_light"].trigger()
        close_window(w)


def test_narrow_window_keeps_every_control_usable(qtbot, config_dir, virtual_audio) -> None:
    w = open_window(qtbot)
    w.resize(400, 640)
    qtbot.waitUntil(lambda: w.width() <= 420, timeout=5000)
    assert w.minimumSizeHint().width() <= 400
    for button in (w.ptt, w.stop_btn, w.send_btn):
        assert button.isVisible() and button.width() >= min(button.minimumSizeHint().width(), 120)
    shot(w, "narrow-400px")
    close_window(w)


def _bubble_widths(chat) -> list[float]:
    from PySide6.QtGui import QTextTable

    doc, layout = chat.document(), chat.document().documentLayout()
    frames = [f for f in doc.rootFrame().childFrames() if isinstance(f, QTextTable)]
    return [layout.frameBoundingRect(f).width() for f in frames]


def test_a_wide_window_keeps_a_reading_width(qtbot, config_dir, virtual_audio) -> None:
    from app.gui.chat_view import READING_WIDTH

    w = open_window(qtbot)
    long = "A sentence long enough to wrap when the bubble is narrow, said a few times over. " * 4
    w.chat.add("user", "Tell me something long.")
    w.chat.add("assistant", long)
    w.chat.redraw()
    w.resize(1400, 800)
    qtbot.waitUntil(lambda: w.chat.width() > 1000, timeout=5000)
    qtbot.waitUntil(lambda: len(_bubble_widths(w.chat)) == 2, timeout=5000)
    qtbot.waitUntil(lambda: max(_bubble_widths(w.chat)) <= READING_WIDTH, timeout=5000)
    shot(w, "reading-width-1400px")
    w.resize(700, 640)  # narrower than the reading width: the bubbles use the space there is
    qtbot.waitUntil(lambda: w.chat.width() < READING_WIDTH, timeout=5000)
    wide = 0.8 * 0.85 * w.chat.viewport().width()  # 85% of the width, less the margins
    qtbot.waitUntil(lambda: min(_bubble_widths(w.chat)) >= wide, timeout=5000)
    close_window(w)


def test_twice_the_scale(tmp_path) -> None:
    """2× scaling (QT_SCALE_FACTOR=2, as on a HiDPI screen), in a process of its own."""
    out = SHOTS / "scaled-2x.png"
    script = (
        "import sys\n"
        "from PySide6.QtWidgets import QApplication\n"
        "from app.gui.main_window import MainWindow\n"
        "from app.loop.settings import AppSettings\n"
        "app = QApplication(sys.argv)\n"
        "assert app.devicePixelRatio() == 2.0, app.devicePixelRatio()\n"
        "from PySide6.QtCore import QTimer\n"
        "w = MainWindow(AppSettings()); w.resize(480, 560); w.show(); w.start_assistant()\n"
        "def done():\n"
        "    if not w.loading.isHidden():\n"
        "        QTimer.singleShot(200, done); return\n"
        "    img = w.grab(); assert img.devicePixelRatio() == 2.0\n"
        f"    img.save({str(out)!r}); w.close(); app.quit()\n"
        "QTimer.singleShot(200, done)\n"
        "app.exec()\n"
    )
    SHOTS.mkdir(parents=True, exist_ok=True)
    env = {"QT_QPA_PLATFORM": "offscreen", "QT_SCALE_FACTOR": "2", "TALK_LLAMA_CONFIG": str(tmp_path)}
    r = subprocess.run(
        [sys.executable, "-c", script], env={**os.environ, **env}, capture_output=True, text=True, timeout=120
    )
    assert r.returncode == 0, r.stderr[-2000:]
    from PySide6.QtGui import QImage

    assert QImage(str(out)).width() == 960


def test_keyboard_shortcuts_sheet_lists_what_the_keys_do(qtbot, config_dir, virtual_audio) -> None:
    w = open_window(qtbot, AppSettings(ptt_key="F8"))
    assert w.menu_actions["shortcuts"].shortcut() == QKeySequence("F1")
    sheet = KeyboardSheet(w, w.menu_actions)
    keys = {k for k, _ in sheet.rows}
    assert {"F8", "Esc", "Enter", "Ctrl+M", "Ctrl+N", "Ctrl+Q", "F1"} <= keys
    assert any("Hold to talk" in what for k, what in sheet.rows if k == "F8")
    sheet.show()
    qtbot.waitExposed(sheet)
    shot(sheet, "keyboard-shortcuts")
    sheet.close()
    # the keys do it: Ctrl+M mutes (every control shows it), again unmutes
    w.activateWindow()
    w.menu_actions["mute"].trigger()
    assert w.bridge.assistant.mics.muted and w.tray.mute.isChecked() and "muted" in w.ptt.text()
    qtbot.waitUntil(lambda: w.bridge.assistant.mic is not None, timeout=10000)
    assert w.bridge.assistant.mic.muted
    w.menu_actions["mute"].trigger()
    assert not w.bridge.assistant.mic.muted and "muted" not in w.ptt.text()
    close_window(w)


def _named(widget: QWidget, window: QWidget) -> bool:
    """A control a screen reader can name: its accessible name, its own text, or a form label."""
    if widget.accessibleName().strip():
        return True
    if isinstance(widget, QAbstractButton | QLabel) and widget.text().replace("&", "").strip():
        return True  # a button or a (selectable) label is read by its text
    return any(label.buddy() is widget and label.text().strip() for label in window.findChildren(QLabel))


def _unnamed(window: QWidget) -> list[str]:
    out = []
    for widget in window.findChildren(QWidget):
        if widget.focusPolicy() == Qt.FocusPolicy.NoFocus or not widget.isVisibleTo(window):
            continue
        parent = widget.parent()
        if parent is not None and any(
            parent.inherits(c) for c in ("QAbstractScrollArea", "QComboBox", "QAbstractSpinBox", "QTabWidget")
        ):
            continue  # a part of a composite control (viewport, editor, tab bar): named as a whole
        if not _named(widget, window):
            out.append(f"{type(widget).__name__} {widget.objectName()!r}")
    return out


def test_every_control_has_an_accessible_name(qtbot, config_dir, virtual_audio) -> None:
    w = open_window(qtbot)
    assert _unnamed(w) == []
    dlg = SettingsDialog(w.settings, w)
    qtbot.addWidget(dlg)
    dlg.show()
    problems = []
    for i in range(dlg.tabs.count()):
        dlg.tabs.setCurrentIndex(i)
        QApplication.processEvents()
        problems += [f"{dlg.tabs.tabText(i)}: {p}" for p in _unnamed(dlg)]
    assert problems == []
    dlg.tabs.setCurrentIndex(dlg.tabs.indexOf(dlg.theme.parentWidget()))
    shot(dlg, "settings-window-tab")
    dlg.close()
    close_window(w)


def test_tray_menu_talks_mutes_shows_and_quits(qtbot, config_dir, virtual_audio, tmp_path) -> None:
    w = open_window(qtbot)
    tray = w.tray
    texts = [a.text() for a in tray.menu.actions() if not a.isSeparator()]
    assert texts == ["Talk", "Mute microphone", "Hide window", "Quit"]
    # Talk = press; the same item (now "Done talking") = release
    tray.talk.trigger()
    qtbot.waitUntil(lambda: w.pill.state == "listening", timeout=5000)
    qtbot.waitUntil(lambda: tray.talk.text() == "Done talking", timeout=5000)
    tray.menu.popup(w.mapToGlobal(w.rect().center()))
    qtbot.waitExposed(tray.menu)
    shot(tray.menu, "tray-menu")
    tray.menu.hide()
    tray.talk.trigger()
    qtbot.waitUntil(lambda: w.pill.state != "listening", timeout=5000)
    qtbot.waitUntil(lambda: tray.talk.text() == "Talk", timeout=5000)
    # a turn started from the tray and ended with the key: the tray's item follows
    tray.talk.trigger()
    qtbot.waitUntil(lambda: w.pill.state == "listening", timeout=5000)
    w.bridge.release()
    qtbot.waitUntil(lambda: tray.talk.text() == "Talk", timeout=5000)
    # mute from the tray shows in the window's menu and button
    tray.mute.trigger()
    assert w.menu_actions["mute"].isChecked() and "muted" in w.ptt.text()
    w.bridge.press()  # talking while muted says why nothing is heard, not "Nothing heard"
    qtbot.waitUntil(lambda: w.pill.state == "listening", timeout=5000)
    virtual_audio.play_into_mic(espeak("What time is it?", tmp_path / "muted.wav")).wait(30)
    w.bridge.release()
    qtbot.waitUntil(lambda: "microphone is muted" in w.statusBar().currentMessage(), timeout=30000)
    assert not w.chat.messages
    tray.mute.trigger()
    assert not w.menu_actions["mute"].isChecked()
    # show / hide
    tray.show_window.trigger()
    assert not w.isVisible() and tray.show_window.text() == "Show window"
    tray.show_window.trigger()
    assert w.isVisible() and tray.show_window.text() == "Hide window"
    # without a tray on this desktop, closing quits even when closing to the tray is chosen
    w.settings.close_to_tray = True
    assert not tray.isVisible()
    w.close()
    assert not w.isVisible() and w.bridge.assistant._closed


def test_closing_hides_to_a_real_tray_under_xvfb(x11, tmp_path) -> None:
    """With a tray on the X display, closing the window (close-to-tray on) hides it and keeps the
    assistant running; the tray's Quit ends it. Qt's xcb plugin, a separate process."""
    host = subprocess.Popen(
        [sys.executable, "-m", "tests.support.tray_host", x11["DISPLAY"]],
        env=x11,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert LineReader(host.stdout).next_line(60).strip() == "tray ready"
        script = (
            "import sys\n"
            "from PySide6.QtWidgets import QApplication\n"
            "from app.gui.main_window import MainWindow\n"
            "from app.gui.tray import TrayIcon\n"
            "from app.loop.settings import AppSettings\n"
            "app = QApplication(sys.argv)\n"
            "assert TrayIcon.available(), 'no tray found'\n"
            "w = MainWindow(AppSettings(close_to_tray=True)); w.show(); w.start_assistant()\n"
            "app.processEvents()\n"
            "assert w.tray.isVisible()\n"
            "w.close(); app.processEvents()\n"
            "assert not w.isVisible() and not w.bridge.assistant._closed, 'closing quit'\n"
            "w.tray.show_window.trigger(); app.processEvents()\n"
            "assert w.isVisible()\n"
            "w.tray.menu.actions()[-1].trigger(); app.processEvents()\n"  # Quit
            "assert not w.isVisible() and w.bridge.assistant._closed, 'Quit did not quit'\n"
            "print('ok')\n"
        )
        r = subprocess.run(
            [sys.executable, "-c", script], env=x11, capture_output=True, text=True, timeout=120
        )
        assert r.returncode == 0 and r.stdout.strip().endswith("ok"), r.stderr[-2000:]
    finally:
        host.kill()
        host.wait(5)
