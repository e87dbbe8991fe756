"""The desktop window (pytest-qt, offscreen; one smoke run under Xvfb with xcb).

Real assistant underneath: real models, the virtual PulseAudio devices. Screenshots of the main
states are saved under tests/artifacts/screenshots/."""

from __future__ import annotations

import dataclasses
import subprocess
import sys
import threading
import time
from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication, QPushButton, QTabWidget

from app.brain.sampling import SamplingConfig
from app.catalog import catalog
from app.gui.main_window import MainWindow
from app.gui.settings_dialog import SettingsDialog
from app.loop.settings import AppSettings, assistant_config
from app.system.paths import data_dir
from tests.conftest import ARTIFACTS, espeak

SHOTS = ARTIFACTS / "screenshots"


def shot(widget, name: str) -> Path:
    SHOTS.mkdir(parents=True, exist_ok=True)
    path = SHOTS / f"{name}.png"
    QApplication.processEvents()
    assert widget.grab().save(str(path))
    return path


def open_window(qtbot, settings: AppSettings | None = None, wait_loaded: bool = True) -> MainWindow:
    s = settings or AppSettings(person="Sam", bot="Max", n_ctx=1024)
    w = MainWindow(s)
    qtbot.addWidget(w)
    w.show()
    w.start_assistant()
    if wait_loaded:
        qtbot.waitUntil(lambda: w.loading.isHidden(), timeout=60000)
    return w


def close_window(w: MainWindow) -> float:
    t0 = time.perf_counter()
    w.close()
    return time.perf_counter() - t0


def settled(qtbot, w, stop: bool = True) -> None:
    """Until the assistant is idle and its llm thread has done everything queued so far (a
    reply's speech can be long: unless `stop` is False it is stopped rather than waited for)."""
    if stop:
        w.bridge.interrupt()
    qtbot.waitUntil(lambda: w.pill.state == "idle", timeout=30000 if stop else 120000)
    done = threading.Event()
    w.bridge.assistant.llm.put(done.set)
    qtbot.waitUntil(done.is_set, timeout=30000)


def test_window_appears_at_once_then_loads(qtbot, config_dir, virtual_audio) -> None:
    t0 = time.perf_counter()
    w = open_window(qtbot, wait_loaded=False)
    shown_in = time.perf_counter() - t0
    assert w.isVisible() and w.loading.isVisible() and shown_in < 2.0
    qtbot.waitUntil(lambda: w.loading.isHidden(), timeout=60000)
    qtbot.waitUntil(lambda: w.pill.state == "idle", timeout=10000)
    assert w.gauge.maximum() == 1024 and "shift" in w.gauge.toolTip()
    shot(w, "empty-window")
    close_window(w)


def test_typing_streams_a_reply(qtbot, config_dir, virtual_audio) -> None:
    w = open_window(qtbot)
    w.input.setFocus()
    qtbot.keyClicks(w.input, "Tell me a short story about a cat.")
    qtbot.keyClick(w.input, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: len(w.chat.messages) == 2 and len(w.chat.messages[1].text) > 20, timeout=60000)
    mid = w.chat.messages[1].text
    # While a sentence is spoken it is highlighted in the streaming reply.
    qtbot.waitUntil(lambda: bool(w.chat.messages[1].spoken), timeout=60000)
    qtbot.wait(60)
    assert "background-color" in w.chat.toHtml()
    shot(w, "mid-reply")
    qtbot.waitUntil(lambda: bool(w.chat.messages[1].latency), timeout=60000)
    final = w.chat.messages[1].text
    assert w.chat.messages[0].text == "Tell me a short story about a cat."
    assert final.startswith(mid[:20]) and len(final) >= len(mid)
    assert w.gauge.value() > 0
    qtbot.waitUntil(lambda: "after you pressed Enter" in w.chat.toHtml(), timeout=5000)
    qtbot.waitUntil(lambda: w.pill.state == "idle", timeout=60000)
    close_window(w)


def test_holding_the_ptt_button_while_speaking(qtbot, config_dir, virtual_audio, speech_dir) -> None:
    w = open_window(qtbot)
    wav = espeak("What is your favorite color?", speech_dir / "gui-color.wav", wpm=140)
    time.sleep(0.3)
    qtbot.mousePress(w.ptt, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: w.pill.state == "listening", timeout=5000)
    virtual_audio.play_into_mic(wav).wait(30)
    qtbot.wait(400)
    qtbot.mouseRelease(w.ptt, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: len(w.chat.messages) >= 2 and bool(w.chat.messages[1].latency), timeout=90000)
    assert "color" in w.chat.messages[0].text.lower()
    assert w.chat.messages[1].text
    close_window(w)


def test_space_is_push_to_talk_but_not_while_typing(qtbot, config_dir, virtual_audio) -> None:
    w = open_window(qtbot)
    w.chat.setFocus()
    qtbot.keyPress(w.chat, Qt.Key.Key_Space)
    qtbot.waitUntil(lambda: w.pill.state == "listening", timeout=5000)
    assert w.ptt.isDown()
    qtbot.keyRelease(w.chat, Qt.Key.Key_Space)
    qtbot.waitUntil(lambda: w.pill.state != "listening", timeout=5000)
    # While typing, Space is a space.
    w.input.setFocus()
    qtbot.keyClicks(w.input, "a b")
    qtbot.keyPress(w.input, Qt.Key.Key_Space)
    qtbot.keyRelease(w.input, Qt.Key.Key_Space)
    qtbot.wait(200)
    assert w.input.text().startswith("a b") and w.pill.state != "listening"
    close_window(w)


def test_missing_model_banner_and_window_stays_usable(qtbot, config_dir, virtual_audio, tmp_path) -> None:
    s = AppSettings(llm_model=str(tmp_path / "gone.gguf"))
    w = open_window(qtbot, s, wait_loaded=False)
    qtbot.waitUntil(lambda: "llm" in w.banners.messages(), timeout=30000)
    text = w.banners.messages()["llm"]
    assert "gone.gguf" in text and "talk-llama models fetch" in text
    qtbot.waitUntil(lambda: w.loading.isHidden(), timeout=30000)
    assert w.gauge.text().startswith("Memory: no model loaded")
    shot(w, "error-banner")
    qtbot.keyClicks(w.input, "Hello?")
    qtbot.keyClick(w.input, Qt.Key.Key_Return)
    # nobody can answer: the words stay in the box, with the reason; no second banner
    qtbot.waitUntil(lambda: "stays in the box" in w.statusBar().currentMessage(), timeout=5000)
    assert w.input.text() == "Hello?" and [k for k in w.banners.messages() if k != "welcome"] == ["llm"]
    assert w.isVisible()
    close_window(w)


def test_settings_persist_across_restarts(qtbot, config_dir, virtual_audio) -> None:
    w = open_window(qtbot, AppSettings(), wait_loaded=False)
    dlg = SettingsDialog(w.settings, w)
    qtbot.addWidget(dlg)
    dlg.show()
    dlg.person.setText("Robin")
    dlg.bot.setText("Juno")
    dlg.voice_tab.rate.setValue(190)
    dlg.hands_free.setChecked(True)
    dlg.n_ctx.setValue(1536)
    shot(dlg, "settings-dialog")
    new = dlg.result_settings()
    assert new.model_reload_needed(w.settings)
    new.save()
    w.settings = new
    w.resize(700, 555)
    close_window(w)
    again = AppSettings.load()
    assert (again.person, again.bot, again.rate, again.hands_free, again.n_ctx) == (
        "Robin",
        "Juno",
        190,
        True,
        1536,
    )
    w2 = MainWindow(again)
    qtbot.addWidget(w2)
    assert (w2.width(), w2.height()) == (700, 555)
    w2.close()


def test_sampling_is_tuned_in_advanced_settings(qtbot, config_dir) -> None:
    """Only changed sampler values are stored; they reach the conversation's config; a
    hand-edited bad entry is ignored, not fatal."""
    dlg = SettingsDialog(AppSettings())
    qtbot.addWidget(dlg)
    dlg.show()
    tabs = dlg.findChild(QTabWidget)
    tabs.setCurrentIndex(tabs.count() - 1)
    assert tabs.tabText(tabs.currentIndex()) == "Advanced"
    shot(dlg, "settings-advanced")
    assert dlg.result_settings().sampling == {}  # untouched: everything follows the defaults
    dlg.sampling_boxes["dry_multiplier"].setValue(1.2)
    assert dlg.sampling_boxes["history_tokens"].text() == "All"  # the default, -1
    dlg.sampling_boxes["history_tokens"].setValue(256)
    new = dlg.result_settings()
    assert new.sampling == {"dry_multiplier": 1.2, "history_tokens": 256}
    assert new.model_reload_needed(AppSettings())
    new.save()
    loaded = AppSettings.load()
    sampling = assistant_config(loaded).llm.sampling
    assert (sampling.dry_multiplier, sampling.history_tokens) == (1.2, 256)
    assert sampling.temperature == SamplingConfig().temperature
    dlg._reset_sampling()
    assert dlg.result_settings().sampling == {}
    bad = assistant_config(AppSettings(sampling={"no_such_knob": 1, "top_k": "many"})).llm.sampling
    assert bad == SamplingConfig()


def test_corrupt_settings_file_gives_defaults(config_dir) -> None:
    config_dir.mkdir(parents=True)
    (config_dir / "settings.json").write_text("{oops")
    assert AppSettings.load() == AppSettings()
    assert (config_dir / "settings.json.bad").exists()


def test_closing_during_a_reply_is_clean_and_fast(qtbot, config_dir, virtual_audio) -> None:
    w = open_window(qtbot)
    before = {t.name for t in threading.enumerate()}
    w.bridge.send_text("Tell me a very long story about the sea.")
    qtbot.waitUntil(lambda: len(w.chat.messages) == 2 and len(w.chat.messages[1].text) > 10, timeout=60000)
    assistant = w.bridge.assistant
    took = close_window(w)
    assert took < 30  # it returns (the shutdown's joins are bounded); how fast is not a test's to say
    time.sleep(0.3)
    alive = {t.name for t in threading.enumerate() if t.is_alive()} - before
    assert not {n for n in alive if n.startswith(("assistant-", "speaker-"))}, alive
    assert assistant.mic is None or not assistant.mic.is_open
    assert (config_dir / "data" / "conversations" / w.settings.conversation / "session.json").exists()


def test_export_markdown_and_json(qtbot, config_dir, virtual_audio, tmp_path) -> None:
    w = open_window(qtbot)
    w.bridge.send_text("Hello there!")
    qtbot.waitUntil(lambda: len(w.chat.messages) == 2 and bool(w.chat.messages[1].latency), timeout=60000)
    w.tools.export_to(tmp_path / "c.md", "md")
    w.tools.export_to(tmp_path / "c.json", "json")
    md = (tmp_path / "c.md").read_text()
    assert "**Sam**" in md and "Hello there!" in md and "**Max**" in md
    import json

    data = json.loads((tmp_path / "c.json").read_text())
    assert [m["role"] for m in data["messages"]][:2] == ["user", "assistant"]
    close_window(w)


def test_last_session_is_restored_on_start(qtbot, config_dir, virtual_audio) -> None:
    w = open_window(qtbot)
    w.bridge.send_text("My name is Sam and I like tea.")
    qtbot.waitUntil(lambda: len(w.chat.messages) == 2 and bool(w.chat.messages[1].latency), timeout=60000)
    close_window(w)
    w2 = open_window(qtbot)
    qtbot.waitUntil(lambda: len(w2.chat.messages) == 2, timeout=10000)
    assert w2.chat.messages[0].text == "My name is Sam and I like tea."
    close_window(w2)


def test_real_window_under_xvfb_with_xcb(x11) -> None:
    env = x11
    script = (
        "import sys\n"
        "from PySide6.QtWidgets import QApplication\n"
        "from PySide6.QtCore import QTimer\n"
        "from app.loop.settings import AppSettings\n"
        "from app.gui.main_window import MainWindow\n"
        "app = QApplication(sys.argv)\n"
        "assert app.platformName() == 'xcb', app.platformName()\n"
        "w = MainWindow(AppSettings()); w.show(); w.start_assistant()\n"
        "def done():\n"
        "    if not w.loading.isHidden():\n"
        "        QTimer.singleShot(200, done); return\n"
        f"    w.grab().save({str(SHOTS / 'xcb-window.png')!r}); w.close(); app.quit()\n"
        "QTimer.singleShot(200, done)\n"
        "app.exec()\n"
    )
    SHOTS.mkdir(parents=True, exist_ok=True)
    r = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr[-2000:]
    assert (SHOTS / "xcb-window.png").stat().st_size > 5000


def test_global_ptt_notice_where_unavailable(qtbot) -> None:
    from app.gui.held_key import HeldKey
    from app.gui.hotkey import GlobalHotkey

    ok, message = GlobalHotkey(HeldKey(lambda: None, lambda: None)).start("Space")
    assert not ok and "offscreen" in message and "Space key works" in message


def test_global_ptt_on_x11_sees_keys_outside_the_window(x11) -> None:
    """pynput's listener on a real X server; the key is sent with XTest, as a user's would be."""
    env = x11
    script = (
        "import sys, time\n"
        "from PySide6.QtWidgets import QApplication\n"
        "app = QApplication(sys.argv)\n"
        "from app.gui.held_key import HeldKey\n"
        "from app.gui.hotkey import GlobalHotkey\n"
        "seen = []\n"
        "hk = GlobalHotkey(HeldKey(lambda: seen.append('press'), lambda: seen.append('release'), 1.0))\n"
        "ok, msg = hk.start('Space'); assert ok, msg\n"
        "time.sleep(0.5)\n"
        "from pynput.keyboard import Controller, Key\n"
        "c = Controller(); c.press(Key.space); time.sleep(0.2)\n"
        "c.release(Key.space); c.press(Key.space)\n"  # an auto-repeat pair, as X11 sends it
        "time.sleep(0.2); c.release(Key.space)\n"
        "deadline = time.monotonic() + 30\n"
        "while len(seen) < 2 and time.monotonic() < deadline: time.sleep(0.05)\n"
        "hk.stop(); print(seen)\n"
    )
    cmd = [sys.executable, "-c", script]
    r = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr[-2000:]
    assert r.stdout.strip() == "['press', 'release']"


def test_what_i_remember_lists_the_facts_and_forgets_one(qtbot, config_dir, virtual_audio, tmp_path) -> None:
    """Conversation → What I remember: what the user told is listed; Forget takes it out of the
    conversation's memory (kept with the saved conversation) and the list comes back without it."""
    w = open_window(qtbot)
    w.menu_actions["memory"].trigger()
    panel = w.tools.memory_panel
    assert panel is not None and panel.isVisible()
    w.bridge.send_text("My name is Robin. I live in Porto.")
    settled(qtbot, w)
    w.bridge.report_memory()
    qtbot.waitUntil(lambda: len(panel.facts) == 2, timeout=30000)
    assert [s for _k, s in panel.facts] == ["Your name is Robin.", "You live in Porto."]
    shot(panel, "what-i-remember")
    forget = [
        b for b in panel.findChildren(QPushButton) if b.accessibleName() == "Forget: You live in Porto."
    ]
    qtbot.mouseClick(forget[0], Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: [k for k, _s in panel.facts] == ["name"], timeout=30000)
    brain = w.bridge.assistant.llm.brain
    assert brain.forgotten == {"home"}
    w.tools.export_to(tmp_path / "c.md", "md")  # an export lists what is remembered, as the panel does
    md = (tmp_path / "c.md").read_text()
    assert "## What Max remembers" in md and "- The user's name is Robin." in md
    assert "- The user lives in" not in md
    close_window(w)


def test_memory_across_conversations_is_a_setting_that_reloads_nothing(
    qtbot, config_dir, virtual_audio
) -> None:
    """Settings → Persona → Memory: off by default (nothing is kept outside the conversation);
    turned on, the models stay loaded, the open conversation's facts go to a private file, and
    a new conversation lists them under What I remember."""
    w = open_window(qtbot)
    assert not w.settings.shared_memory and not SettingsDialog(w.settings).shared_memory.isChecked()
    w.bridge.send_text("My name is Robin.")
    settled(qtbot, w)
    store = data_dir() / "memory.json"
    assert not store.exists()
    assistant = w.bridge.assistant
    w.apply_settings(dataclasses.replace(w.settings, shared_memory=True))
    settled(qtbot, w)
    assert w.bridge.assistant is assistant and w.loading.isHidden()  # nothing reloaded
    assert store.exists() and oct(store.stat().st_mode & 0o777) == "0o600"
    w.menu_actions["new"].trigger()
    qtbot.waitUntil(lambda: w.bridge.history() == [], timeout=10000)
    w.menu_actions["memory"].trigger()
    panel = w.tools.memory_panel
    assert panel is not None
    settled(qtbot, w)
    w.bridge.report_memory()
    qtbot.waitUntil(lambda: [s for _k, s in panel.facts] == ["Your name is Robin."], timeout=30000)
    close_window(w)


def test_a_model_reload_frees_the_models_it_replaces(qtbot, config_dir, virtual_audio) -> None:
    """A model-side setting reloads the models: once the new ones are loaded, the old language
    model and whisper are freed (not left to a garbage collection: the window would hold two of
    each; the monkey saw 1.3 GB after a few reloads)."""
    w = open_window(qtbot)
    old = w.bridge.assistant
    w.apply_settings(dataclasses.replace(w.settings, n_ctx=2048))
    qtbot.waitUntil(lambda: w.bridge.assistant is not old and w.loading.isHidden(), timeout=60000)
    settled(qtbot, w)
    llama = old.llm.brain.llama
    qtbot.waitUntil(lambda: llama._model.model is None and llama._ctx.ctx is None, timeout=30000)
    assert old.hearing.transcriber is None and old.hearing.early is None
    w.bridge.send_text("Hello!")  # the new models answer
    qtbot.waitUntil(lambda: len(w.bridge.history()) == 2, timeout=60000)
    close_window(w)


def test_an_english_only_model_set_for_french_says_which_model_hears_it(
    qtbot, config_dir, virtual_audio, multilingual_whisper
) -> None:
    english_only = catalog.default_model_path("whisper")
    w = open_window(qtbot, AppSettings(language="fr", whisper_model=str(english_only)))
    said = w.banners.messages().get("whisper-language", "")
    assert f"{english_only.name} hears English only: French is heard with {multilingual_whisper.name}" in said
    assert w.bridge.assistant.config.stt.model_path == multilingual_whisper
    close_window(w)
