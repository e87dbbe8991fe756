"""Actions in the real window (offscreen, real models and devices): the answer's action line,
the running timers counted down with Pause and Cancel, and a timer that ends shown as a banner
(the voice says it too)."""

from __future__ import annotations

import re

from PySide6.QtWidgets import QLabel, QPushButton

from tests.test_gui import close_window, open_window, settled, shot


def say(qtbot, w, text: str) -> None:
    w.input.setFocus()
    qtbot.keyClicks(w.input, text)
    qtbot.keyClick(w.input, "\r")


def button(w, name: str) -> QPushButton:
    found = [b for b in w.alerts.timers.findChildren(QPushButton) if b.accessibleName() == name]
    assert len(found) == 1, [b.accessibleName() for b in w.alerts.timers.findChildren(QPushButton)]
    return found[0]


def test_timers_are_counted_down_paused_cancelled_and_their_end_shown(
    qtbot, config_dir, virtual_audio
) -> None:
    w = open_window(qtbot)
    strip = w.alerts.timers
    try:
        assert strip.isHidden()
        say(qtbot, w, "Set a 10 minute timer called pasta.")
        qtbot.waitUntil(lambda: "Started a timer" in w.chat.toPlainText(), timeout=60000)
        assert "Timer set for 10 minutes named pasta." in w.chat.toPlainText()
        qtbot.waitUntil(lambda: strip.isVisible() and len(strip.texts()) == 1, timeout=10000)
        assert re.fullmatch(r"pasta  (10:00|9:5\d)", strip.texts()[0]), strip.texts()
        settled(qtbot, w, stop=False)
        button(w, "Pause the pasta").click()
        qtbot.waitUntil(lambda: strip.texts() and strip.texts()[0].endswith("(paused)"), timeout=10000)
        qtbot.wait(300)  # the chat redraws on a short timer
        shot(w, "timer-paused")
        button(w, "Cancel the pasta").click()
        qtbot.waitUntil(strip.isHidden, timeout=10000)
        say(qtbot, w, "Set a timer for 2 seconds called eggs.")
        qtbot.waitUntil(lambda: "timer" in w.banners.messages(), timeout=60000)
        assert w.banners.messages()["timer"] == "The eggs timer is done."
        qtbot.waitUntil(strip.isHidden, timeout=10000)  # it ended: off the strip
        shot(w, "timer-ended")
        settled(qtbot, w, stop=False)
        say(qtbot, w, "Remind me in ten minutes to stretch my legs.")
        qtbot.waitUntil(
            lambda: strip.isVisible() and len(strip.findChildren(QPushButton)) == 1, timeout=60000
        )
        label = next(t for t in strip.findChildren(QLabel) if t.isVisible()).text()
        assert re.fullmatch(r"Reminder \d+:\d\d [AP]M: stretch my legs", label), label
        settled(qtbot, w, stop=False)
        qtbot.wait(300)
        shot(w, "reminder-set")
        strip.findChildren(QPushButton)[0].click()
        qtbot.waitUntil(strip.isHidden, timeout=10000)
        assert w.bridge.assistant.doing.actions.reminding.reminders.upcoming() == []
    finally:
        close_window(w)
