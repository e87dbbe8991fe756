"""The llm thread: load the brain (and the saved conversation), then do what arrives on its
queue, in order: turns (answered by the Responder) and jobs between turns (remember what was
heard after a barge-in, Retry, a new conversation, open another saved conversation, report or
edit what the memory note holds).

Threads: `run` is the llm thread's body; `put` and the job methods may be called from any thread
and return at once. `brain` and `responder` are set by the llm thread once the model has loaded
(None before, and when it failed to load); other threads only read them.
"""

from __future__ import annotations

import dataclasses
import logging
import queue
from collections.abc import Callable
from pathlib import Path

from app.actions.skills import Actions
from app.brain.brain import Brain, change_persona, load_session, open_brain, save_session
from app.brain.memory import told_to_you
from app.brain.persona import Persona
from app.brain.session_files import PERSONA_CHANGED, read_history
from app.brain.shared_memory import SharedMemory
from app.loop.assistant_config import AssistantConfig
from app.loop.end_of_turn import EndOfTurn
from app.loop.events import (
    History,
    Loaded,
    MemoryFacts,
    Notice,
    Reset,
    State,
    Switched,
    Unanswered,
    messages_of,
)
from app.loop.ports import Report
from app.loop.responder import Responder
from app.loop.turn import Turn
from app.system import heap
from app.voice.sentence_queue import Voice

log = logging.getLogger(__name__)
Job = Turn | Callable[[], None] | None  # None ends the thread


class LlmWorker:
    def __init__(
        self,
        config: AssistantConfig,
        *,
        report: Report,
        end_of_turn: EndOfTurn,
        listening: Callable[[], bool],
        actions: Actions | None = None,
    ) -> None:
        """`actions`: what the assistant does before the model answers (None: only talk);
        `end_of_turn` hears when the brain has loaded and each tentative turn's words are
        evaluated (on the llm thread); `listening()`: whether push-to-talk is held (the state
        then stays LISTENING)."""
        self.config = config
        self._report = report
        self._emit = report.emit
        self._end_of_turn = end_of_turn
        self._listening = listening
        self.actions = actions
        self.queue: queue.Queue[Job] = queue.Queue()
        self.brain: Brain | None = None
        self.responder: Responder | None = None

    def put(self, job: Job) -> None:
        """Any thread: a turn to answer, or a job to run between turns (None ends the thread)."""
        self.queue.put(job)

    # ----- jobs (any thread) -------------------------------------------------------------------
    def new_conversation(self) -> None:
        self.put(self._reset)

    def open_conversation(self, directory: Path, save: bool = True) -> None:
        self.put(lambda: self._open(directory, save))

    def retry(self) -> None:
        self.put(lambda: self.responder.retry() if self.responder else None)

    def choose_version(self, index: int) -> None:
        self.put(lambda: self.responder.choose_version(index) if self.responder else None)

    def stop(self) -> None:
        self.put(None)

    def close(self) -> None:
        """After the thread has ended: free the brain's model and context now."""
        if self.brain is not None:
            self.brain.close()

    def report_memory(self) -> None:
        """A `memory` event with the facts the note holds follows (between turns)."""
        self.put(self._report_memory)

    def forget(self, key: str) -> None:
        """Fact `key` leaves the memory note (and the saved conversation); a `memory` event follows."""
        self.put(lambda: self._forget(key))

    def share_memory(self, path: Path | None) -> None:
        """From now on the brain also reads and adds to the facts kept across conversations in
        `path` (None: each conversation's own); a `memory` event follows."""
        self.put(lambda: self._share_memory(path))

    def change_persona(self, persona: Persona) -> None:
        """From the next turn on the assistant is `persona`; the model stays loaded."""
        self.put(lambda: self._change_persona(persona))

    def use_speaker(self, speaker: Voice) -> None:
        """The llm thread: replies from now on go to `speaker` (Assistant.change_voice)."""
        if self.responder is not None:
            self.responder.speaker = speaker

    # ----- the llm thread ----------------------------------------------------------------------
    def _report_memory(self) -> None:
        facts = self.brain.remembered() if self.brain is not None else []
        self._emit(MemoryFacts(tuple((f.key, told_to_you(f)) for f in facts)))

    def _share_memory(self, path: Path | None) -> None:
        self.config = dataclasses.replace(self.config, shared_memory=path)  # also for a later load
        if self.brain is not None:
            self.brain.share_memory(SharedMemory(path) if path is not None else None)
        self._report_memory()

    def _forget(self, key: str) -> None:
        if self.brain is not None:
            self.brain.forget(key)
            if self.responder is not None:
                self.responder.save_session()
        self._report_memory()

    def run(self, speaker: Voice) -> None:
        """The thread's body: load, then work until `stop()`. `speaker`: a Speaker or
        ExternalSpeaker, already made."""
        self._load(speaker)
        self._report.set_state(State.IDLE)
        while (item := self.queue.get()) is not None:
            if callable(item):
                item()
                continue
            if self.responder is None:
                if item.pending is None or item.pending.wait():  # a tentative turn: once certain
                    self._unanswered(item)
                continue
            self.responder.run(item)
            heap.trim()  # what the turn freed goes back to the system (system/heap.py)
        if self.responder is not None:
            self.responder.save_session()  # the last turn's details arrived after its save

    def _load(self, speaker: Voice) -> None:
        c = self.config
        try:
            brain = open_brain(c.llm, c.remote, c.persona)
            self.brain = brain
            if problem := getattr(brain, "words_problem", ""):  # a server brain's words reader
                self._emit(Notice(problem))
            if c.session_dir:
                res = load_session(brain, c.session_dir)
                if res.message:
                    self._emit(Notice(res.message))
                if brain.history:
                    self._emit(History(messages_of(brain.history)))
            if c.shared_memory is not None:
                brain.share_memory(SharedMemory(c.shared_memory))
            self.responder = Responder(
                brain,
                speaker,
                report=self._report,
                words_known=self._end_of_turn.words_known,
                first_chunk_chars=c.first_chunk_chars,
                heard_ok=c.heard_ok,
                session_dir=c.session_dir,
                actions=self.actions,
            )
            if c.session_dir and res.resumed:
                self.responder.mark_saved()
            self._end_of_turn.brain_loaded(brain)
            log.info("language model ready (%s)", c.remote.url if c.remote else Path(c.llm.model_path).name)
            self._emit(Loaded("llm", stats=brain.context_stats()))
        except Exception as exc:
            self._report.error(f"Language model unavailable: {exc}", "llm")

    def _unanswered(self, turn: Turn) -> None:
        """No language model: the words are handed back (front ends keep them), not dropped."""
        self._emit(Unanswered(turn.text, "No language model is loaded, so this was not answered."))
        if not self._listening():
            self._report.set_state(State.IDLE)

    def _reset(self) -> None:
        if self.brain is not None:
            self.brain.reset()
            if self.config.session_dir:
                save_session(self.brain, self.config.session_dir)
            self._emit(Reset(self.brain.context_stats()))

    def _change_persona(self, persona: Persona) -> None:
        self.config = dataclasses.replace(self.config, persona=persona)  # also for a later load
        if self.brain is not None:
            change_persona(self.brain, persona)
            if self.config.session_dir:
                save_session(self.brain, self.config.session_dir)
            self._emit(Notice(PERSONA_CHANGED))

    def _open(self, directory: Path, save: bool) -> None:
        self.config.session_dir = directory  # also where a model loaded later would resume
        if self.responder is not None:
            self.responder.open_session(directory, save)
        else:  # no model: the saved words are still shown
            self._emit(Switched(tuple(read_history(directory))))
