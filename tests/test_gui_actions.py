"""Actions in the real window (offscreen, real models and devices): the answer's action line,
and a timer that ends shown as a banner (the voice says it too)."""

from __future__ import annotations

from tests.test_gui import close_window, open_window, settled, shot


def test_a_typed_timer_shows_what_ran_and_its_end(qtbot, config_dir, virtual_audio) -> None:
    w = open_window(qtbot)
    try:
        w.input.setFocus()
        qtbot.keyClicks(w.input, "Set a timer for 2 seconds called eggs.")
        qtbot.keyClick(w.input, "\r")
        qtbot.waitUntil(lambda: "Started a timer" in w.chat.toPlainText(), timeout=60000)
        text = w.chat.toPlainText()
        assert "Timer set for 2 seconds named eggs." in text and "name eggs" in text
        qtbot.waitUntil(lambda: "timer" in w.banners.messages(), timeout=60000)
        assert w.banners.messages()["timer"] == "The eggs timer is done."
        shot(w, "timer-ended")
        settled(qtbot, w, stop=False)
    finally:
        close_window(w)
