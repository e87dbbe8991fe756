"""The assistant loop: ears (Microphone, Segmenter, Transcriber), brain (Conversation), voice
(Speaker), wired as talk-llama's main loop, one stage per thread.

    press()/VAD ─▶ Microphone ─▶ [stt thread] Transcriber ─▶ [llm thread] Conversation.stream
                                                             └─ sentences ─▶ Speaker (own threads)

Ownership: the stt thread alone uses whisper; the llm thread alone uses llama; the Speaker owns
playback; PortAudio's callback thread feeds the hands-free Segmenter. Hand-offs are queues.
Nothing busy-waits. Every public method returns at once (safe from a GUI thread).

Barge-in: `press()` (or, hands-free, sustained user speech over the echo) sets the current turn's
cancel flag (generation stops within one token) and stops the Speaker (sound ends in a few ms).
The interrupted reply is kept in the context, closed with the end-of-turn token (llm.py).

Hands-free, whisper starts at a short pause (early_stt.py); when the utterance ends there, that
result is the transcript, so the end-of-speech wait hides whisper's time. Its text also starts a
tentative turn at once (turn.py): the llm thread evaluates the prompt, then waits; the end of
speech confirms it, more speech (or barge-in, shutdown) withdraws it and the conversation takes
it back. Nothing of a tentative turn is shown or spoken before it is confirmed.

Events go to `on_event(Event)` from the worker threads; adapters (terminal, Qt) marshal them.
Each turn ends with a `turn` event carrying its latency stamps (ms after the end of speech).
"""

from __future__ import annotations

import enum
import logging
import queue
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from app.core import session
from app.core.audio import Level, Microphone, MicrophoneError
from app.core.early_stt import EarlyTranscription
from app.core.echo import EchoGuard
from app.core.llm import Conversation, LlmConfig
from app.core.persona import Persona
from app.core.speaker import Speaker, SpeakerConfig, SpeakerEvent
from app.core.stt import SttConfig, Transcriber, Transcript
from app.core.text import SentenceSplitter, speakable
from app.core.turn import Decision, Turn
from app.core.vad import RATE, Segmenter, SegmentEvent, VadConfig
from app.core.wake import strip_wake_command

log = logging.getLogger(__name__)


class State(enum.Enum):
    LOADING = "loading"
    IDLE = "idle"
    LISTENING = "listening"
    TRANSCRIBING = "transcribing"
    THINKING = "thinking"
    SPEAKING = "speaking"


@dataclass
class Event:
    """kind: state | level | loading | transcript | token | sentence | turn | error | notice."""

    kind: str
    data: dict[str, Any] = field(default_factory=dict)


@dataclass
class AssistantConfig:
    llm: LlmConfig
    stt: SttConfig
    persona: Persona = field(default_factory=Persona)
    vad: VadConfig = field(default_factory=VadConfig)
    speaker: SpeakerConfig = field(default_factory=SpeakerConfig)
    input_device: int | str | None = None
    hands_free: bool = False
    wake_command: str = ""
    heard_ok: str = ""
    speak_command: str | None = None
    speak_file: Path = Path("/tmp/talk-llama-speak.txt")
    session_dir: Path | None = None
    use_microphone: bool = True
    # The first spoken chunk may end at a clause break once it is this long ("Sure," "I'm
    # sorry,"): speech starts several tokens sooner; later chunks are whole sentences.
    first_chunk_chars: int = 5


class Assistant:
    """See the module docstring. Create, `start()`, drive with press/release/send_text, `shutdown()`."""

    def __init__(self, config: AssistantConfig, on_event: Callable[[Event], None]) -> None:
        self.config = config
        self._on_event = on_event
        self.state = State.LOADING
        self.conversation: Conversation | None = None
        self.transcriber: Transcriber | None = None
        self.speaker: Any = None
        self.mic: Microphone | None = None
        self.echo = EchoGuard()
        self.segmenter = Segmenter(config.vad, on_event=self._on_segment)
        # (audio, t_speech_end, speech_end_sample, final?): non-final items are speculative
        self._stt_q: queue.Queue[tuple[np.ndarray, float, int, bool] | None] = queue.Queue()
        self._llm_q: queue.Queue[Turn | Callable[[], None] | None] = queue.Queue()
        self.last_utterance = np.zeros(0, np.float32)  # the last audio sent to whisper (diagnostics)
        self._turn: Turn | None = None
        self._speaking_turn: Turn | None = None
        self._listening = False
        self._early: EarlyTranscription | None = None  # set by the stt thread once whisper loads
        self._tentative: tuple[Transcript, Turn] | None = None  # started at a pause (stt thread)
        self.speculation = {"confirmed": 0, "withdrawn": 0}  # tentative turns (diagnostics)
        self._closed = False
        self._threads: list[threading.Thread] = []

    # ----- lifecycle -------------------------------------------------------------------------
    def start(self) -> None:
        """Load everything in the background; progress and problems arrive as events."""
        self._set_state(State.LOADING)
        self._start_speaker()
        self._start_microphone()
        for name, target in (("assistant-stt", self._stt_loop), ("assistant-llm", self._llm_loop)):
            t = threading.Thread(target=target, name=name, daemon=True)
            t.start()
            self._threads.append(t)

    def _start_speaker(self) -> None:
        c = self.config
        if c.speak_command:
            from app.core.external_speaker import ExternalSpeaker

            self.speaker = ExternalSpeaker(c.speak_command, c.speak_file, on_event=self._on_speaker)
        else:
            self.speaker = Speaker(c.speaker, on_event=self._on_speaker)
            self.speaker.on_output = self.echo.note_output
        if not self.speaker.available:
            self._error(
                f"No voice output: {self.speaker.problem}. Replies will be shown as text only.", "tts"
            )

    def _start_microphone(self) -> None:
        if not self.config.use_microphone:
            return
        self.mic = Microphone(
            self.config.input_device,
            ring_s=self.config.vad.max_utterance_s + 10,
            preroll_s=self.config.vad.preroll_ms / 1000,
            on_block=self._on_mic_block,
            on_level=self._on_level,
            on_error=lambda m: self._error(m, "microphone"),
        )
        try:
            self.mic.open()
        except MicrophoneError as exc:
            self.mic = None
            self._error(str(exc), "microphone")

    def shutdown(self, timeout: float = 2.0) -> None:
        """Stop speaking and generating, save the session, close devices. Blocks <= timeout."""
        if self._closed:
            return
        self._closed = True
        self.interrupt()
        if self.mic is not None:
            self.mic.close()
        self._stt_q.put(None)
        self._llm_q.put(None)
        deadline = time.monotonic() + timeout
        for t in self._threads:
            t.join(max(0.05, deadline - time.monotonic()))
        if self.speaker is not None:
            self.speaker.close()

    # ----- input -----------------------------------------------------------------------------
    def press(self) -> None:
        """Push-to-talk down: barge in if needed, start listening (with pre-roll)."""
        self.interrupt()
        if self.mic is None:
            self._error("No microphone is open; type your message instead.", "microphone")
            return
        self._listening = True
        self.mic.start_utterance()
        self._set_state(State.LISTENING)

    def release(self) -> None:
        """Push-to-talk up: hand the utterance to the transcriber."""
        if not self._listening or self.mic is None:
            return
        self._listening = False
        audio = self.mic.stop_utterance()
        self._set_state(State.TRANSCRIBING)
        self._stt_q.put((audio, time.perf_counter(), -1, True))

    def send_text(self, text: str) -> None:
        """A typed message: goes straight to the conversation."""
        text = text.strip()
        if text:
            self.interrupt()
            self._llm_q.put(Turn(text, time.perf_counter()))

    def interrupt(self) -> None:
        """Barge-in: stop the voice now and the generation within one token."""
        self._withdraw_tentative()
        for turn in (self._turn, self._speaking_turn):
            if turn is not None:
                self._withdraw(turn)
                turn.cancel.set()
        if self.speaker is not None and self.speaker.busy:
            self.speaker.stop()
            self.echo.playback_stopped()

    def new_conversation(self) -> None:
        self.interrupt()
        self._llm_q.put(self._reset_conversation)

    # ----- callbacks from audio threads -------------------------------------------------------
    def _on_level(self, level: Level) -> None:
        self.emit(Event("level", {"rms": level.rms, "peak": level.peak}))

    def _on_mic_block(self, block: np.ndarray) -> None:
        cap = self.config.vad.max_utterance_s
        if self._listening and self.mic is not None and self.mic.utterance_s >= cap:
            # Push-to-talk held past the cap: transcribe what we have rather than lose its head.
            self.emit(Event("notice", {"message": "long utterance: sent at the configured limit"}))
            self.release()
            return
        if not self.config.hands_free or self._listening or self.state == State.LOADING:
            return
        passed, barge = self.echo.mic_block(block)
        if barge and self.state in (State.THINKING, State.SPEAKING):
            log.info("barge-in: the user is talking over the assistant")
            self.interrupt()
            self.emit(Event("notice", {"message": "barge-in"}))
        if passed or barge:
            self.segmenter.feed(block)
        else:
            self.segmenter.reset()

    def _on_segment(self, ev: SegmentEvent) -> None:
        if ev.kind == "speech_started":
            self._set_state(State.LISTENING)
            return
        if ev.kind == "resumed":  # talking again after a pause: its early transcript is stale
            if self._early is not None:
                self._early.resumed()
            self._withdraw_tentative()
            return
        ago = (self.segmenter.position - ev.end_sample) / RATE
        final = ev.kind != "pause"
        if final:
            self._set_state(State.TRANSCRIBING)
        self._stt_q.put((ev.audio, time.perf_counter() - ago, ev.end_sample, final))
        if ev.kind == "capped":
            self.emit(Event("notice", {"message": "long utterance cut at the configured limit"}))

    def _on_speaker(self, ev: SpeakerEvent) -> None:
        turn = self._speaking_turn
        if ev.kind == "sentence_started":
            if turn is not None and "first_audio" not in turn.stamps:
                turn.stamps["first_audio"] = ev.t
            self._set_state(State.SPEAKING)
        elif ev.kind == "queue_empty":
            self.echo.playback_stopped()
            if self._turn is None and not self._listening:
                self._set_state(State.IDLE)
        elif ev.kind == "error":
            self._error(ev.message, "tts")
        self.emit(Event("sentence", {"event": ev.kind, "index": ev.index, "text": ev.text}))

    # ----- workers -----------------------------------------------------------------------------
    def _stt_loop(self) -> None:
        try:
            self.transcriber = Transcriber(self.config.stt, self.config.vad)
            self.emit(Event("loading", {"part": "whisper", "done": True}))
        except Exception as exc:  # missing/corrupt model, library failure: keep typing usable
            self._error(f"Speech recognition unavailable: {exc}", "whisper")
        early = EarlyTranscription(self.transcriber, self._aborting) if self.transcriber else None
        self._early = early
        while (item := self._stt_q.get()) is not None:
            audio, t_end, end_sample, final = item
            if early is None:
                self._set_state(State.IDLE)
                continue
            if not final:  # a pause: transcribe now, in case it turns out to be the end
                # (skipped if newer audio is already waiting)
                if self._stt_q.empty() and (result := early.at_pause(audio, end_sample)) is not None:
                    self._speculate(early, result, t_end)
                continue
            self.last_utterance = audio
            result = early.final(audio, end_sample)
            self.emit(
                Event(
                    "transcript",
                    {
                        "text": result.text,
                        "rejected": result.rejected,
                        "reason": result.reason,
                        "prob": result.prob,
                    },
                )
            )
            tentative, self._tentative = self._tentative, None
            if tentative is not None:
                if tentative[0] is result and tentative[1].confirm():
                    self.speculation["confirmed"] += 1
                    continue  # the llm thread has its prompt evaluated already
                self._withdraw(tentative[1])
            text = self._turn_text(result)
            if not text:
                if not result.rejected:
                    self.emit(Event("notice", {"message": "wake command not heard; ignored"}))
                if self._turn is None:
                    self._set_state(State.IDLE)
                continue
            self._llm_q.put(Turn(text, t_end, time.perf_counter(), result.transcribe_s * 1000))

    def _turn_text(self, result: Transcript) -> str:
        """What a transcript says to the assistant: "" if rejected or the wake command is missing."""
        if result.rejected:
            return ""
        if self.config.wake_command:
            return strip_wake_command(result.text, self.config.wake_command)
        return result.text

    def _speculate(self, early: EarlyTranscription, result: Transcript, t_end: float) -> None:
        """stt thread, after a pause's transcript: start its turn tentatively (module docstring)."""
        if not (text := self._turn_text(result)):
            return
        self._withdraw_tentative()
        turn = Turn(text, t_end, time.perf_counter(), result.transcribe_s * 1000, pending=Decision())
        self._tentative = (result, turn)
        if not early.is_current(result):  # speech resumed before the tentative was visible
            self._withdraw(turn)
        self._llm_q.put(turn)

    def _withdraw_tentative(self) -> None:
        """Any thread: more speech, barge-in or shutdown ends the tentative turn, if any."""
        if (tentative := self._tentative) is not None:
            self._withdraw(tentative[1])

    def _withdraw(self, turn: Turn) -> None:
        if turn.pending is not None and turn.pending.value is None:
            turn.withdraw()
            self.speculation["withdrawn"] += 1

    def _llm_loop(self) -> None:
        try:
            self.conversation = Conversation(self.config.llm, self.config.persona)
            if self.config.session_dir:
                res = session.load(self.conversation, self.config.session_dir)
                if res.message:
                    self.emit(Event("notice", {"message": res.message}))
                if self.conversation.history:
                    self.emit(Event("history", {"messages": list(self.conversation.history)}))
            self.emit(Event("loading", {"part": "llm", "done": True, "stats": self._ctx_stats()}))
        except Exception as exc:
            self._error(f"Language model unavailable: {exc}", "llm")
        self._set_state(State.IDLE)
        while (item := self._llm_q.get()) is not None:
            if callable(item):
                item()
                continue
            if self.conversation is None:
                self._error("No language model is loaded; choose a model in Settings.", "llm")
                continue
            self._run_turn(item)

    def _run_turn(self, turn: Turn) -> None:
        assert self.conversation is not None
        if turn.withdrawn:
            return
        self._turn = turn
        if turn.pending is None:
            self._begin_reply(turn)
        proceed = None if turn.pending is None else (lambda: self._await_confirmation(turn))
        splitter = SentenceSplitter(first_clause_chars=self.config.first_chunk_chars)
        pieces: list[str] = []
        try:
            for piece in self.conversation.stream(turn.text, turn.cancel, proceed):
                turn.stamps.setdefault("first_token", time.perf_counter())
                pieces.append(piece)
                self.emit(Event("token", {"text": piece}))
                for sentence in splitter.feed(piece):
                    self._speak(turn, sentence)
            if not turn.cancel.is_set():
                for sentence in splitter.flush():
                    self._speak(turn, sentence)
        except Exception as exc:
            log.exception("generation failed")
            self._error(f"Generation failed: {exc}", "llm")
        self._turn = None
        if turn.withdrawn:
            return
        if self.config.session_dir and self.conversation.history:
            try:
                session.save(self.conversation, self.config.session_dir)
            except OSError as exc:
                self._error(f"Could not save the session: {exc}", "session")
        threading.Thread(
            target=self._finish_turn,
            args=(turn, "".join(pieces).strip()),
            daemon=True,
            name="assistant-turn-report",
        ).start()

    def _begin_reply(self, turn: Turn) -> None:
        """llm thread: the turn is certain; show it and start answering."""
        self._speaking_turn = turn
        self.emit(Event("user", {"text": turn.text}))
        self._set_state(State.THINKING)
        if self.config.heard_ok and self.speaker.available:
            self.speaker.say(self.config.heard_ok)

    def _await_confirmation(self, turn: Turn) -> bool:
        """llm thread, a tentative turn's prompt evaluated: wait for the end of speech (blocks)."""
        assert turn.pending is not None
        if not turn.pending.wait() or turn.cancel.is_set():
            return False
        self._begin_reply(turn)
        return True

    def _speak(self, turn: Turn, sentence: str) -> None:
        turn.stamps.setdefault("first_sentence", time.perf_counter())
        spoken = speakable(sentence)
        if spoken and self.speaker.available and not turn.cancel.is_set():
            index = self.speaker.say(spoken)
            self.emit(Event("sentence", {"event": "queued", "index": index, "text": sentence}))

    def _finish_turn(self, turn: Turn, reply: str) -> None:
        """Report the turn once its speech has started (or was cut/unavailable)."""
        deadline = time.monotonic() + 30
        while (
            "first_audio" not in turn.stamps
            and self.speaker.busy
            and not turn.cancel.is_set()
            and time.monotonic() < deadline
        ):
            time.sleep(0.01)
        stats = self.conversation.last_stats if self.conversation else None
        data = turn.report(reply, stats, self._ctx_stats())
        self.emit(Event("turn", data))
        if self._speaking_turn is turn and not (self.speaker and self.speaker.busy) and self._turn is None:
            self._set_state(State.IDLE)

    def _ctx_stats(self) -> dict[str, int]:
        c = self.conversation
        if c is None:
            return {}
        return {
            "n_past": c.n_past,
            "n_ctx": c.n_ctx,
            "n_keep": c.ledger.n_keep,
            "shifts": c.shifts,
            "discarded": c.discarded,
        }

    def _reset_conversation(self) -> None:
        if self.conversation is not None:
            self.conversation.reset()
            if self.config.session_dir:
                session.save(self.conversation, self.config.session_dir)
            self.emit(Event("reset", self._ctx_stats()))

    # ----- helpers -----------------------------------------------------------------------------
    def emit(self, event: Event) -> None:
        """Deliver an event; a failing handler (e.g. a window being destroyed) never takes a
        worker or audio thread down with it."""
        try:
            self._on_event(event)
        except Exception:
            log.exception("event handler failed for %s", event.kind)

    def _aborting(self) -> bool:
        """Polled by whisper.cpp: stop transcribing when the assistant shuts down."""
        return self._closed

    def _set_state(self, state: State) -> None:
        if state != self.state:
            self.state = state
            self.emit(Event("state", {"state": state}))

    def _error(self, message: str, source: str) -> None:
        log.warning("%s: %s", source, message)
        self.emit(Event("error", {"message": message, "source": source}))
