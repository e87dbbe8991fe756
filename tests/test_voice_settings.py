"""Settings → Voice and Help → About in the real dialog (offscreen Qt): natural and system voices
in one list with their languages, a preview that is heard on the virtual speaker, a Piper file of
one's own, and the licences of everything the app ships."""

from __future__ import annotations

import dataclasses
import threading
import time

from app.gui.about import AboutDialog
from app.gui.settings_dialog import SettingsDialog
from app.loop.events import Event
from app.loop.settings import AppSettings
from tests.support.monitor import Monitor
from tests.test_gui import close_window, open_window, settled, shot

LOUD = 0.003


def _voice_tab(qtbot, settings: AppSettings) -> SettingsDialog:
    dlg = SettingsDialog(settings)
    qtbot.addWidget(dlg)
    dlg.show()
    dlg.tabs.setCurrentWidget(dlg.voice_tab)
    return dlg


def test_natural_and_system_voices_in_one_list(qtbot, config_dir, natural_voice_model) -> None:
    dlg = _voice_tab(qtbot, AppSettings())
    combo = dlg.voice_tab.voice
    items = [(combo.itemText(i), combo.itemData(i)) for i in range(combo.count())]
    assert items[0] == ("Default (Joe (English, medium))", "")
    assert items[1] == ("Joe (English, medium) — en-US · natural", "joe")  # natural voices first
    system = [text for text, data in items if text.endswith("· system")]
    assert len(system) > 10 and any("en-us" in t for t in system)
    combo.setCurrentIndex(1)
    assert "en_US-joe-medium.onnx" in dlg.voice_tab.about.text()
    assert "commercial use" in dlg.voice_tab.about.text()  # the voice's licence caveat
    shot(dlg, "settings-voice")
    assert dlg.result_settings().voice == "joe"


def test_preview_is_heard_with_the_chosen_voice(
    qtbot, config_dir, virtual_audio, natural_voice_model, tmp_path
) -> None:
    dlg = _voice_tab(qtbot, AppSettings(voice="joe"))
    assert dlg.voice_tab.selected() == "joe"
    mon = Monitor(tmp_path / "levels")
    t0 = time.monotonic()
    dlg.voice_tab.preview()
    previewing = lambda: any(t.name == "gui-voice-preview" for t in threading.enumerate())  # noqa: E731
    qtbot.waitUntil(lambda: not previewing(), timeout=60000)
    times, rms = mon.stop()
    assert (times[rms > LOUD] > t0).any()
    assert not dlg.problem.isVisible()


def test_a_voice_file_that_is_not_a_voice_says_so(qtbot, config_dir, tmp_path) -> None:
    bad = tmp_path / "mine.onnx"
    bad.write_bytes(b"\x08not really")  # and no mine.onnx.json beside it
    dlg = _voice_tab(qtbot, AppSettings())
    problems: list[str] = []
    dlg.voice_tab.preview_failed.connect(problems.append)
    assert dlg.voice_tab._add_file(bad) == -1
    assert problems and "mine.onnx.json" in problems[0]
    qtbot.waitUntil(dlg.problem.isVisible, timeout=5000)


def test_about_lists_every_part_with_its_licence(qtbot) -> None:
    dlg = AboutDialog()
    qtbot.addWidget(dlg)
    dlg.show()
    text = dlg.text.toPlainText()
    for part in ("Qt 6", "llama.cpp", "whisper.cpp", "espeak-ng", "piper-tts", "onnxruntime", "PortAudio"):
        assert part in text, part
    assert "GPL-3.0-or-later" in text and "LGPL-3.0-only" in text and "lessac" in text
    shot(dlg, "about")


def test_changing_the_voice_keeps_the_models_loaded(
    qtbot, config_dir, virtual_audio, natural_voice_model
) -> None:
    """Settings → Voice from the natural voice to a system one: the same assistant, nothing
    loaded again, the next reply spoken with the new voice."""
    w = open_window(qtbot, AppSettings(person="Sam", bot="Max", n_ctx=1024, voice="joe"))
    assistant = w.bridge.assistant
    assert assistant.speaker.voice.engine == "natural"
    seen: list[Event] = []
    w.bridge.arrived.connect(seen.append)
    w.apply_settings(dataclasses.replace(w.settings, voice="gmw/en-us"))
    qtbot.waitUntil(lambda: assistant.speaker.voice is not None and assistant.speaker.voice.id == "gmw/en-us")
    w.bridge.send_text("Say hello.")
    started = lambda: any(e.kind == "sentence" and e.progress == "sentence_started" for e in seen)  # noqa: E731
    qtbot.waitUntil(started, timeout=60000)
    settled(qtbot, w)
    assert w.bridge.assistant is assistant and w.loading.isHidden()
    assert not [e for e in seen if e.kind == "loading"], "a model was loaded again"
    assert not [e for e in seen if e.kind == "error"]
    close_window(w)


def test_renaming_the_assistant_and_the_mode_keep_the_models_loaded(qtbot, config_dir, virtual_audio) -> None:
    """Settings: the assistant renamed (a new persona) and hands-free switched on and off: the
    same assistant, nothing loaded again; the next turn is answered under the new name, with
    the conversation's earlier turns still in it."""
    w = open_window(qtbot, AppSettings(person="Sam", bot="Max", n_ctx=1024))
    assistant = w.bridge.assistant
    w.bridge.send_text("My name is Robin.")
    qtbot.waitUntil(lambda: len(w.chat.messages) == 2, timeout=60000)
    settled(qtbot, w)
    seen: list[Event] = []
    w.bridge.arrived.connect(seen.append)
    w.apply_settings(dataclasses.replace(w.settings, bot="Aria", hands_free=True))
    assert assistant.config.hands_free and assistant.mics.config.hands_free
    w.apply_settings(dataclasses.replace(w.settings, hands_free=False))
    assert not assistant.config.hands_free
    settled(qtbot, w)
    brain = assistant.llm.brain
    assert brain.persona.bot == "Aria" and "Aria" in brain.system_prompt
    assert [m.text for m in brain.history if m.role == "user"] == ["My name is Robin."]
    assert brain.n_past > brain.ledger.n_keep  # the earlier turn was read again under the new prompt
    assert "Aria" in assistant.hearing.transcriber.config.initial_prompt  # whisper spells the new name
    w.bridge.send_text("Who are you?")
    qtbot.waitUntil(lambda: len(w.chat.messages) == 4, timeout=60000)
    settled(qtbot, w)
    assert w.bridge.assistant is assistant and w.loading.isHidden()
    assert not [e for e in seen if e.kind == "loading"], "a model was loaded again"
    assert not [e for e in seen if e.kind == "error"]
    assert brain.history[-1].name == "Aria"
    close_window(w)
