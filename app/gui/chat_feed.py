"""The conversation as it happens: the core's conversation events drawn into the ChatView.

`ChatFeed.handle(kind, data)` takes `history`, `switched`, `user`, `token`, `sentence`, `heard`,
`turn`, `retracted` (a Retry, or the user going on after a pause, took the newest exchange
back: it leaves the screen) and the end of speaking (`speech_ended`); it owns the reply being
written and which of its sentences is being spoken (highlighted). Returns False for kinds it
does not draw. GUI thread only.
"""

from __future__ import annotations

from datetime import datetime

from app.gui.chat_view import ChatMessage, ChatView


class ChatFeed:
    def __init__(self, chat: ChatView) -> None:
        self.chat = chat
        self.person = "User"
        self.bot = "Aria"
        self.reply: ChatMessage | None = None  # the assistant message being written
        self._queued: dict[int, str] = {}  # sentence index -> text, until it is spoken

    def handle(self, kind: str, d: dict) -> bool:
        handler = getattr(self, f"_on_{kind}", None)
        if handler is None:
            return False
        handler(d)
        return True

    def clear(self) -> None:
        self.reply = None
        self.chat.show_messages([])

    def speech_ended(self) -> None:
        """The assistant stopped speaking: the highlight ends with the speech."""
        if self.reply is not None and self.reply.spoken:
            self.reply.spoken = ""
            self.chat.schedule()

    def _on_history(self, d: dict) -> None:
        """The whole conversation (at start, or another one opened: `switched`)."""
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
                )
                for m in d["messages"]
            ]
        )

    _on_switched = _on_history

    def _on_user(self, d: dict) -> None:
        self.chat.add("user", d["text"], name=self.person)
        self.reply = self.chat.add("assistant", "", name=self.bot)
        self._queued.clear()

    def _on_token(self, d: dict) -> None:
        if self.reply is not None:
            self.reply.text = (self.reply.text + d["text"]).lstrip()
            self.chat.schedule()

    def _on_sentence(self, d: dict) -> None:
        if self.reply is None:
            return
        if d["event"] == "queued":
            self._queued[d["index"]] = d["text"]
        elif d["event"] == "sentence_started":
            self.reply.spoken = self._queued.get(d["index"], "")
            self.chat.schedule()
        elif d["event"] in ("sentence_finished", "sentence_cut", "queue_empty"):
            self.reply.spoken = ""
            self.chat.schedule()

    def _on_heard(self, d: dict) -> None:
        """A barge-in cut the reply: it is remembered as far as it was heard."""
        msg = self.reply or next((m for m in reversed(self.chat.messages) if m.role == "assistant"), None)
        if msg is not None:
            msg.text, msg.unspoken, msg.interrupted, msg.spoken = d["text"], d["unspoken"], True, ""
            self.chat.schedule()

    def _on_retracted(self, d: dict) -> None:
        """The newest exchange left the conversation (Retry, or the user went on talking):
        its reply (if any was shown) and its words leave the screen."""
        m = self.chat.messages
        if m and m[-1].role == "assistant":
            m.pop()
        if m and m[-1].role == "user" and m[-1].text == d["text"]:
            m.pop()
        self.reply = None
        self.chat.redraw()

    def _on_turn(self, d: dict) -> None:
        if self.reply is not None:
            if not self.reply.unspoken:  # a cut reply keeps the heard/unspoken split
                self.reply.text = d["reply"] or self.reply.text
            self.reply.interrupted = self.reply.interrupted or d["interrupted"]
            self.reply.latency = d
            self.chat.schedule()
