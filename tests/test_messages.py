"""Messages in the window (issue #16, point 2, in part): replies rendered as Markdown with raw
HTML and control-token look-alikes shown as typed, the spoken sentence highlighted, a copy link,
and when each message was said on hovering its speaker's name. The real ChatView and ChatFeed
(offscreen Qt) fed the events the assistant sends; no model is needed for what is drawn."""

from __future__ import annotations

from datetime import datetime

from PySide6.QtCore import QEvent, QPoint, QUrl
from PySide6.QtGui import QGuiApplication, QHelpEvent, QTextDocument
from PySide6.QtWidgets import QToolTip

from app.brain.records import Message
from app.gui.chat_feed import ChatFeed
from app.gui.chat_view import ChatView
from app.loop.events import History, SentenceProgress, Token, TurnReported, UserTurn
from tests.test_gui import shot

REPLY = (
    "Here is **what to pack**:\n\n"
    "- a *warm* coat\n- the `tent` and its pegs\n\n"
    "Never write <|im_start|>system or <b>tags</b> into a prompt."
)


def _view(qtbot) -> tuple[ChatView, ChatFeed]:
    view = ChatView("Sam", "Max")
    qtbot.addWidget(view)
    view.resize(560, 420)
    view.show()
    feed = ChatFeed(view)
    feed.person, feed.bot = "Sam", "Max"
    return view, feed


def test_a_reply_is_markdown_and_control_tokens_stay_text(qtbot) -> None:
    view, feed = _view(qtbot)
    feed.handle(UserTurn("What should I pack for camping? **Really**"))
    for piece in REPLY.split(" "):
        feed.handle(Token(piece + " "))
    feed.handle(SentenceProgress("queued", 0, "Never write"))
    feed.handle(SentenceProgress("sentence_started", 0))
    view.redraw()
    page = view.toHtml()
    assert "font-weight:700" in page and "<li" in page and "monospace" in page
    plain = view.toPlainText()
    assert "<|im_start|>system" in plain and "<b>tags</b>" in plain  # shown, never interpreted
    assert "**Really**" in plain  # the user's words are not Markdown
    assert "background-color:rgba" in page  # the sentence being spoken
    shot(view, "markdown-reply")


def test_copy_link_copies_the_message(qtbot) -> None:
    view, feed = _view(qtbot)
    feed.handle(UserTurn("Hello there"))
    feed.handle(Token("Hi **Sam**."))
    view.redraw()
    view.anchorClicked.emit(QUrl("copy:1"))
    assert view.copied == 1
    assert QGuiApplication.clipboard().text() == "Hi **Sam**."


def test_hovering_a_name_says_when_it_was_said(qtbot) -> None:
    view, feed = _view(qtbot)
    said = datetime(2026, 11, 30, 9, 41, 7)
    feed.handle(History((Message("user", "Good morning", time=said.timestamp()),)))
    view.redraw()
    cursor = view.document().find("Sam", 0, QTextDocument.FindFlag.FindCaseSensitively)
    spot = view.cursorRect(cursor).center() + QPoint(-2, 0)
    assert view.anchorAt(spot) == "who:0"
    view.event(QHelpEvent(QEvent.Type.ToolTip, spot, view.viewport().mapToGlobal(spot)))
    assert QToolTip.text() == "said Monday 30 November, 09:41:07"


def test_redrawing_only_the_newest_message_draws_what_a_full_redraw_draws(qtbot) -> None:
    """While a reply streams only its message is redrawn; the page must be the same as drawing
    the whole conversation again (text, highlight, links, then the turn's timing line)."""
    view, feed = _view(qtbot)
    history = [Message("user" if i % 2 == 0 else "assistant", f"Line **{i}** here.") for i in range(40)]
    feed.handle(History(tuple(history)))
    feed.handle(UserTurn("And now?"))
    view.redraw()
    for piece in REPLY.split(" "):
        feed.handle(Token(piece + " "))
        view.redraw()
    feed.handle(SentenceProgress("queued", 0, "Here is"))
    feed.handle(SentenceProgress("sentence_started", 0))
    view.redraw()
    feed.handle(TurnReported("", REPLY, interrupted=False, t_first_token_ms=120.0, typed=True))
    view.redraw()
    shot(view, "streamed-into-long-conversation")
    fresh = ChatView("Sam", "Max")
    qtbot.addWidget(fresh)
    fresh.resize(560, 420)
    fresh.messages = view.messages
    fresh.redraw()
    assert view.toPlainText() == fresh.toPlainText()
    assert view.toHtml() == fresh.toHtml()  # formats too (a block's margin must not drift)
    assert view.toPlainText().rstrip().endswith("after you pressed Enter · details")
    assert view.toHtml().count("background-color:rgba") == fresh.toHtml().count("background-color:rgba") == 1
    assert (
        view.anchorAt(view.cursorRect(view.document().find("copy", view._tail)).center()) == "copy:41"
    )  # the reply being written (40 earlier + the question)
