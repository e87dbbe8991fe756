"""Answering one turn: wait for a tentative turn's confirmation, stream the reply, hand each
sentence (the first may be a clause) to the Speaker as soon as it is complete, save the session,
and report the turn once its speech has started. After a barge-in, `settle_heard` makes the
assistant remember only what the listener heard of the reply (`heard.py`).

Threads: `run` is called on the llm thread only (it owns the Conversation). `current` (the turn
being generated) and `speaking` (the turn whose voice is playing) are read from other threads
for barge-in and speaker events. The report waits on its own short-lived thread.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from app.brain.brain import Brain, BrainError, save_session
from app.brain.records import Message
from app.loop.events import Event, State, unanswered
from app.loop.turn import Turn
from app.voice.sentences import SentenceSplitter, speakable

log = logging.getLogger(__name__)


class Responder:
    def __init__(
        self,
        conversation: Brain,
        speaker: Any,
        emit: Callable[[Event], None],
        set_state: Callable[[State], None],
        error: Callable[[str, str], None],
        *,
        first_chunk_chars: int,
        heard_ok: str = "",
        session_dir: Path | None = None,
    ) -> None:
        """`speaker`: a Speaker or ExternalSpeaker (say/busy/available); `emit`, `set_state` and
        `error(message, source)`: the assistant's, callable from any thread."""
        self.conversation = conversation
        self.speaker = speaker
        self._emit = emit
        self._set_state = set_state
        self._error = error
        self.first_chunk_chars = first_chunk_chars
        self.heard_ok = heard_ok
        self.session_dir = session_dir
        self.current: Turn | None = None
        self.speaking: Turn | None = None
        self.last_answered: Turn | None = None  # whose reply is the newest in the conversation

    def run(self, turn: Turn) -> None:
        """llm thread: answer `turn` (blocks until the reply is generated; a withdrawn tentative
        turn leaves no trace)."""
        if turn.withdrawn:
            return
        self.current = turn
        if turn.pending is None:
            self._begin_reply(turn)
        proceed = None if turn.pending is None else (lambda: self._await_confirmation(turn))
        splitter = SentenceSplitter(first_clause_chars=self.first_chunk_chars)
        try:
            for piece in self.conversation.stream(turn.text, turn.cancel, proceed):
                turn.stamps.setdefault("first_token", time.perf_counter())
                turn.reply += piece
                self._emit(Event("token", {"text": piece}))
                for sentence in splitter.feed(piece):
                    self._speak(turn, sentence)
            if not turn.cancel.is_set():
                for sentence in splitter.flush():
                    self._speak(turn, sentence)
        except Exception as exc:  # BrainError: a remote server failed; anything else is a bug
            log.log(logging.WARNING if isinstance(exc, BrainError) else logging.ERROR, "no reply: %s", exc)
            self._error(str(exc) if isinstance(exc, BrainError) else f"Generation failed: {exc}", "brain")
            if not turn.reply and not turn.withdrawn:  # nothing was said: the words go back, not lost
                self._emit(unanswered(turn.text, "The assistant could not answer."))
        self.current = None
        if turn.withdrawn:
            return
        message = None
        if self.conversation.history and self.conversation.history[-1].role == "assistant":
            self.last_answered, message = turn, self.conversation.history[-1]
        self.save_session()
        args = (turn, turn.reply.strip(), message)
        threading.Thread(target=self._report, args=args, daemon=True, name="turn-report").start()

    def settle_heard(self, turn: Turn) -> None:
        """llm thread, after a barge-in: the reply in the conversation (context and history)
        becomes the part the listener heard; the rest is kept apart as not spoken. Nothing
        changes when the voice is off (the text on screen was the reply) or all was heard."""
        if turn.settled or turn is not self.last_answered or not self.speaker.available:
            return
        turn.settled = True
        full, heard = turn.reply.strip(), turn.heard.text(turn.reply)
        if heard == full:
            return
        unspoken = full[len(heard) :].strip()
        if not self.conversation.amend_last_reply(heard, unspoken):
            return
        log.info("barge-in: %d of %d reply characters were heard and are remembered", len(heard), len(full))
        self.save_session()
        self._emit(Event("heard", {"text": heard, "unspoken": unspoken}))

    def save_session(self) -> None:
        """llm thread: write the session (when there is one); a failure is reported, not raised."""
        if self.session_dir and self.conversation.history:
            try:
                save_session(self.conversation, self.session_dir)
            except OSError as exc:
                self._error(f"Could not save the session: {exc}", "session")

    def _begin_reply(self, turn: Turn) -> None:
        """The turn is certain: show it and start answering."""
        self.speaking = turn
        self._emit(Event("user", {"text": turn.text}))
        self._set_state(State.THINKING)
        if self.heard_ok and self.speaker.available:
            self.speaker.say(self.heard_ok)

    def _await_confirmation(self, turn: Turn) -> bool:
        """A tentative turn's prompt is evaluated: wait for the end of speech (blocks)."""
        assert turn.pending is not None
        if not turn.pending.wait() or turn.cancel.is_set():
            return False
        self._begin_reply(turn)
        return True

    def _speak(self, turn: Turn, sentence: str) -> None:
        turn.stamps.setdefault("first_sentence", time.perf_counter())
        spoken = speakable(sentence)
        if spoken and self.speaker.available and not turn.cancel.is_set() and not turn.voice_off:
            index = self.speaker.say(spoken)
            turn.heard.queued(index, sentence, turn.reply)
            self._emit(Event("sentence", {"event": "queued", "index": index, "text": sentence}))

    def _report(self, turn: Turn, reply: str, message: Message | None) -> None:
        """The `turn` event, once the turn's speech has started (or was cut/unavailable); the
        report is also kept with the reply's history message (saved with the session)."""
        deadline = time.monotonic() + 30
        while (
            "first_audio" not in turn.stamps
            and self.speaker.busy
            and not turn.cancel.is_set()
            and time.monotonic() < deadline
        ):
            time.sleep(0.01)
        stats = self.conversation.last_stats
        data = turn.report(reply, stats, self.conversation.context_stats())
        if message is not None:
            message.details = {k: v for k, v in data.items() if k not in ("user", "reply")}
        self._emit(Event("turn", data))
        if self.speaking is turn and not self.speaker.busy and self.current is None:
            self._set_state(State.IDLE)
