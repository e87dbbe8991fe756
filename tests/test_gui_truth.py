"""The window tells the truth (issue #19): what was said, what state it is in, what went wrong
and how it recovered. pytest-qt on the real assistant, real models, virtual audio devices."""

from __future__ import annotations

import dataclasses
import struct
import time

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication

from app.brain.session_files import read_history
from app.catalog import catalog
from app.gui.settings_dialog import SettingsDialog
from app.loop.conversation_store import title_from
from app.loop.events import History, State, StateChanged, Transcript
from app.loop.settings import AppSettings
from tests.conftest import espeak
from tests.test_gui import close_window, open_window, settled, shot

STORY = "Tell me a long story about a dragon who loves tea."


def wait_reply(qtbot, w, n: int, timeout: int = 90000) -> None:
    """Until the window shows `n` messages and the last reply has its details."""
    qtbot.waitUntil(
        lambda: len(w.chat.messages) >= n and bool(w.chat.messages[n - 1].latency), timeout=timeout
    )


# 1. Memory = what was heard ------------------------------------------------------------------
def test_stop_shows_the_unspoken_rest_apart(qtbot, config_dir, virtual_audio) -> None:
    w = open_window(qtbot, AppSettings(person="Sam", bot="Max", n_ctx=1024))
    w.bridge.send_text(STORY)
    qtbot.waitUntil(lambda: len(w.chat.messages) == 2 and bool(w.chat.messages[1].spoken), timeout=60000)
    qtbot.waitUntil(lambda: w.chat.messages[1].spoken not in w.chat.messages[1].text[:12], timeout=30000)
    qtbot.wait(300)
    qtbot.mouseClick(w.stop_btn, Qt.MouseButton.LeftButton)
    reply = w.chat.messages[1]
    qtbot.waitUntil(lambda: bool(reply.unspoken), timeout=30000)
    remembered = w.bridge.history()[1]
    assert remembered.text == reply.text and remembered.unspoken == reply.unspoken
    assert reply.interrupted and not reply.spoken  # the highlight ended with the speech
    qtbot.wait(100)
    html = w.chat.toHtml()
    assert "not spoken" in html and "line-through" in html
    shot(w, "interrupted-reply")
    close_window(w)


def test_only_the_sentence_being_spoken_is_highlighted(qtbot, config_dir, virtual_audio) -> None:
    """Messages sent while replies are still spoken: at any moment at most one sentence on the
    screen is highlighted, and none once the assistant is idle."""
    w = open_window(qtbot, AppSettings(n_ctx=1024))
    most = 0

    def lit() -> int:
        nonlocal most
        n = sum(bool(m.spoken) for m in w.chat.messages)
        most = max(most, n)
        return n

    for i, text in enumerate((STORY, "Tell me about cats and their long naps.")):
        w.bridge.send_text(text)
        n = 2 * i + 2
        qtbot.waitUntil(
            lambda n=n: len(w.chat.messages) == n and lit() > 0 and bool(w.chat.messages[-1].spoken),
            timeout=90000,
        )
    w.bridge.send_text("Tell me about dogs and their long walks.")  # over the second reply, too
    qtbot.waitUntil(
        lambda: lit() == 0 and w.pill.state == "idle" and bool(w.chat.messages[-1].latency), timeout=120000
    )
    qtbot.wait(200)
    assert most == 1 and lit() == 0
    close_window(w)


# 2. Errors are honest and recoverable ---------------------------------------------------------
def test_settings_refuse_a_model_that_is_not_one(qtbot, config_dir, tmp_path) -> None:
    AppSettings().save()
    before = AppSettings.path().read_text()
    dlg = SettingsDialog(AppSettings())
    qtbot.addWidget(dlg)
    dlg.show()
    notes = tmp_path / "notes.txt"
    notes.write_text("not a model")
    whole = catalog.default_model_path("llm").read_bytes()
    cut = tmp_path / "downloaded.gguf"  # a model of the user's own, its download cut short
    cut.write_bytes(whole[: len(whole) // 3])
    incomplete = f"the file is incomplete ({cut.stat().st_size:,} of {len(whole):,} bytes)"
    for typed, says in (
        (str(tmp_path / "typo.gguf"), "missing"),
        (str(notes), "not a GGUF file"),
        (str(cut), incomplete),
    ):
        dlg.llm.setEditText(typed)
        dlg.accept()
        assert dlg.isVisible() and dlg.result() == 0, "the dialog closed on a bad model"
        assert says in dlg.problem.text() and dlg.problem.isVisible()
    shot(dlg, "settings-bad-model")
    assert AppSettings.path().read_text() == before
    dlg.llm.setCurrentIndex(0)  # back to the built-in model
    dlg.accept()
    assert not dlg.isVisible() and dlg.result() == 1


def test_a_new_model_that_cannot_load_leaves_the_working_one(qtbot, config_dir, tmp_path) -> None:
    """A GGUF whose header is whole but which llama.cpp cannot load (here: no architecture, as
    an unsupported model is): Settings cannot know at OK; the window goes back to the model that
    worked, says so, and does not keep the choice."""
    w = open_window(qtbot, AppSettings())
    assert w.problems.working("llm")
    bad = tmp_path / "unsupported.gguf"
    bad.write_bytes(b"GGUF" + struct.pack("<IQQ", 3, 0, 0))
    catalog.check_file(bad, "llm")  # passes the file check
    w.apply_settings(dataclasses.replace(w.settings, llm_model=str(bad)))
    qtbot.waitUntil(lambda: "model-kept" in w.banners.messages(), timeout=60000)
    qtbot.waitUntil(lambda: w.problems.working("llm") and w.loading.isHidden(), timeout=60000)
    said = w.banners.messages()
    assert "Still using the built-in model." in said["model-kept"] and "llm" not in said
    assert w.settings.llm_model == "" and AppSettings.load().llm_model == ""
    w.input.setText("Hello!")
    w.send_typed()
    qtbot.waitUntil(lambda: len(w.bridge.history()) == 2, timeout=60000)
    shot(w, "model-kept")
    settled(qtbot, w)
    close_window(w)


def test_banner_goes_when_the_model_is_fixed_and_spoken_words_are_kept(
    qtbot, config_dir, virtual_audio, speech_dir, tmp_path
) -> None:
    w = open_window(qtbot, AppSettings(llm_model=str(tmp_path / "gone.gguf")), wait_loaded=False)
    qtbot.waitUntil(lambda: "llm" in w.banners.messages() and w.loading.isHidden(), timeout=30000)
    # speaking to it: whisper hears, nobody answers; the words land in the box, not lost
    wav = espeak("What is the capital of France?", speech_dir / "gui-france.wav", wpm=140)
    w.input.setText("Hello.")  # typed, not sent: both stay
    w.bridge.press()
    qtbot.waitUntil(lambda: w.pill.state == "listening", timeout=5000)
    virtual_audio.play_into_mic(wav).wait(30)
    qtbot.wait(400)
    w.bridge.release()
    qtbot.waitUntil(lambda: "france" in w.input.text().lower(), timeout=60000)
    assert (
        w.input.text().startswith("Hello. ") and "back in the message box" in w.statusBar().currentMessage()
    )
    assert len([k for k in w.banners.messages() if k != "welcome"]) == 1
    # fixed in Settings (the built-in model): the banner goes, the gauge shows the new model
    w.apply_settings(dataclasses.replace(w.settings, llm_model=""))
    qtbot.waitUntil(lambda: w.loading.isHidden() and "llm" not in w.banners.messages(), timeout=60000)
    qtbot.waitUntil(lambda: w.gauge.text().startswith("Memory ") and "%" in w.gauge.text(), timeout=10000)
    w.send_typed()  # the kept words can now be sent
    wait_reply(qtbot, w, 2)
    assert "france" in w.chat.messages[0].text.lower() and w.input.text() == ""
    close_window(w)


# 3. State is always visible -------------------------------------------------------------------
def test_hands_free_mode_is_shown_and_nothing_heard_never_contradicts(
    qtbot, config_dir, virtual_audio
) -> None:
    w = open_window(qtbot, AppSettings(hands_free=True, n_ctx=1024))
    assert "Hands-free" in w.ptt.text() and "hands-free" in w.chat.toHtml()
    shot(w, "hands-free-empty")
    w.apply_settings(dataclasses.replace(w.settings, hands_free=False))
    assert w.ptt.text().startswith("Hold to talk") and "Hold the button" in w.chat.toHtml()
    # a rejected transcript while a reply is being spoken is not announced as "Nothing heard"
    w.on_event(StateChanged(State.SPEAKING))
    w.on_event(Transcript("", rejected=True, reason="no speech detected"))
    assert "Nothing heard" not in w.statusBar().currentMessage()
    w.on_event(StateChanged(State.IDLE))
    w.on_event(Transcript("", rejected=True, reason="no speech detected"))
    assert "Nothing heard" in w.statusBar().currentMessage()
    close_window(w)


def test_new_messages_scroll_into_view_unless_scrolled_up(qtbot, config_dir) -> None:
    w = open_window(qtbot, AppSettings(n_ctx=1024), wait_loaded=False)
    for i in range(40):
        w.chat.add("user" if i % 2 == 0 else "assistant", f"message number {i} " * 6)
    w.chat.redraw()
    bar = w.chat.verticalScrollBar()
    qtbot.waitUntil(lambda: bar.maximum() > 0 and bar.value() == bar.maximum(), timeout=5000)
    assert not w.chat.latest.isVisible()
    bar.setValue(0)  # the reader scrolls up to read
    w.chat.add("assistant", "a new reply")
    w.chat.redraw()
    QApplication.processEvents()
    assert bar.value() == 0 and w.chat.latest.isVisible()  # and the way back is offered
    shot(w, "jump-to-latest")
    qtbot.mouseClick(w.chat.latest, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: bar.value() == bar.maximum() and not w.chat.latest.isVisible(), timeout=5000)
    w.chat.add("assistant", "another reply " * 20)  # following again
    w.chat.redraw()
    qtbot.waitUntil(lambda: bar.value() == bar.maximum(), timeout=5000)
    # scrolled up, then another conversation: it shows from its newest message
    bar.setValue(0)
    w.feed.handle(History(()))
    for i in range(40):
        w.chat.add("user" if i % 2 == 0 else "assistant", f"new conversation line {i} " * 6)
    w.chat.redraw()
    qtbot.waitUntil(lambda: bar.maximum() > 0 and bar.value() == bar.maximum(), timeout=5000)
    close_window(w)


# 4. Keyboard ----------------------------------------------------------------------------------
def test_escape_stops_and_focused_buttons_work_with_enter(qtbot, config_dir, virtual_audio) -> None:
    w = open_window(qtbot, AppSettings(n_ctx=1024))
    w.activateWindow()
    w.chat.setFocus()
    order = []
    for _ in range(4):
        qtbot.keyClick(QApplication.focusWidget(), Qt.Key.Key_Tab)
        order.append(QApplication.focusWidget())
    assert order == [w.input, w.send_btn, w.ptt, w.stop_btn]
    assert all(x.isVisible() for x in order)
    shot(w, "focus-on-stop")
    # Escape stops a reply
    w.bridge.send_text(STORY)
    qtbot.waitUntil(lambda: w.pill.state == "speaking", timeout=60000)
    qtbot.keyClick(w.chat, Qt.Key.Key_Escape)
    qtbot.waitUntil(lambda: w.chat.messages[1].interrupted, timeout=30000)
    qtbot.waitUntil(lambda: w.pill.state == "idle", timeout=30000)
    # Enter on the focused Stop button stops the next one (the same long story, from a fresh
    # conversation: a reply that happens to be short could end before the key)
    w.bridge.new_conversation()
    w.bridge.send_text(STORY)
    qtbot.waitUntil(lambda: len(w.chat.messages) == 4 and w.pill.state == "speaking", timeout=60000)
    w.stop_btn.setFocus()
    qtbot.keyClick(w.stop_btn, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: w.chat.messages[3].interrupted, timeout=30000)
    # Space is push-to-talk on a focused button too: it does not press Stop (or Send) again
    stops = len([m for m in w.chat.messages if m.interrupted])
    for button in (w.stop_btn, w.send_btn):
        button.setFocus()
        qtbot.keyPress(button, Qt.Key.Key_Space)
        qtbot.waitUntil(lambda: w.pill.state == "listening", timeout=5000)
        assert w.ptt.isDown() and not button.isDown()
        qtbot.keyRelease(button, Qt.Key.Key_Space)
        qtbot.waitUntil(lambda: w.pill.state != "listening" and not w.ptt.isDown(), timeout=5000)
    assert len([m for m in w.chat.messages if m.interrupted]) == stops
    close_window(w)


# 5. History is history ------------------------------------------------------------------------
def test_the_chat_is_one_tab_stop_and_arrows_reach_every_message_and_link(
    qtbot, config_dir, virtual_audio
) -> None:
    """In the chat: Up/Down/Home/End move between messages (outlined, scrolled into view),
    Left/Right between the links of the one with the keyboard, Enter follows a link (copy,
    retry); Tab leaves the chat at once, however many links it holds."""
    w = open_window(qtbot, AppSettings(n_ctx=1024))
    w.activateWindow()
    for text in ("Say hello.", "Say goodbye."):
        w.bridge.send_text(text)
        wait_reply(qtbot, w, len(w.chat.messages) + 2)
        settled(qtbot, w, stop=False)
    w.chat.setFocus()
    qtbot.keyClick(w.chat, Qt.Key.Key_Up)
    assert w.chat.focused == 3  # the first Up: the newest message
    qtbot.keyClick(w.chat, Qt.Key.Key_Home)
    assert w.chat.focused == 0
    qtbot.keyClick(w.chat, Qt.Key.Key_Down)
    assert w.chat.focused == 1 and "border-style:solid" in w.chat._drawn[1][1]
    shot(w, "chat-keyboard")
    qtbot.keyClick(w.chat, Qt.Key.Key_Return)  # its first link: copy
    assert w.chat.copied == 1 and QApplication.clipboard().text().startswith(w.chat.messages[1].text[:20])
    qtbot.keyClick(w.chat, Qt.Key.Key_End)
    links = w.chat.links(3)
    assert links[0] == "copy:3" and "retry:3" in links, links
    for _ in range(links.index("retry:3")):
        qtbot.keyClick(w.chat, Qt.Key.Key_Right)
    old = w.chat.messages[3]
    qtbot.keyClick(w.chat, Qt.Key.Key_Return)  # retry, from the keyboard
    qtbot.waitUntil(lambda: len(w.chat.messages) == 4 and w.chat.messages[3] is not old, timeout=60000)
    settled(qtbot, w)
    w.chat.setFocus()
    qtbot.keyClick(QApplication.focusWidget(), Qt.Key.Key_Tab)
    assert QApplication.focusWidget() is w.input  # one Tab: out of the chat
    close_window(w)


def test_rename_keeps_earlier_names_and_details_survive_a_restart(qtbot, config_dir, virtual_audio) -> None:
    w = open_window(qtbot, AppSettings(person="Sam", bot="Max", n_ctx=1024))
    w.bridge.send_text("Hello there!")
    wait_reply(qtbot, w, 2)
    w.apply_settings(dataclasses.replace(w.settings, bot="Rex"))
    qtbot.waitUntil(lambda: "next message" in w.statusBar().currentMessage(), timeout=60000)
    qtbot.waitUntil(lambda: w.loading.isHidden(), timeout=60000)
    assert w.chat.messages[1].name == "Max" and w.chat.messages[1].latency
    w.bridge.send_text("Who are you?")
    wait_reply(qtbot, w, 4)
    assert [m.name for m in w.chat.messages] == ["Sam", "Max", "Sam", "Rex"]
    assert "re-evaluating" not in w.statusBar().currentMessage()
    close_window(w)
    w2 = open_window(qtbot, AppSettings.load())
    qtbot.waitUntil(lambda: len(w2.chat.messages) == 4, timeout=10000)
    assert [m.name for m in w2.chat.messages] == ["Sam", "Max", "Sam", "Rex"]
    assert w2.chat.messages[1].latency.get("t_first_token_ms") and w2.chat.messages[3].latency
    assert "details" in w2.chat.toHtml()
    close_window(w2)


def test_stopping_a_reply_that_is_written_but_still_spoken_says_idle(
    qtbot, config_dir, virtual_audio
) -> None:
    """Stop while only the voice is left (the generation ended): the window goes back to idle
    (a stopped voice sends no queue_empty, so nothing else would end "Speaking")."""
    w = open_window(qtbot, AppSettings(n_ctx=1024))
    w.bridge.send_text(STORY)
    qtbot.waitUntil(
        lambda: w.pill.state == "speaking" and w.bridge.assistant.responder.current is None, timeout=90000
    )
    qtbot.keyClick(w.chat, Qt.Key.Key_Escape)
    qtbot.waitUntil(lambda: w.pill.state == "idle" and w.ptt.state == "idle", timeout=10000)
    close_window(w)


def test_a_new_conversation_loses_nothing(qtbot, config_dir, virtual_audio) -> None:
    """New needs no confirmation: the conversation it leaves stays in the sidebar, whole."""
    w = open_window(qtbot, AppSettings(n_ctx=1024))
    w.bridge.send_text("Hello there!")
    wait_reply(qtbot, w, 2)
    old = w.conversations.current
    w.menu_actions["new"].trigger()
    assert w.chat.messages == []
    qtbot.waitUntil(lambda: w.bridge.history() == [], timeout=10000)
    assert w.sidebar.ids()[1:] == [old]
    assert [m.text for m in read_history(w.conversations.store.path(old))][:1] == ["Hello there!"]
    close_window(w)


def test_going_on_after_a_pause_leaves_one_turn_on_screen_and_in_memory(
    qtbot, config_dir, virtual_audio, speech_dir
) -> None:
    """Hands-free, a turn ends at a pause and its reply starts; the user goes on: the window and
    the saved conversation hold the whole sentence once, with one reply, titled by it."""
    head = espeak("Tell me something interesting.", speech_dir / "gui-go-on-a.wav", wpm=140)
    tail = espeak("about the ocean.", speech_dir / "gui-go-on-b.wav", wpm=140)
    s = AppSettings(n_ctx=1024, hands_free=True, turn_end="fixed", continue_ms=20000)
    w = open_window(qtbot, s)
    virtual_audio.play_into_mic(head).wait(30)
    qtbot.waitUntil(lambda: w.pill.state == "speaking", timeout=90000)
    first = w.chat.messages[0].text
    assert "interesting" in first.lower()
    time.sleep(1.0)  # its reply is heard a moment
    virtual_audio.play_into_mic(tail).wait(30)

    def went_on() -> bool:  # the head's words and more (whisper tiny may hear "the ocean" as "motion")
        return bool(w.chat.messages) and len(w.chat.messages[0].text.split()) > len(first.split())

    qtbot.waitUntil(went_on, timeout=90000)
    wait_reply(qtbot, w, 2)
    settled(qtbot, w)
    shot(w, "went-on-after-a-pause")
    said = w.chat.messages[0].text
    assert [m.role for m in w.chat.messages] == ["user", "assistant"]
    assert [m.text for m in w.bridge.history() if m.role == "user"] == [said]
    qtbot.waitUntil(lambda: w.conversations.store.list()[0].title == title_from(said), timeout=10000)
    close_window(w)


# 6. Plain language ----------------------------------------------------------------------------
def test_plain_words_for_memory_models_voices_export_and_first_run(
    qtbot, config_dir, virtual_audio, tmp_path
) -> None:
    w = open_window(qtbot, AppSettings(n_ctx=1024))
    assert "welcome" in w.banners.messages() and "small" in w.banners.messages()["welcome"]
    w.bridge.send_text("Hello there!")
    wait_reply(qtbot, w, 2)
    text = w.gauge.text()
    assert text.startswith("Memory ") and "%" in text and "older turns set aside: 0" in text
    assert "tokens" not in text and "tokens" in w.gauge.toolTip()
    w.tools.export_to(tmp_path / "talk.md", "md")
    assert str(tmp_path / "talk.md") in w.banners.messages()["export"]
    shot(w, "plain-gauge-and-export")
    close_window(w)
    again = open_window(qtbot, AppSettings.load(), wait_loaded=False)
    assert "welcome" not in again.banners.messages()  # the note is shown once
    close_window(again)

    dlg = SettingsDialog(AppSettings())
    qtbot.addWidget(dlg)
    first = dlg.llm.itemText(0)
    assert first.startswith("Built-in: smollm2") and first.endswith("MB)")
    labels = [dlg.llm.itemText(i) for i in range(dlg.llm.count())]
    assert not any("missing" in x for x in labels)
    combo = dlg.voice_tab.voice
    voices = [combo.itemText(i) for i in range(1, min(combo.count(), 6))]
    assert voices and all("— en" in v for v in voices), voices
