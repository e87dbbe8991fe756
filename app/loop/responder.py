"""Answering one turn: wait for a tentative turn's confirmation, stream the reply, hand each
sentence (the first may be a clause) to the Speaker as soon as it is complete, save the session,
and report the turn once its speech has started. After a barge-in, `settle_heard` makes the
assistant remember only what the listener heard of the reply (`heard.py`). Between turns:
`retry` answers the newest turn again, `open_session` continues another saved conversation.

Threads: `run` is called on the llm thread only (it owns the Conversation). `current` (the turn
being generated) and `speaking` (the turn whose voice is playing) are read from other threads
for barge-in and speaker events. The report waits on its own short-lived thread.
`take_back` forgets a turn the user went on talking after (continuation.py).
"""

from __future__ import annotations

import dataclasses
import logging
import threading
import time
from collections.abc import Callable
from pathlib import Path

from app.actions.intents import Request
from app.actions.skills import Actions
from app.brain.brain import Brain, BrainError, load_session, save_session
from app.brain.records import Message
from app.loop.events import (
    ActionTaken,
    Event,
    Heard,
    Notice,
    Retracted,
    SentenceProgress,
    State,
    Switched,
    Token,
    Unanswered,
    UserTurn,
    VersionChosen,
    messages_of,
)
from app.loop.ports import Report
from app.loop.turn import Turn
from app.loop.turn_gate import SpeculativeStart
from app.voice.sentence_queue import SpeakerEvent, Voice
from app.voice.sentences import SentenceSplitter, speakable

log = logging.getLogger(__name__)


# How long the reply waits for its first sentence to be synthesized (the natural voice: ~0.1-0.3 s)
FIRST_SYNTHESIS_WAIT_S = 2.0


class Responder:
    def __init__(
        self,
        conversation: Brain,
        speaker: Voice,
        *,
        report: Report,
        words_known: Callable[[Turn], None],
        first_chunk_chars: int,
        heard_ok: str = "",
        session_dir: Path | None = None,
        actions: Actions | None = None,
    ) -> None:
        """`speaker`: a Speaker or ExternalSpeaker (say/busy/available); `words_known(turn)`: a
        tentative turn's words are evaluated (end_of_turn.EndOfTurn; on this thread)."""
        self.conversation = conversation
        self.speaker = speaker
        self._emit = report.emit
        self._set_state = report.set_state
        self._error = report.error
        self.first_chunk_chars = first_chunk_chars
        self.heard_ok = heard_ok
        self.session_dir = session_dir
        self.actions = actions  # what the assistant can do (timers, sums...): asked before the model
        self._flight = threading.Lock()  # `current` and `speaking` change together under it
        self.current: Turn | None = None
        self.speaking: Turn | None = None
        self._first_spoken: Turn | None = None  # the turn whose first sentence was queued
        self.last_answered: Turn | None = None  # whose reply is the newest in the conversation
        # Tentative turns (llm thread): the set silence rule; the gate, events and sentences held
        self._words_known = words_known
        self._gate: SpeculativeStart | None = None
        self._held: list[Event] = []
        self._deferred: list[str] = []
        self._saved: tuple[object, ...] | None = None  # what the session files hold (`_contents`), if known

    def in_flight(self) -> tuple[Turn | None, Turn | None]:
        """Any thread: (the turn being generated, the turn whose voice is playing), read together."""
        with self._flight:
            return self.current, self.speaking

    def on_speaker(self, ev: SpeakerEvent) -> None:
        """A speaker thread: the voice's progress on the turn being spoken (what the listener
        heard of it, heard.py; when its first audio played)."""
        _, turn = self.in_flight()
        if turn is not None:
            turn.heard.on_speaker(ev)
            if ev.kind == "sentence_started":
                turn.stamps.setdefault("first_audio", ev.t)

    def run(self, turn: Turn) -> None:
        """llm thread: answer `turn` (blocks until the reply is generated; a withdrawn tentative
        turn leaves no trace)."""
        if turn.withdrawn:
            return
        with self._flight:
            self.current = turn
        self._gate = None
        if turn.pending is not None:
            self._gate = SpeculativeStart(
                turn, self._words_known, lambda: self._confirmed(turn), self._withdrawn
            )
        request = self.actions.pick(turn.text, turn.language) if self.actions and not turn.earlier else None
        joined = self._act(turn, request) if request is not None else self._answer(turn)
        with self._flight:
            self.current = None
        if turn.withdrawn or (self._gate is not None and not self._gate.confirmed):
            return
        message = None
        if joined and self.conversation.history and self.conversation.history[-1].role == "assistant":
            self.last_answered, message = turn, self.conversation.history[-1]
            if turn.earlier:  # answered again: the earlier answers are kept with it
                message.versions = [*turn.earlier, message.text]
                message.version = len(message.versions) - 1
        if turn.cancel.is_set() and message is not None:
            # Cut while it was being written (a barge-in): remembered as heard before it is
            # reported, so the report and the `heard` event agree, whatever the threads do.
            self.settle_heard(turn)
        self.save_session()
        reply = message.text if message is not None and turn.settled else turn.reply.strip()
        args = (turn, reply, message)
        threading.Thread(target=self._report, args=args, daemon=True, name="turn-report").start()

    def _answer(self, turn: Turn) -> bool:
        """The model answers: its reply streams to the screen and, sentence by sentence, to the
        voice. True: the exchange may have joined the conversation (the history says)."""
        if self._gate is None:
            self._begin_reply(turn)
        splitter = self._splitter()
        try:
            for piece in self.conversation.stream(turn.text, turn.cancel, self._gate, turn.language):
                turn.stamps.setdefault("first_token", time.perf_counter())
                turn.reply += piece
                self._show(Token(piece))
                for sentence in splitter.feed(piece):
                    self._speak(turn, sentence)
            if not turn.cancel.is_set() and not turn.withdrawn:
                for sentence in splitter.flush():
                    self._speak(turn, sentence)
        except Exception as exc:  # BrainError: a remote server failed; anything else is a bug
            log.log(logging.WARNING if isinstance(exc, BrainError) else logging.ERROR, "no reply: %s", exc)
            self._error(str(exc) if isinstance(exc, BrainError) else f"Generation failed: {exc}", "brain")
            if not turn.reply and not turn.withdrawn:  # nothing was said: the words go back, not lost
                self._emit(Unanswered(turn.text, "The assistant could not answer."))
        return True

    def _act(self, turn: Turn, request: Request) -> bool:
        """An action answers (actions/): a tentative turn is confirmed first, since an action
        changes things and cannot be taken back; then it is done, its answer shown and spoken,
        and the exchange joins the conversation (True) unless there is nothing to say."""
        assert self.actions is not None
        if self._gate is not None:
            self._gate.evaluated(self.actions.finished(request))  # a question matched whole: done
            if not self._gate.decide(must=True):
                return False
        else:
            self._begin_reply(turn)
        outcome = self.actions.do(request)
        turn.stamps.setdefault("first_token", time.perf_counter())
        turn.action, turn.reply = outcome.record(), outcome.reply
        self._emit(ActionTaken(outcome.intent, dict(outcome.said), outcome.reply, outcome.failed))
        if not outcome.reply:  # "never mind": nothing to say, nothing to remember
            return False
        self._emit(Token(outcome.reply))
        splitter = SentenceSplitter()  # whole sentences: the answer is known at once, no clause first
        for sentence in [*splitter.feed(outcome.reply), *splitter.flush()]:
            self._speak(turn, sentence)
        self.conversation.record_exchange(turn.text, outcome.reply, turn.language)
        return True

    def _splitter(self) -> SentenceSplitter:
        return SentenceSplitter(
            first_clause_chars=self.first_chunk_chars, first_words=self.speaker.first_chunk_words
        )

    # ----- a tentative turn: speculative first words (turn_gate.py) -------------------------------
    @property
    def _speculating(self) -> bool:
        return self._gate is not None and self._gate.undecided

    def _show(self, event: Event) -> None:
        """Emit, or keep until the tentative turn is confirmed (nothing shows before)."""
        if self._speculating:
            self._held.append(event)
        else:
            self._emit(event)

    def _confirmed(self, turn: Turn) -> None:
        """The end of speech confirmed the turn: show it, let its held words out."""
        self._begin_reply(turn)
        held, self._held = self._held, []
        for event in held:
            self._emit(event)
        if self._can_hold:
            self.speaker.release_held()
        deferred, self._deferred = self._deferred, []
        for sentence in deferred:
            self._speak(turn, sentence)

    def _withdrawn(self) -> None:
        """More speech withdrew the turn: its words are dropped unseen and unheard."""
        self._held, self._deferred = [], []
        if self._can_hold:
            self.speaker.discard_held()

    @property
    def _can_hold(self) -> bool:
        """The voice can hold synthesized words (the built-in Speaker; not a `-s` command, and
        not when an acknowledgement must be heard first)."""
        return self.speaker.can_hold and not self.heard_ok

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
        self._emit(Heard(heard, unspoken))

    def retry(self) -> None:
        """llm thread: answer the newest exchange again (Retry): it leaves the conversation
        exactly (`retracted` event: front ends take it off the screen), then its words are a
        new turn, drawn with another seed."""
        history = self.conversation.history
        last = history[-1] if history else None
        if last is not None and "action" in last.details:  # done, not said: no other answer
            self._emit(Notice("An action's answer cannot be retried: ask again in other words."))
            return
        language = history[-2].language if len(history) >= 2 else ""
        text = self.conversation.retract_last_turn()
        if text is None or last is None:
            self._emit(Notice("There is no finished reply to retry."))
            return
        self.last_answered = None
        self._emit(Retracted(text, continued=False, stats=self.conversation.context_stats()))
        earlier = last.versions or [last.text]
        self.run(Turn(text, time.perf_counter(), typed=True, earlier=earlier, language=language))

    def choose_version(self, index: int) -> None:
        """llm thread: after a Retry, answer `index` of the newest turn's answers becomes its
        reply in the conversation (the cache keeps what it shares with the one there and
        evaluates the rest); a `version` event says so. Nothing changes for an index it does
        not have, or when the newest message is not a reply with versions."""
        history = self.conversation.history
        last = history[-1] if history else None
        if last is None or last.role != "assistant" or not 0 <= index < len(last.versions):
            return
        if index != last.version or last.text != last.versions[index]:
            if not self.conversation.amend_last_reply(last.versions[index], interrupted=False):
                self._emit(Notice("That answer can no longer be chosen."))
                return
            last.version = index
            self.save_session()
        self._emit(VersionChosen(last.text, index, tuple(last.versions)))

    def take_back(self, turn: Turn) -> None:
        """llm thread: the user went on talking after `turn` ended (continuation.py): its
        exchange leaves the conversation exactly (no reseed: the longer words are a new turn)
        and the screen (`retracted` with `continued`). Nothing changes if another turn came
        after it."""
        if turn is not self.last_answered:
            return
        text = self.conversation.retract_last_turn(reseed=False)
        if text is None:
            return
        self.last_answered = None
        self.save_session(even_empty=True)  # the saved copy must not keep it either
        log.info("turn taken back, the user went on: %r", text)
        self._emit(Retracted(text, continued=True, stats=self.conversation.context_stats()))

    def open_session(self, directory: Path, save: bool = True) -> None:
        """llm thread: save this conversation (unless `save` is False: it is being deleted),
        then continue the one saved in `directory` (its llama state restored as saved when it
        matches, else its history re-read; an empty folder is a new conversation). A `switched`
        event carries its messages and the time it took."""
        t0 = time.perf_counter()
        if save:
            self.save_session()
        self.conversation.reset()
        self.session_dir = directory
        self.last_answered = None
        self._saved = None
        result = load_session(self.conversation, directory)
        if result.resumed:
            self.mark_saved()
        ms = (time.perf_counter() - t0) * 1000
        log.info("conversation %s opened in %.0f ms (resumed=%s)", directory.name, ms, result.resumed)
        self._emit(
            Switched(
                messages_of(self.conversation.history),
                ms=ms,
                resumed=result.resumed,
                replayed_turns=result.replayed_turns,
                message=result.message,
                stats=self.conversation.context_stats(),
            )
        )

    def save_session(self, even_empty: bool = False) -> None:
        """llm thread: write the session (when there is one, and something to keep unless
        `even_empty`); a failure is reported, not raised. A conversation unchanged since it was
        saved or resumed is not written again: its files, and their date (the sidebar's "last
        used"), stay as they are when one merely leaves it."""
        if not self.session_dir or not (self.conversation.history or even_empty):
            return
        contents = self._contents()
        if contents == self._saved:
            return
        try:
            save_session(self.conversation, self.session_dir)
            self._saved = contents
        except OSError as exc:
            self._error(f"Could not save the session: {exc}", "session")

    def mark_saved(self) -> None:
        """llm thread: the session files hold this conversation exactly (it was just resumed
        from them)."""
        self._saved = self._contents()

    def _contents(self) -> tuple[object, ...]:
        """What a save would write, as far as it can change: the folder, the history with its
        details, the context's fill and what the memory note holds."""
        stats = self.conversation.context_stats()
        history = repr([dataclasses.asdict(m) for m in self.conversation.history])
        kept = [f.key for f in self.conversation.remembered()]  # a Forget changes only this
        return (self.session_dir, history, stats.get("n_past"), stats.get("shifts"), kept)

    def _begin_reply(self, turn: Turn) -> None:
        """The turn is certain: show it and start answering."""
        with self._flight:
            self.speaking = turn
        self._emit(UserTurn(turn.text, turn.language))
        self._set_state(State.THINKING)
        if self.heard_ok and self.speaker.available:
            self.speaker.say(self.heard_ok)

    def _speak(self, turn: Turn, sentence: str) -> None:
        turn.stamps.setdefault("first_sentence", time.perf_counter())
        spoken = speakable(sentence)
        if (
            not spoken
            or not self.speaker.available
            or turn.cancel.is_set()
            or turn.withdrawn
            or turn.voice_off
        ):
            return
        held = self._speculating
        if held and not self._can_hold:
            self._deferred.append(sentence)
            return
        first, self._first_spoken = self._first_spoken is not turn, turn
        language = turn.language
        index = (
            self.speaker.say(spoken, held=True, language=language)
            if held
            else self.speaker.say(spoken, language=language)
        )
        turn.heard.queued(index, sentence, turn.reply)
        self._show(SentenceProgress("queued", index, sentence))
        if first and index > 0:
            # the first audio is what the user waits for: its synthesis gets the cores (the
            # next tokens are needed only once it has played, a second or more from now)
            self.speaker.wait_synthesized(index, FIRST_SYNTHESIS_WAIT_S)
        if held and self._gate is not None:
            self._gate.ready = True

    def _report(self, turn: Turn, reply: str, message: Message | None) -> None:
        """The `turn` event, once the turn's speech has started (or was cut/unavailable); the
        report is also kept with the reply's history message (saved with the session)."""
        turn.wait_first_audio(lambda: self.speaker.busy)
        stats = self.conversation.last_stats if turn.action is None else None
        report = turn.final_report(reply, message, stats, self.conversation.context_stats())
        self._emit(report)
        if stats is not None and stats.notice:
            self._emit(Notice(stats.notice))
        if self.speaking is turn and not self.speaker.busy and self.current is None:
            self._set_state(State.IDLE)
