"""The conversation as it happens: the core's conversation events drawn into the ChatView.

`ChatFeed.handle(kind, data)` takes `history`, `switched`, `user`, `token`, `sentence`, `heard`,
`turn`, `retracted` (a Retry, or the user going on after a pause, took the newest exchange
back: it leaves the screen), `version` (another answer of the newest turn chosen) and the end
of speaking (`speech_ended`); it owns the reply being written and which sentence on the screen
is being spoken (highlighted: one at most). Returns False for kinds it does not draw. GUI
thread only.
"""

from __future__ import annotations

from datetime import datetime

from app.gui.chat_view import ChatView
from app.gui.message_html import ChatMessage


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
                    versions=list(m.versions),
                    version=m.version,
                    language=m.language,
                    thinking=m.thinking,
                )
                for m in d["messages"]
            ]
        )

    _on_switched = _on_history

    def _on_user(self, d: dict) -> None:
        self._highlight(None, "")  # a new turn: whatever was being said has stopped
        self.chat.add("user", d["text"], name=self.person, language=d.get("language", ""))
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
            self._highlight(self.reply, self._queued.get(d["index"], ""))
        elif d["event"] in ("sentence_finished", "sentence_cut", "queue_empty"):
            self._highlight(None, "")

    def _on_heard(self, d: dict) -> None:
        """A barge-in cut the reply: it is remembered as far as it was heard."""
        msg = self.reply or next((m for m in reversed(self.chat.messages) if m.role == "assistant"), None)
        if msg is not None:
            msg.text, msg.unspoken, msg.interrupted, msg.spoken = d["text"], d["unspoken"], True, ""
            self.chat.schedule()

    def _on_version(self, d: dict) -> None:
        """Another of the newest turn's answers is the one the conversation goes on from."""
        m = next((m for m in reversed(self.chat.messages) if m.role == "assistant"), None)
        if m is not None:
            m.text, m.unspoken, m.interrupted = d["text"], "", False
            m.versions, m.version = list(d["versions"]), d["version"]
            self.chat.redraw()

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
            self.reply.versions, self.reply.version = list(d.get("versions", [])), d.get("version", 0)
            self.reply.latency = d
            self.reply.thinking = d.get("thinking", "")
            self.chat.schedule()
