"""The conversation view: messages from a list of ChatMessage, re-rendered (throttled) as HTML
(each message drawn by message_html.py).

Each message has a **copy** link (its text to the clipboard) and shows when it was said on
hovering its speaker's name. The newest reply has a **retry** link while the assistant is idle
(`can_retry`; the click emits `retry_requested`); a reply answered again shows which answer it
is ("2/3"), and the newest one's arrows choose another (`version_requested`). The view follows
new messages unless the reader has scrolled up. The chat is one Tab stop: there, Up/Down
(Home/End) move between messages (the one with the keyboard is outlined and scrolled into
view), Left/Right between its links, Enter follows the link. GUI thread only; paint-only.
"""

from __future__ import annotations

import html

from PySide6.QtCore import QEvent, Qt, QTimer, QUrl, Signal
from PySide6.QtGui import (
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
from app.gui.message_html import LINK, ChatMessage, chat_colors, message_html

READING_WIDTH = 760  # px: the longest line the chat shows, however wide the window (bubbles: 85% of it)


PTT_HINT = "Hold the button (or {key}) and speak, or type a message below."
HANDS_FREE_HINT = "Just speak: hands-free listening is on. You can also type a message below."


class ChatView(QTextBrowser):
    """The conversation, re-rendered (throttled) from a list of ChatMessage. It follows new
    messages unless the reader has scrolled up."""

    retry_requested = Signal()
    version_requested = Signal(int)  # the index of the newest turn's answer to go on from

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
        self.setTabChangesFocus(True)  # Tab is never typed into it (and see focusNextPrevChild)
        self.setAccessibleName("Conversation")
        self.anchorClicked.connect(self._toggle)
        self._follow = True  # at the bottom: keep showing the newest message
        self.focused: int | None = None  # the message the arrow keys are on
        self.focused_link = 0  # which of its links Enter follows
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
        self.focused = None
        self.redraw()

    # ----- the keyboard: one Tab stop, arrows between messages and their links -------------------
    def keyPressEvent(self, e) -> None:
        key, n = Qt.Key(e.key()), len(self.messages)
        moves = {Qt.Key.Key_Up: -1, Qt.Key.Key_Down: 1, Qt.Key.Key_Home: -n, Qt.Key.Key_End: n}
        if n and key in moves:
            at = n if self.focused is None else self.focused  # the first Up lands on the newest
            self._focus(min(max(at + moves[key], 0), n - 1))
        elif self.focused is not None and key in (Qt.Key.Key_Left, Qt.Key.Key_Right):
            links = self.links(self.focused)
            if links:
                step = 1 if key == Qt.Key.Key_Right else -1
                self.focused_link = (self.focused_link + step) % len(links)
                self.redraw()
        elif self.focused is not None and key in (Qt.Key.Key_Return, Qt.Key.Key_Enter):
            links = self.links(self.focused)
            if links:
                self._toggle(QUrl(links[min(self.focused_link, len(links) - 1)]))
        else:
            super().keyPressEvent(e)

    def links(self, i: int) -> list[str]:
        """The links of message `i` as drawn (copy, retry, answers, details)."""
        drawn = self._drawn[i][1] if 0 <= i < len(self._drawn) else ""
        return LINK.findall(drawn)

    def _focus(self, i: int) -> None:
        if i != self.focused:
            self.focused, self.focused_link = i, 0
        self.redraw()
        if i == len(self.messages) - 1:
            self.follow_latest()  # the newest: seen whole, and the view follows on from it
        else:
            self.scrollToAnchor(f"m{i}")

    def focusNextPrevChild(self, next: bool) -> bool:
        """Tab leaves the chat: QTextBrowser would walk every link first (setTabChangesFocus
        does not stop that); the arrow keys reach them instead."""
        return QWidget.focusNextPrevChild(self, next)

    def focusInEvent(self, e) -> None:
        super().focusInEvent(e)
        self.schedule()  # the outline shows only while the chat has the keyboard

    def focusOutEvent(self, e) -> None:
        super().focusOutEvent(e)
        self.schedule()

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

    def add(
        self, role: str, text: str, interrupted: bool = False, name: str = "", language: str = ""
    ) -> ChatMessage:
        msg = ChatMessage(role, text, interrupted, name=name, language=language)
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
        """A link in the view: `lat:i` shows/hides timing details, `think:i` the thinking,
        `copy:i` copies message i, `retry:i` asks for another answer to the newest turn."""
        kind, _, index = url.toString().partition(":")
        if kind == "retry":
            if self._can_retry:
                self.retry_requested.emit()
            return
        if kind == "ver":
            if self._can_retry:
                self.version_requested.emit(int(index))
            return
        m = self.messages[int(index)]
        if kind == "copy":
            QGuiApplication.clipboard().setText(m.text + (" " + m.unspoken if m.unspoken else ""))
            self.copied = int(index)
            return
        if kind == "think":
            m.thought_open = not m.thought_open
        else:
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
        colors = chat_colors(self.palette())
        if not self.messages:
            hint = html.escape(self.hint)
            self._show(f"<p style='color:{colors[1]}; text-align:center; margin-top:40px'>{hint}</p>", "")
            self._drawn = []
            return
        retry = len(self.messages) - 1 if self._can_retry and self._retryable() else -1
        if self.focused is not None and self.focused >= len(self.messages):
            self.focused = None
        keyboard = self.focused if self.hasFocus() else None
        drawn = [
            (
                colors,
                message_html(
                    i, m, self._who(m), colors, i == retry, self.focused_link if i == keyboard else None
                ),
            )
            for i, m in enumerate(self.messages)
        ]
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

    def _who(self, m: ChatMessage) -> str:
        return speaker_name(m.role, m.name, self.person, self.bot)

    def _retryable(self) -> bool:
        """The newest message is a finished reply to a turn of the user's, by the model (an
        action's answer is what was done: there is no other)."""
        m = self.messages
        reply = len(m) >= 2 and m[-1].role == "assistant" and m[-2].role == "user" and bool(m[-1].text)
        return reply and "action" not in m[-1].latency
