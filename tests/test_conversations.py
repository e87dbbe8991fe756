"""Conversations (issue #16, point 1): the store's folders (real files), and the sidebar in the
real window with the real assistant underneath: a title from the first turn, New keeps the old
one, switching restores the llama state as saved (no re-evaluation), rename, delete with Undo,
the last conversation opening at start, the single session of earlier versions adopted."""

from __future__ import annotations

import json
import time
from pathlib import Path

from app.brain.records import Message
from app.brain.session_files import META
from app.loop.conversation_store import UNTITLED, ConversationStore, title_from
from tests.test_gui import close_window, open_window, settled, shot
from tests.test_gui_truth import wait_reply


def _say(qtbot, w, text: str) -> None:
    n = len(w.chat.messages)
    w.bridge.send_text(text)
    wait_reply(qtbot, w, n + 2)
    settled(qtbot, w)


def _titles(w) -> list[str]:
    return [c.title for c in w.conversations.store.list()]


def test_the_store_keeps_titles_order_and_undoable_deletes(tmp_path: Path) -> None:
    store = ConversationStore(tmp_path / "conversations")
    a = store.create()
    assert a.empty and a.title == UNTITLED and store.list()[0].id == a.id
    assert store.note_first_turn(a.id, "  What is the  tallest mountain on Earth, and how tall is it really?")
    assert store.get(a.id).title == "What is the tallest mountain on Earth, and how…"
    assert not store.note_first_turn(a.id, "Another question")  # the first turn names it
    assert not store.forget_first_turn(a.id, "Another question")  # not the turn it was named after
    assert store.forget_first_turn(a.id, "What is the tallest mountain on Earth, and how tall is it really?")
    assert store.get(a.id).title == UNTITLED  # that turn was taken back: the next one names it
    assert store.note_first_turn(a.id, "What is the tallest mountain on Earth, and how tall is it really?")
    time.sleep(0.01)
    b = store.create()
    assert [c.id for c in store.list()] == [b.id, a.id]  # the newest first
    store.rename(a.id, "Mountains")
    assert store.get(a.id).title == "Mountains"
    (store.path(a.id) / META).write_text(json.dumps({"history": [Message("user", "Hi there").__dict__]}))
    store.rename(a.id, "")  # an empty title goes back to the automatic one
    assert store.get(a.id).title == "Hi there" and not store.get(a.id).empty
    assert [c.id for c in store.list()] == [a.id, b.id]  # saved most recently
    store.delete(a.id)
    assert [c.id for c in store.list()] == [b.id]
    assert store.restore(a.id) and store.get(a.id).title == "Hi there"
    store.delete(a.id)
    store.purge_deleted()
    assert not store.restore(a.id) and [c.id for c in store.list()] == [b.id]
    (store.path(b.id) / "about.json").write_text("{broken")  # a damaged folder is still listed
    assert store.get(b.id).title == UNTITLED
    assert title_from("x" * 100).endswith("…") and len(title_from("x" * 100)) <= 49


def test_sidebar_new_switch_rename_delete_and_undo(qtbot, config_dir, virtual_audio) -> None:
    w = open_window(qtbot)
    w.resize(940, 640)
    first = w.conversations.current
    _say(qtbot, w, "My favourite colour is green.")
    qtbot.waitUntil(lambda: _titles(w) == ["My favourite colour is green."], timeout=5000)
    brain = w.bridge.assistant.conversation
    n_past, ids = brain.n_past, brain.llama.input_ids[: brain.n_past].copy()

    w.menu_actions["new"].trigger()  # New: an empty conversation, the first stays listed
    qtbot.waitUntil(lambda: not w.chat.messages and not brain.history, timeout=30000)
    second = w.conversations.current
    assert second != first and w.sidebar.ids() == [second, first]
    _say(qtbot, w, "Tell me about trains.")
    assert w.sidebar.list.item(0).text() == "Tell me about trains."
    shot(w, "conversation-sidebar")

    switched = []
    w.bridge.arrived.connect(lambda e: switched.append(e) if e.kind == "switched" else None)
    w.sidebar.list.setCurrentRow(1)
    w.sidebar.chosen.emit(first)  # as a click on it does
    qtbot.waitUntil(lambda: bool(switched), timeout=30000)
    assert switched[0].resumed and switched[0].ms > 0  # the saved state, not re-evaluated
    assert [m.text for m in w.chat.messages][:1] == ["My favourite colour is green."]
    assert brain.n_past == n_past and (brain.llama.input_ids[:n_past] == ids).all()
    assert "Conversation opened in" in w.statusBar().currentMessage()
    assert w.settings.conversation == first
    used = w.conversations.store.get(first).updated
    for other in (second, first):  # looked at, and left: "last used" stays when it was
        switched.clear()
        w.sidebar.chosen.emit(other)
        qtbot.waitUntil(lambda: bool(switched), timeout=30000)
    assert w.conversations.store.get(first).updated == used

    w.sidebar.rename_requested.emit(second, "Trains")
    assert "Trains" in _titles(w)
    w.sidebar.delete_requested.emit(first)  # the open one: the next opens, Undo is offered
    qtbot.waitUntil(lambda: w.conversations.current == second and _titles(w) == ["Trains"], timeout=30000)
    assert [m.text for m in w.chat.messages][:1] == ["Tell me about trains."]
    assert "deleted" in w.banners.messages()
    w.conversations.undo_delete(first)
    assert sorted(_titles(w)) == ["My favourite colour is green.", "Trains"]
    close_window(w)

    again = open_window(qtbot)  # the last open conversation opens at start
    assert again.conversations.current == second
    qtbot.waitUntil(lambda: len(again.chat.messages) == 2, timeout=30000)
    assert again.chat.messages[0].text == "Tell me about trains."
    close_window(again)


def test_an_earlier_versions_session_becomes_a_conversation(qtbot, config_dir, virtual_audio) -> None:
    w = open_window(qtbot)
    _say(qtbot, w, "Remember the number seven.")
    saved = w.conversations.path
    close_window(w)
    legacy = config_dir / "data" / "session"  # where the single session used to live
    saved.rename(legacy)
    from app.loop.settings import AppSettings

    s = AppSettings.load()
    s.conversation = ""
    s.save()
    w2 = open_window(qtbot, s)
    qtbot.waitUntil(lambda: len(w2.chat.messages) == 2, timeout=30000)
    assert w2.chat.messages[0].text == "Remember the number seven." and not legacy.exists()
    assert _titles(w2)[0] == "Remember the number seven."
    close_window(w2)


def test_a_narrow_window_hides_the_sidebar_and_the_menu_toggles_it(qtbot, config_dir, virtual_audio) -> None:
    w = open_window(qtbot, wait_loaded=False)
    w.resize(940, 600)
    qtbot.waitUntil(lambda: w.sidebar.isVisible(), timeout=5000)
    w.resize(400, 600)
    qtbot.waitUntil(lambda: not w.sidebar.isVisible(), timeout=5000)
    w.resize(940, 600)
    qtbot.waitUntil(lambda: w.sidebar.isVisible(), timeout=5000)
    w.menu_actions["sidebar"].trigger()
    assert not w.sidebar.isVisible() and not w.settings.sidebar
    w.menu_actions["sidebar"].trigger()
    assert w.sidebar.isVisible()
    close_window(w)


def test_the_window_title_names_the_conversation_and_unsent_text_stays_with_it(
    qtbot, config_dir, virtual_audio, tmp_path, monkeypatch
) -> None:
    from app.gui.export_path import export_folder, export_name

    w = open_window(qtbot)
    first = w.conversations.current
    assert w.windowTitle() == f"{UNTITLED} — talk-llama"
    _say(qtbot, w, "What is the capital of France?")
    qtbot.waitUntil(lambda: w.windowTitle() == "What is the capital of France? — talk-llama", timeout=5000)
    w.input.setText("and of Spain")  # typed, not sent
    w.menu_actions["new"].trigger()
    second = w.conversations.current
    assert second != first and w.input.text() == ""  # the new conversation's box is its own
    assert w.windowTitle() == f"{UNTITLED} — talk-llama"
    w.input.setText("a draft in the new one")
    w.sidebar.chosen.emit(first)
    qtbot.waitUntil(lambda: len(w.chat.messages) == 2, timeout=30000)
    assert w.input.text() == "and of Spain" and w.windowTitle().startswith("What is the capital")
    assert second in w.sidebar.ids()  # an empty conversation holding a draft is not thrown away
    w.sidebar.chosen.emit(second)
    qtbot.waitUntil(lambda: w.conversations.current == second and not w.chat.messages, timeout=30000)
    assert w.input.text() == "a draft in the new one"
    shot(w, "draft-kept")
    # Export suggests the title as the file name, in Documents, else the home folder
    assert w.conversations.title == UNTITLED  # what Export names the file after
    assert export_name("What is the capital of France?") == "What is the capital of France"
    assert export_name("???") == "conversation"
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("XDG_DOCUMENTS_DIR", raising=False)
    assert export_folder() == tmp_path
    (tmp_path / "Documents").mkdir()
    assert export_folder() == tmp_path / "Documents"
    close_window(w)
