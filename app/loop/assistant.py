"""The assistant loop: ears (Microphone, Segmenter, Transcriber), brain (Conversation), voice
(Speaker), wired as talk-llama's main loop, one stage per thread.

    press()/VAD ─▶ Microphone ─▶ [stt thread] Transcriber ─▶ [llm thread] Responder: Conversation.stream
                                                              └─ sentences ─▶ Speaker (own threads)

Ownership: the stt thread alone uses whisper; the llm thread alone uses llama; the Speaker owns
playback; PortAudio's callback thread feeds the hands-free Segmenter. Hand-offs are queues.
Workers block on queues and events (only the turn report polls, every 10 ms, on its own
short-lived thread). Every public method returns at once (safe from a GUI thread).

Barge-in (`press()`, hands-free speech over the voice, a typed message) is barge_in.py.

A turn starts at a short pause, held until the end of speech confirms it (hearing.py,
tentative_turns.py; continuation.py; utterances.py). Events go to `on_event(Event)` from the
worker threads, whose OS names are theirs (top -H); adapters (terminal, Qt) marshal them. Each
turn ends with a `turn` event carrying its latency stamps (ms after the end of speech).
"""

from __future__ import annotations

import dataclasses
import functools
import logging
import threading
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

from app.brain.brain import Brain
from app.brain.persona import Persona
from app.ears import vad
from app.ears.echo import EchoGuard
from app.ears.microphone import Level, Microphone
from app.ears.vad import Segmenter
from app.loop import events
from app.loop.action_control import ActionControl
from app.loop.assistant_config import AssistantConfig
from app.loop.barge_in import BargeIn
from app.loop.continuation import Continuation
from app.loop.devices import DeviceFaults
from app.loop.end_of_turn import EndOfTurn
from app.loop.events import Event, State
from app.loop.hearing import Hearing
from app.loop.llm_worker import LlmWorker
from app.loop.mic_control import MicControl
from app.loop.ports import Report, Utterance
from app.loop.responder import Responder
from app.loop.sound_scorer import SoundScorer
from app.loop.tentative_turns import TentativeTurns
from app.loop.turn import Turn
from app.loop.utterances import AssistantView, Utterances
from app.loop.voice_control import VoiceControl
from app.system.thread_names import named_thread
from app.voice.sentence_queue import Voice
from app.voice.speaker import SpeakerConfig, SpeakerEvent

log = logging.getLogger(__name__)


class Assistant:
    """See the module docstring. Create, `start()`, drive with press/release/send_text, `shutdown()`."""

    def __init__(self, config: AssistantConfig, on_event: Callable[[Event], None]) -> None:
        """The whole pipeline, built in the order data flows; nothing runs until `start()`."""
        self.config = config
        self._on_event = on_event
        self.state = State.LOADING
        self._state_lock = threading.Lock()
        self._listening = False  # push-to-talk is held
        self._closed = False
        self._life = threading.Lock()  # start() and shutdown() exclude each other
        self._threads: list[threading.Thread] = []
        report = Report(self.emit, self._set_state, self._error)
        listening = lambda: self._listening  # noqa: E731  (every stage that asks reads this flag)

        # The voice (its own threads), and the echo guard that knows what it plays.
        self.echo = EchoGuard()
        self.voice = VoiceControl(self.echo, self._on_speaker, self._on_output_level, self._error)
        # The end of a turn: the segmenter's silence, set per turn from its words and its sound.
        self.segmenter = Segmenter(config.vad, config.turn_end.base_ms(config.vad.end_silence_ms))
        self.sound = SoundScorer(config.turn_model, self._error)
        self.end_of_turn = EndOfTurn(lambda: self.config, self.segmenter, self.sound, listening)
        # The brain: the llm thread answers turns and runs jobs between them.
        # What it does rather than says (timers, the time, sums, lists): asked before the model.
        self.doing = ActionControl(config, self.emit, self.voice)
        self.llm = LlmWorker(
            config,
            report=report,
            end_of_turn=self.end_of_turn,
            listening=listening,
            actions=self.doing.actions,
        )
        self.tentative = TentativeTurns(self.llm.put)  # turns started at a pause
        self.continuation = Continuation(config.turn_end.continue_ms)  # turns ended at a pause
        self.barge_in = BargeIn(
            voice=self.voice,
            tentative=self.tentative,
            llm=self.llm,
            state=lambda: self.state,
            set_state=self._set_state,
            listening=listening,
        )
        # The ears: the stt thread turns utterances into turns for the llm thread.
        self.hearing = Hearing(
            config.stt,
            config.vad,
            report=report,
            wake_command=config.wake_command,
            tentative=self.tentative,
            continuation=self.continuation,
            sound=self.sound,
            end_of_turn=self.end_of_turn,
            submit=self.llm.put,
            speech_model_loaded=self.segmenter.hear_with,
            answering=self._answering,
            aborting=self._aborting,
            hands_free=lambda: self.config.hands_free,
            brain_reads_words=lambda: self.llm.brain is not None and self.llm.brain.reads_end_of_turn,
        )
        # Microphone blocks (PortAudio's thread) become utterances for the stt thread.
        view = AssistantView(
            config=lambda: self.config,
            state=lambda: self.state,
            listening=listening,
            voice_busy=lambda: self.voice.busy,
            responder=lambda: self.llm.responder,
            interrupt=self.barge_in.interrupt,
            take_back=self.llm.put,
            resumed=self.hearing.resumed,
            speaking=self.hearing.speaking,
            emit=self.emit,
            set_state=self._set_state,
        )
        self.utterances = Utterances(view, self.segmenter, self.echo, self.continuation, self.hearing.put)
        self.mics = MicControl(config, self._on_mic_block, self._on_level, self._on_mic_error, self._error)
        self.devices = DeviceFaults(lambda: self.mics.mic, self.barge_in.voice_lost, self.emit)

    # ----- lifecycle -------------------------------------------------------------------------
    def start(self) -> None:
        """Load everything in the background; progress and problems arrive as events. Does
        nothing after `shutdown()` (a window closed while the assistant was starting)."""
        with self._life:
            if self._closed:
                return
            self._set_state(State.LOADING)
            vad.prepare()  # the filter library's import (~0.9 s) here, not on the caller's thread
            self._open_voice()
            self.mics.open()
            self.devices.start()
            self.doing.start()
            llm_run = functools.partial(self.llm.run, self.voice.opened)
            for name, target in (("assistant-stt", self.hearing.run), ("assistant-llm", llm_run)):
                t = named_thread(target, name)
                t.start()
                self._threads.append(t)

    def _open_voice(self) -> Voice | None:
        """The configured voice; returns the one it replaces (None at start)."""
        return self.voice.open(self.config.speaker, self.config.speak_command, self.config.speak_file)

    def change_voice(self, speaker: SpeakerConfig) -> None:
        """Speak with `speaker` from the next reply on; the models stay loaded. Returns at once:
        the reply being spoken stops, and the llm thread (idle between turns) opens the new
        voice (a natural voice loads in ~0.5 s) and closes the old one."""
        self.config = dataclasses.replace(self.config, speaker=speaker)
        self.interrupt()
        self.llm.put(self._swap_speaker)

    def _swap_speaker(self) -> None:
        """llm thread, between turns: the configured speaker replaces the current one."""
        with self._life:
            if self._closed:
                return
            old = self._open_voice()
        self.llm.use_speaker(self.voice.opened)
        if old is not None:
            old.close()

    def shutdown(self, timeout: float = 2.0, free_models: bool = False) -> None:
        """Stop speaking and generating, save the session, close devices; `free_models`: close the
        models now (a reload must not hold two of each until a garbage collection). Blocks <= timeout."""
        with self._life:  # waits for a start() in progress (it opens devices)
            if self._closed:
                return
            self._closed = True
        self.interrupt()
        self.devices.close()
        self.mics.close()
        self.hearing.put(None)
        self.llm.stop()
        deadline = time.monotonic() + timeout
        for t in self._threads:
            t.join(max(0.05, deadline - time.monotonic()))
        self.voice.close()
        self.doing.close()
        if free_models and not any(t.is_alive() for t in self._threads):  # else the GC frees them
            self.llm.close()
            self.hearing.close()

    # ----- input -----------------------------------------------------------------------------
    def press(self) -> None:
        """Push-to-talk down: barge in if needed, start listening (with pre-roll)."""
        self._new_input()
        if self.mic is None:
            self._error("No microphone is open; type your message instead.", "microphone")
            return
        self.hearing.resumed()  # an earlier pause's transcript is no one's now
        self.segmenter.reset()
        self.segmenter.hold_open = True  # pauses start whisper early; only the release ends it
        self._listening = True
        self.mic.start_utterance()
        self._set_state(State.LISTENING)

    def release(self) -> None:
        """Push-to-talk up: hand the utterance to the transcriber."""
        if not self._listening or self.mic is None:
            return
        self._listening = False
        audio = self.mic.stop_utterance()
        paused_at = self.segmenter.paused_at  # silent since a pause: its transcript is the turn's
        self.segmenter.hold_open = False
        self.segmenter.reset()
        self.mics.apply_period(self._listening)
        self._set_state(State.TRANSCRIBING)
        self.hearing.put(Utterance(audio, time.perf_counter(), paused_at, True))

    def send_text(self, text: str) -> None:
        """A typed message: goes straight to the conversation."""
        text = text.strip()
        if text:
            self._new_input()
            self.llm.put(Turn(text, time.perf_counter(), typed=True))

    def interrupt(self) -> None:
        """Barge-in (barge_in.py): stop the voice now and the generation within one token; the
        reply is then remembered as far as it was heard."""
        self.barge_in.interrupt()

    def _new_input(self) -> None:
        """The user did something else than talk on (typed, pressed the key, switched): any
        reply stops, and the next speech is a turn of its own."""
        self.continuation.forget()
        self.interrupt()

    def new_conversation(self) -> None:
        """Forget this conversation (its session is overwritten) and start afresh."""
        self._new_input()
        self.llm.new_conversation()

    def open_conversation(self, directory: Path, save: bool = True) -> None:
        """Save the current conversation (unless `save` is False) and continue the one saved in
        `directory` (any reply in progress stops first). A `switched` event follows with its
        messages; after it the llm thread no longer writes to the previous folder."""
        self._new_input()
        self.llm.open_conversation(directory, save)

    def retry(self) -> None:
        """Answer the last turn again (any reply in progress stops first; see Responder.retry)."""
        self._new_input()
        self.llm.retry()

    def choose_version(self, index: int) -> None:
        """After a Retry: make answer `index` of the newest turn the one the conversation goes
        on from (Responder.choose_version; any reply in progress stops first)."""
        self._new_input()
        self.llm.choose_version(index)

    def report_memory(self) -> None:
        """What the memory note holds comes as a `memory` event (returns at once)."""
        self.llm.report_memory()

    def forget(self, key: str) -> None:
        """Fact `key` leaves the memory note; an updated `memory` event follows (returns at once)."""
        self.llm.forget(key)

    def share_memory(self, path: Path | None) -> None:
        """Facts kept across conversations in `path` from now on (None: each its own); returns at once."""
        self.llm.share_memory(path)

    def change_persona(self, persona: Persona) -> None:
        """Answer as `persona` from the next turn on; the models stay loaded (the llm thread
        evaluates the new system prompt between turns), and whisper's prompt names the new
        assistant when it named the old one. Returns at once."""
        stt = self.config.stt.renamed(self.config.persona.bot, persona.bot)
        self.config = dataclasses.replace(self.config, persona=persona, stt=stt)
        self.hearing.change_stt(stt)
        self.llm.change_persona(persona)

    def set_hands_free(self, on: bool) -> None:
        """Hands-free (voice activity starts turns) or push-to-talk from now on; models, voice
        and devices stay. An utterance being heard hands-free is dropped. Front end's thread;
        may reopen the microphone (~50 ms)."""
        if on == self.config.hands_free:
            return
        self.config = self.mics.config = dataclasses.replace(self.config, hands_free=on)
        if not self._listening:
            self.segmenter.reset()
            self.tentative.withdraw()
        self.mics.apply_period(self._listening)

    def set_muted(self, muted: bool) -> None:
        """Mute the microphone: silence until unmuted, kept across a reopen (mic_control.py)."""
        self.mics.set_muted(muted)

    def set_level_updates(self, enabled: bool) -> None:
        """Whether `level` events are wanted (call from one thread; may reopen the mic, ~50 ms)."""
        self.mics.set_level_updates(enabled, self._listening)

    # ----- callbacks from audio threads -------------------------------------------------------
    def _on_level(self, level: Level) -> None:
        self.emit(events.Level(level.rms, level.peak))

    def _on_output_level(self, rms: float) -> None:
        if self.mics.levels_wanted:  # the voice's level, for a front end that shows it
            self.emit(events.OutputLevel(rms))

    def _on_mic_error(self, message: str) -> None:  # a tentative turn would wait for no end of speech
        self.tentative.withdraw()
        self._error(message, "microphone")

    def _on_mic_block(self, block: np.ndarray) -> None:
        mic = self.mic
        if self._listening and mic is not None and mic.utterance_s >= self.config.vad.max_utterance_s:
            # Push-to-talk held past the cap: transcribe what we have rather than lose its head.
            self.emit(events.Notice("long utterance: sent at the configured limit"))
            self.release()
            return
        self.utterances.mic_block(block)

    def _on_speaker(self, ev: SpeakerEvent) -> None:
        if (r := self.responder) is not None:
            r.on_speaker(ev)
        if ev.kind == "sentence_started":
            self._set_state(State.SPEAKING)
        elif ev.kind == "queue_empty":
            self.echo.playback_stopped()
            if not self._answering() and not self._listening:
                self._set_state(State.IDLE)
        elif ev.kind == "error":
            self._error(ev.message, "tts")
        self.emit(events.SentenceProgress(ev.kind, ev.index, ev.text, ev.heard))

    # ----- helpers -----------------------------------------------------------------------------
    @property
    def speaker(self) -> Voice | None:
        """The voice being used (a Speaker, or an ExternalSpeaker for `-s`); None before start."""
        return self.voice.speaker

    @property
    def mic(self) -> Microphone | None:
        """The open microphone (None: none works; the error was reported)."""
        return self.mics.mic

    @property
    def conversation(self) -> Brain | None:
        """The brain, once the llm thread has loaded it."""
        return self.llm.brain

    @property
    def responder(self) -> Responder | None:  # the llm thread's, once loaded
        return self.llm.responder

    def emit(self, event: Event) -> None:
        """Deliver an event; a failing handler (a window being destroyed) never takes a thread down."""
        try:
            self._on_event(event)
        except Exception:
            log.exception("event handler failed for %s", event.kind)

    def _answering(self) -> bool:
        return self.responder is not None and self.responder.current is not None

    def _aborting(self) -> bool:
        """Polled by whisper.cpp: stop transcribing when the assistant shuts down."""
        return self._closed

    def _set_state(self, state: State, only_from: State | None = None) -> None:
        """Any thread. `only_from`: change only if the state is still that one (a change queued
        on another thread must not undo what happened meanwhile, e.g. a press's LISTENING)."""
        with self._state_lock:
            if state == self.state or (only_from is not None and self.state != only_from):
                return
            self.state = state
        self.emit(events.StateChanged(state))

    def _error(self, message: str, source: str) -> None:
        log.warning("%s: %s", source, message)
        self.emit(events.Error(message, source))
