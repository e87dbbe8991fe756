"""From microphone blocks to utterances for the transcriber: hands-free, the echo guard's verdict
on each block (a barge-in over the assistant's voice, its echo kept out of the segmenter); the
segmenter's events (a pause starts whisper early, the end of speech ends the utterance, a cap
cuts a monologue); speech soon after a turn ended taking that turn back; and the silence that
ends a turn, set by its words' end-of-turn probability and the audio turn model's (turn_end.py).

Threads: `mic_block` and `on_segment` run on PortAudio's callback thread (the segmenter is fed
there); `end_of_turn_known` and `brain_loaded` on the llm thread, `sound_known` on the stt
thread or the turn model's. Utterances go on the transcriber's queue as (audio, t_speech_end,
end_sample, final, ended): hearing.py.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from app.brain.brain import Brain
from app.ears.echo import EchoGuard
from app.ears.vad import RATE, Segmenter, SegmentEvent
from app.loop.assistant_config import AssistantConfig
from app.loop.continuation import Continuation
from app.loop.events import Event, Notice, State
from app.loop.hearing import Queued
from app.loop.responder import Responder
from app.loop.turn import Turn
from app.loop.turn_end import end_silence_ms, sound_counts

log = logging.getLogger(__name__)


@dataclass
class AssistantView:
    """What Utterances reads of the assistant and asks of it (each callable from any thread)."""

    config: Callable[[], AssistantConfig]
    state: Callable[[], State]
    listening: Callable[[], bool]  # push-to-talk is held
    voice_busy: Callable[[], bool]
    responder: Callable[[], Responder | None]
    interrupt: Callable[[], None]
    take_back: Callable[[Callable[[], None]], None]  # runs a callable on the llm thread
    release: Callable[[], None]  # push-to-talk's end (a held key past the utterance cap)
    resumed: Callable[[], None]  # talking again after a pause: an early transcript is stale
    speaking: Callable[[np.ndarray], None]  # an utterance's first second (its language: hearing.py)
    score_sound: Callable[[Turn], bool]  # start the turn model on a tentative turn (hearing.py)
    emit: Callable[[Event], None]
    set_state: Callable[[State], None]


class Utterances:
    """See the module docstring. Owns nothing: the segmenter, guard, continuation and queue are
    the assistant's (push-to-talk uses the same segmenter for its pauses)."""

    def __init__(
        self,
        view: AssistantView,
        segmenter: Segmenter,
        echo: EchoGuard,
        continuation: Continuation,
        stt_queue: queue.Queue[Queued],
    ) -> None:
        self._a = view
        self._segmenter = segmenter
        self._echo = echo
        self._continuation = continuation
        self._stt_q = stt_queue
        # the llm, stt and scorer threads may each complete a decision; reentrant: a score that
        # is already done runs its callback (sound_known) on the thread that asked for it
        self._deciding = threading.RLock()

    def mic_block(self, block: np.ndarray, mic_utterance_s: float | None) -> None:
        """One block from the microphone (callback thread). `mic_utterance_s`: how long the
        push-to-talk utterance is so far (None when no microphone is open)."""
        a = self._a
        config = a.config()
        listening = a.listening()
        if listening and mic_utterance_s is not None and mic_utterance_s >= config.vad.max_utterance_s:
            # Push-to-talk held past the cap: transcribe what we have rather than lose its head.
            a.emit(Notice("long utterance: sent at the configured limit"))
            a.release()
            return
        if listening:  # push-to-talk: pauses start whisper early (hearing.py)
            self._segmenter.feed(block)
            return
        state = a.state()
        if not config.hands_free or state == State.LOADING:
            return
        verdict = self._echo.mic_block(block, self._segmenter.in_speech)
        if verdict.barge and (state in (State.THINKING, State.SPEAKING) or a.voice_busy()):
            log.info("barge-in: the user is talking over the assistant")
            a.interrupt()
            a.emit(Notice("barge-in"))
        if verdict.audio is not None:
            self._segmenter.feed(verdict.audio)
        else:
            self._segmenter.reset()
            if (head := self._continuation.dropped()) is not None:  # its words are heard alone
                self._stt_q.put((head.audio, head.t_end, -1, True, head))

    def on_segment(self, ev: SegmentEvent) -> None:
        """The segmenter's event (callback thread)."""
        a = self._a
        if ev.kind == "speaking":
            a.speaking(self._continuation.prefixed(ev.audio))
            return
        if a.listening() and ev.kind != "pause" and ev.kind != "resumed":
            return  # push-to-talk: the key, not the segmenter, says when the turn starts and ends
        if ev.kind == "speech_started":
            self._went_on()
            a.set_state(State.LISTENING)
            return
        if ev.kind == "resumed":
            a.resumed()
            return
        silence = self._segmenter.position - ev.end_sample
        t_end = time.perf_counter() - silence / RATE
        audio = self._continuation.prefixed(ev.audio)
        ended = None
        if ev.kind == "utterance":
            ended = self._continuation.ended(audio, t_end)
        elif ev.kind == "capped":
            self._continuation.forget()
            a.emit(Notice("long utterance cut at the configured limit"))
        if ev.kind != "pause":
            a.set_state(State.TRANSCRIBING)
        self._stt_q.put((audio, t_end, ev.end_sample, ev.kind != "pause", ended))

    def _went_on(self) -> None:
        """Hands-free speech began: soon after the last turn ended, the user had not finished;
        that turn is taken back and its words head this utterance."""
        a = self._a
        min_speech_s = a.config().vad.min_speech_ms / 1000
        ended = self._continuation.speech_started(time.perf_counter() - min_speech_s)
        if ended is None:
            return
        gap_ms = (time.perf_counter() - ended.t_end) * 1000
        log.info("speech %.0f ms after the end of a turn: it goes on", gap_ms)
        turn, r = ended.turn, a.responder()
        if turn is not None and r is not None:
            a.interrupt()
            a.take_back(lambda: r.take_back(turn))
        a.emit(Notice("You went on after a pause: heard as one turn"))

    def brain_loaded(self, brain: Brain) -> None:
        """llm thread: a brain that reads no end-of-turn probability (a server without the local
        words reader, brain/words_reader.py) gets the fixed silence rule until the audio turn
        model answers at a pause."""
        if not brain.reads_end_of_turn:
            self._segmenter.base_end_ms = self._a.config().vad.end_silence_ms

    def end_of_turn_known(self, turn: Turn) -> None:
        """llm thread: a tentative turn's words are evaluated (their end-of-turn probability, or
        None from a server without the words reader)."""
        self._decide(turn)

    def sound_known(self, turn: Turn) -> None:
        """stt or scorer thread: the turn model has scored the tentative turn's audio."""
        self._decide(turn)

    def _decide(self, turn: Turn) -> None:
        """Once the words and (when it counts for them: turn_end.sound_counts) the sound are
        known, they set the silence that ends this utterance (turn_end.py). Any thread; the
        sound is asked for once, the silence decided once."""
        with self._deciding:
            if turn.audio_pending or "end_of_turn" not in turn.stamps or turn.end_silence_ms is not None:
                return
            if not turn.sound_asked and sound_counts(turn.end_of_turn, self._a.config().turn_end):
                turn.sound_asked = turn.audio_pending = True
                if self._a.score_sound(turn):
                    return  # decided when the sound is known
                turn.audio_pending = False  # no turn model (or the turn is gone): the words alone
            self._set_end_silence(turn)

    def _set_end_silence(self, turn: Turn) -> None:
        c = self._a.config()
        ms = end_silence_ms(
            turn.end_of_turn, c.turn_end, c.vad.end_silence_ms, turn.pitch_end, turn.text, turn.audio_end
        )
        turn.end_silence_ms = ms
        if not self._a.listening():  # push-to-talk: the release ends the turn
            self._segmenter.set_end_silence(ms, turn.end_sample)
        log.debug(
            "end of turn: P=%s, pitch %s, audio %s -> %d ms of silence",
            turn.end_of_turn,
            turn.pitch_end,
            turn.audio_end,
            ms,
        )
