"""The conversation as it happens: the core's conversation events drawn into the ChatView.

`ChatFeed.handle(event)` draws History, Switched, UserTurn, Token, SentenceProgress, Heard,
TurnReported, Retracted (a Retry, or the user going on after a pause, took the newest exchange
back: it leaves the screen), VersionChosen (another answer of the newest turn chosen), and the
end of speaking (`speech_ended`); it owns the reply being written and which sentence on the
screen is being spoken (highlighted: one at most). Returns False for events it does not draw.
GUI thread only.
"""

from __future__ import annotations

from datetime import datetime

from app.brain.records import Message
from app.gui.chat_view import ChatView
from app.gui.message_html import ChatMessage
from app.loop.events import (
    Event,
    Heard,
    History,
    Retracted,
    SentenceProgress,
    Switched,
    Token,
    TurnReported,
    UserTurn,
    VersionChosen,
)


class ChatFeed:
    def __init__(self, chat: ChatView) -> None:
        self.chat = chat
        self.person = "User"
        self.bot = "Aria"
        self.reply: ChatMessage | None = None  # the assistant message being written
        self._queued: dict[int, str] = {}  # sentence index -> text, until it is spoken

    def handle(self, ev: Event) -> bool:
        match ev:
            case History() | Switched():
                self._on_history(ev.messages)
            case UserTurn():
                self._on_user(ev)
            case Token():
                self._on_token(ev)
            case SentenceProgress():
                self._on_sentence(ev)
            case Heard():
                self._on_heard(ev)
            case VersionChosen():
                self._on_version(ev)
            case Retracted():
                self._on_retracted(ev)
            case TurnReported():
                self._on_turn(ev)
            case _:
                return False
        return True

    def clear(self) -> None:
        self.reply = None
        self.chat.show_messages([])

    def speech_ended(self) -> None:
        """The assistant stopped speaking: the highlight ends with the speech."""
        self._highlight(None, "")

    def _highlight(self, msg: ChatMessage | None, sentence: str) -> None:
        """`sentence` of `msg` is being spoken (None: nothing is): at most one sentence on the
        screen is highlighted, whichever reply it belongs to."""
        changed = False
        for m in self.chat.messages:
            text = sentence if m is msg else ""
            if m.spoken != text:
                m.spoken, changed = text, True
        if changed:
            self.chat.schedule()

    def _on_history(self, messages: tuple[Message, ...]) -> None:
        """The whole conversation (at start, or another one opened)."""
        self.reply = None
        self.chat.show_messages(
            [
                ChatMessage(
                    m.role,
                    m.text,
                    m.interrupted,
                    latency=m.details,
                    name=m.name,
                    unspoken=m.unspoken,
                    at=datetime.fromtimestamp(m.time),
                    versions=list(m.versions),
                    version=m.version,
                    language=m.language,
                    thinking=m.thinking,
                )
                for m in messages
            ]
        )

    def _on_user(self, ev: UserTurn) -> None:
        self._highlight(None, "")  # a new turn: whatever was being said has stopped
        self.chat.add("user", ev.text, name=self.person, language=ev.language)
        self.reply = self.chat.add("assistant", "", name=self.bot)
        self._queued.clear()

    def _on_token(self, ev: Token) -> None:
        if self.reply is not None:
            self.reply.text = (self.reply.text + ev.text).lstrip()
            self.chat.schedule()

    def _on_sentence(self, ev: SentenceProgress) -> None:
        if self.reply is None:
            return
        if ev.progress == "queued":
            self._queued[ev.index] = ev.text
        elif ev.progress == "sentence_started":
            self._highlight(self.reply, self._queued.get(ev.index, ""))
        elif ev.progress in ("sentence_finished", "sentence_cut", "queue_empty"):
            self._highlight(None, "")

    def _on_heard(self, ev: Heard) -> None:
        """A barge-in cut the reply: it is remembered as far as it was heard."""
        msg = self.reply or next((m for m in reversed(self.chat.messages) if m.role == "assistant"), None)
        if msg is not None:
            msg.text, msg.unspoken, msg.interrupted, msg.spoken = ev.text, ev.unspoken, True, ""
            self.chat.schedule()

    def _on_version(self, ev: VersionChosen) -> None:
        """Another of the newest turn's answers is the one the conversation goes on from."""
        m = next((m for m in reversed(self.chat.messages) if m.role == "assistant"), None)
        if m is not None:
            m.text, m.unspoken, m.interrupted = ev.text, "", False
            m.versions, m.version = list(ev.versions), ev.version
            self.chat.redraw()

    def _on_retracted(self, ev: Retracted) -> None:
        """The newest exchange left the conversation (Retry, or the user went on talking):
        its reply (if any was shown) and its words leave the screen."""
        m = self.chat.messages
        if m and m[-1].role == "assistant":
            m.pop()
        if m and m[-1].role == "user" and m[-1].text == ev.text:
            m.pop()
        self.reply = None
        self.chat.redraw()

    def _on_turn(self, ev: TurnReported) -> None:
        if self.reply is not None:
            if not self.reply.unspoken:  # a cut reply keeps the heard/unspoken split
                self.reply.text = ev.reply or self.reply.text
            self.reply.interrupted = self.reply.interrupted or ev.interrupted
            self.reply.versions, self.reply.version = list(ev.versions), ev.version
            self.reply.latency = ev.record()
            self.reply.thinking = ev.thinking
            self.chat.schedule()
