"""The conversation view: messages from a list of ChatMessage, re-rendered (throttled) as HTML.

Each message is a bubble (the user's on the right in the accent's tint, the assistant's on the
left). Assistant replies are Markdown (markdown-it-py, CommonMark with raw HTML escaped: bold,
lists, code in monospace; text that looks like markup or chat control tokens is shown as typed).
User turns are plain text. Each message has a **copy** link (its text to the clipboard) and shows
when it was said on hovering its speaker's name; the sentence being spoken is highlighted; an
interrupted reply says so. The newest reply has a **retry** link while the assistant is idle
(`can_retry`; the click emits `retry_requested`). The view follows new messages unless the reader
has scrolled up. GUI thread only; paint-only.
"""

from __future__ import annotations

import functools
import html
from dataclasses import dataclass, field
from datetime import datetime

from markdown_it import MarkdownIt
from PySide6.QtCore import QEvent, Qt, QTimer, QUrl, Signal
from PySide6.QtGui import (
    QColor,
    QGuiApplication,
    QHelpEvent,
    QPalette,
    QResizeEvent,
    QTextBlockFormat,
    QTextCharFormat,
    QTextCursor,
)
from PySide6.QtWidgets import QTextBrowser, QToolButton, QToolTip, QWidget

from app.brain.history import speaker_name

_MD = MarkdownIt("commonmark", {"html": False, "breaks": True})
CODE_STYLE = "font-family: monospace;"
READING_WIDTH = 760  # px: the longest line the chat shows, however wide the window (bubbles: 85% of it)


@functools.lru_cache(maxsize=4096)
def markdown_html(text: str) -> str:
    """`text` as HTML (Markdown; raw HTML escaped). Cached: a long conversation is re-rendered
    while a reply streams, and only the streaming message changes."""
    out = _MD.render(text).strip()
    out = out.replace("<code>", f"<code style='{CODE_STYLE}'>")
    # QTextBrowser gives paragraphs a top and bottom margin; the message block has its own
    return out.replace("<p>", "<p style='margin:0'>")


@dataclass
class ChatMessage:
    role: str
    text: str
    interrupted: bool = False
    spoken: str = ""  # the sentence being spoken now (assistant)
    latency: dict = field(default_factory=dict)
    expanded: bool = False
    name: str = ""  # who said it, as named then ("" = the current name)
    unspoken: str = ""  # generated but never said aloud (a barge-in cut it): shown apart
    at: datetime = field(default_factory=datetime.now)  # when it was said (shown on hover)


PTT_HINT = "Hold the button (or {key}) and speak, or type a message below."
HANDS_FREE_HINT = "Just speak: hands-free listening is on. You can also type a message below."


def _mix(a: QColor, b: QColor, share: float) -> str:
    """`share` of `b` over `a`, as an opaque #rrggbb (table backgrounds take no alpha)."""
    pairs = ((a.red(), b.red()), (a.green(), b.green()), (a.blue(), b.blue()))
    mixed = [round(x * (1 - share) + y * share) for x, y in pairs]
    return "#{:02x}{:02x}{:02x}".format(*mixed)


class ChatView(QTextBrowser):
    """The conversation, re-rendered (throttled) from a list of ChatMessage. It follows new
    messages unless the reader has scrolled up."""

    retry_requested = Signal()

    def __init__(self, person: str, bot: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.person, self.bot = person, bot
        self._can_retry = False
        self.hint = PTT_HINT.format(key="Space")
        self.messages: list[ChatMessage] = []
        self.copied: int | None = None  # the message last copied (tests read it)
        self._drawn: list[tuple[tuple, str]] = []  # (colors, html) per message, as last drawn
        self._tail: int | None = None  # where the last message starts in the document
        self.setOpenLinks(False)
        self.setTabChangesFocus(True)  # Tab leaves the view instead of walking its links
        self.setAccessibleName("Conversation")
        self.anchorClicked.connect(self._toggle)
        self._follow = True  # at the bottom: keep showing the newest message
        self._rendering = False
        self.latest = QToolButton(self)  # shown while the reader is scrolled up
        self.latest.setText("↓ Jump to latest")
        self.latest.setAccessibleName("Jump to the latest message")
        self.latest.setFocusPolicy(Qt.FocusPolicy.NoFocus)  # the chat stays one Tab stop
        self.latest.clicked.connect(self.follow_latest)
        self.latest.hide()
        bar = self.verticalScrollBar()
        bar.valueChanged.connect(self._scrolled)
        bar.rangeChanged.connect(self._range_changed)
        self._fitting = False  # in _fit_reading_width
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(40)
        self._timer.timeout.connect(self.redraw)
        self.setBackgroundRole(QPalette.ColorRole.Base)  # the side margins look like the page
        self.setAutoFillBackground(True)
        self.redraw()

    def changeEvent(self, event) -> None:
        if event.type() == QEvent.Type.PaletteChange:  # light/dark: the HTML takes its colors
            self.schedule()
        super().changeEvent(event)

    def show_messages(self, messages: list[ChatMessage]) -> None:
        """Another conversation (or none): its messages, shown from the newest."""
        self.messages = messages
        self._follow = True
        self.redraw()

    def follow_latest(self) -> None:
        """Scroll to the newest message and keep following new ones."""
        self._follow = True
        bar = self.verticalScrollBar()
        bar.setValue(bar.maximum())
        self._place_latest()

    def _place_latest(self) -> None:
        bar = self.verticalScrollBar()
        below = bar.value() < bar.maximum() - 4
        self.latest.setVisible(below and not self._follow)
        if self.latest.isVisible():
            self.latest.adjustSize()
            area = self.viewport().geometry()
            self.latest.move(
                area.right() - self.latest.width() - 12, area.bottom() - self.latest.height() - 12
            )

    def resizeEvent(self, event: QResizeEvent) -> None:
        self._fit_reading_width(event.size().width())  # first: the text is laid out for it next
        super().resizeEvent(event)
        self._place_latest()

    def _fit_reading_width(self, width: int) -> None:
        """Lines no longer than READING_WIDTH px however wide the window, in the middle: the
        viewport gets equal side margins (a right-aligned bubble floats to the viewport's
        edge, whatever the document's own margins or width say)."""
        room = width - 2 * self.frameWidth() - self.verticalScrollBar().sizeHint().width()
        side = max(0, (room - READING_WIDTH) // 2)
        if self.viewportMargins().left() != side and not self._fitting:
            self._fitting = True  # setting the margins sends this view a resize event at once
            try:
                self.setViewportMargins(side, 0, side, 0)
            finally:
                self._fitting = False

    def add(self, role: str, text: str, interrupted: bool = False, name: str = "") -> ChatMessage:
        msg = ChatMessage(role, text, interrupted, name=name)
        self.messages.append(msg)
        self.schedule()
        return msg

    @property
    def can_retry(self) -> bool:
        return self._can_retry

    @can_retry.setter
    def can_retry(self, value: bool) -> None:
        """Whether the newest reply offers Retry (the window: while the assistant is idle)."""
        if value != self._can_retry:
            self._can_retry = value
            self.schedule()

    def schedule(self) -> None:
        if not self._timer.isActive():
            self._timer.start()

    def _scrolled(self, value: int) -> None:
        if not self._rendering:  # the reader moved: follow only from the bottom
            self._follow = value >= self.verticalScrollBar().maximum() - 4
        self._place_latest()

    def _range_changed(self, _lo: int, hi: int) -> None:
        if self._follow:  # the layout grew after a render: stay at the bottom
            self.verticalScrollBar().setValue(hi)
        self._place_latest()

    def _toggle(self, url: QUrl) -> None:
        """A link in the view: `lat:i` shows/hides timing details, `copy:i` copies message i,
        `retry:i` asks for another answer to the newest turn."""
        kind, _, index = url.toString().partition(":")
        if kind == "retry":
            if self._can_retry:
                self.retry_requested.emit()
            return
        m = self.messages[int(index)]
        if kind == "copy":
            QGuiApplication.clipboard().setText(m.text + (" " + m.unspoken if m.unspoken else ""))
            self.copied = int(index)
            return
        m.expanded = not m.expanded
        self.redraw()

    def event(self, e: QEvent) -> bool:
        """Hovering a speaker's name tells when the message was said."""
        if e.type() == QEvent.Type.ToolTip:
            assert isinstance(e, QHelpEvent)
            anchor = self.anchorAt(e.pos())
            if anchor.startswith("who:"):
                m = self.messages[int(anchor[4:])]
                QToolTip.showText(e.globalPos(), f"said {m.at:%A %d %B, %H:%M:%S}", self)
            else:
                QToolTip.hideText()
            return True
        return super().event(e)

    def redraw(self) -> None:
        """Draw the conversation. While only the newest message changes (a reply streaming, its
        sentence highlight, its timing line) only that message is redrawn: a long conversation
        is not parsed again 25 times a second."""
        pal = self.palette()
        hi, base = pal.color(QPalette.ColorRole.Highlight), pal.color(QPalette.ColorRole.Base)
        colors = (
            f"rgba({hi.red()},{hi.green()},{hi.blue()},0.35)",
            pal.color(QPalette.ColorRole.PlaceholderText).name(),
            _mix(base, hi, 0.18),  # the user's bubble: a tint of the accent
            pal.color(QPalette.ColorRole.Text).name(),
            _mix(base, pal.color(QPalette.ColorRole.Text), 0.07),  # the assistant's bubble
        )
        if not self.messages:
            hint = html.escape(self.hint)
            self._show(f"<p style='color:{colors[1]}; text-align:center; margin-top:40px'>{hint}</p>", "")
            self._drawn = []
            return
        retry = len(self.messages) - 1 if self._can_retry and self._retryable() else -1
        drawn = [(colors, self._message_html(i, m, colors, i == retry)) for i, m in enumerate(self.messages)]
        if len(drawn) == len(self._drawn) and drawn[:-1] == self._drawn[:-1] and self._tail is not None:
            if drawn[-1] != self._drawn[-1]:
                self._show(None, drawn[-1][1])
        else:
            self._show("".join(h for _, h in drawn[:-1]), drawn[-1][1])
        self._drawn = drawn

    def _show(self, head: str | None, tail: str) -> None:
        """Replace the document (`head` not None) or only its last message (`tail`), keeping the
        reader's scroll position unless they follow the newest message."""
        bar = self.verticalScrollBar()
        keep = bar.value()
        self._rendering = True
        try:
            cursor = QTextCursor(self.document())
            if head is not None:
                self.setHtml(head)
                cursor.movePosition(QTextCursor.MoveOperation.End)
                if head:
                    cursor.insertBlock()
                self._tail = cursor.position()
            assert self._tail is not None  # only the last message is replaced once one was drawn
            cursor.setPosition(self._tail)
            cursor.movePosition(QTextCursor.MoveOperation.End, QTextCursor.MoveMode.KeepAnchor)
            cursor.removeSelectedText()
            # The message's block starts plain each time: a block left by the removal would
            # otherwise lend it the format of what was there before (the timing line's margin).
            cursor.setBlockFormat(QTextBlockFormat())
            cursor.setCharFormat(QTextCharFormat())
            if tail:
                cursor.insertHtml(tail)
            bar.setValue(bar.maximum() if self._follow else keep)
        finally:
            self._rendering = False

    def _retryable(self) -> bool:
        """The newest message is a finished reply to a turn of the user's."""
        m = self.messages
        return len(m) >= 2 and m[-1].role == "assistant" and m[-2].role == "user" and bool(m[-1].text)

    def _message_html(self, i: int, m: ChatMessage, colors: tuple[str, ...], retry: bool) -> str:
        hl, muted, user_bg, text_color, bot_bg = colors
        who = speaker_name(m.role, m.name, self.person, self.bot)
        body = markdown_html(m.text) if m.role == "assistant" else html.escape(m.text)
        if m.spoken and m.role == "assistant":  # found when the sentence is one run of text
            s = html.escape(m.spoken)
            body = body.replace(s, f"<span style='background-color:{hl}'>{s}</span>", 1)
        note = ""
        if m.unspoken:
            rest = html.escape(m.unspoken)
            note = f" <span style='color:#9a9a9a; text-decoration:line-through'>{rest}</span>"
            note += f" <i style='color:{muted}'>(interrupted: the struck-out part was not spoken)</i>"
        elif m.interrupted:
            note = f" <i style='color:{muted}'>(interrupted)</i>"
        if note:  # it continues the last paragraph (where the listener stopped hearing)
            end = body.rfind("</p>")
            body = body[:end] + note + body[end:] if end >= 0 and body.endswith("</p>") else body + note
        plain = f"text-decoration:none; color:{text_color}"
        name = f"<a href='who:{i}' style='{plain}'><b>{html.escape(who)}</b></a>"
        link = f"color:{muted}; font-size:small"
        tools = f"<a href='copy:{i}' style='{link}'>copy</a>" if m.text else ""
        if retry:
            tools += f" &nbsp;<a href='retry:{i}' style='{link}'>retry</a>"
        sep = "" if body.startswith("<") else "<br>"  # Markdown starts with its own block
        # A bubble: a one-cell table (QTextDocument draws table backgrounds and padding; it has
        # no rounded corners). The user's sits to the right, the assistant's to the left.
        bg, side = (user_bg, " align='right'") if m.role == "user" else (bot_bg, "")
        out = (
            f"<table width='85%'{side} cellspacing='0' cellpadding='8' bgcolor='{bg}'"
            " style='margin-top:6px; border-style:none'>"
            f"<tr><td>{name} &nbsp;{tools}{sep}{body}</td></tr></table>"
        )
        return out + (self._latency_html(i, m, muted) if m.latency else "")

    @staticmethod
    def _latency_html(i: int, m: ChatMessage, muted: str) -> str:
        lat = m.latency
        since = "after you pressed Enter" if lat.get("typed") else "after you stopped talking"
        v2v = lat.get("t_first_audio_ms")
        head = (
            f"spoke {v2v / 1000:.2f} s {since}"
            if v2v
            else f"first words {(lat.get('t_first_token_ms') or 0) / 1000:.2f} s {since}"
        )
        link = f"<a href='lat:{i}'>{'hide' if m.expanded else 'details'}</a>"
        text = f"<span style='color:{muted}; font-size:small'>{head} · {link}</span>"
        if m.expanded:
            rows = [
                ("heard you", "t_transcript_ms"),
                ("sure you had finished", "t_confirmed_ms"),
                ("first word", "t_first_token_ms"),
                ("first sentence", "t_first_sentence_ms"),
                ("first sound", "t_first_audio_ms"),
            ]
            cells = " · ".join(f"{name} {lat[k]:.0f} ms" for name, k in rows if lat.get(k) is not None)
            n_in, t_in = lat.get("prompt_tokens", 0), lat.get("t_prompt_ms", 0)
            cells += f" · read your words ({n_in} tokens) in {t_in:.0f} ms"
            cells += f" · wrote {lat.get('gen_tokens', 0)} tokens in {lat.get('t_gen_ms', 0):.0f} ms"
            text += f"<br><span style='color:{muted}; font-size:small'>{since}: {cells}</span>"
        return f"<div style='margin:0 0 6px 6px'>{text}</div>"
