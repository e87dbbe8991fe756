"""From microphone blocks to utterances for the transcriber: hands-free, the echo guard's verdict
on each block (a barge-in over the assistant's voice, its echo kept out of the segmenter); the
segmenter's events (a pause starts whisper early, the end of speech ends the utterance, a cap
cuts a monologue); and speech soon after a turn ended taking that turn back (continuation.py).
The silence that ends a turn is end_of_turn.py's.

Threads: `mic_block` runs on PortAudio's callback thread (the segmenter is fed there and its
events handled at once). Utterances go to the stt thread as `ports.Utterance`s (hearing.py).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from app.ears.echo import EchoGuard
from app.ears.vad import RATE, Segmenter, SegmentEvent
from app.loop.assistant_config import AssistantConfig
from app.loop.continuation import Continuation
from app.loop.events import Event, Notice, State
from app.loop.ports import SttItem, Utterance
from app.loop.responder import Responder

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class AssistantView:
    """What Utterances reads of the assistant and asks of it (each callable from any thread)."""

    config: Callable[[], AssistantConfig]
    state: Callable[[], State]
    listening: Callable[[], bool]  # push-to-talk is held
    voice_busy: Callable[[], bool]
    responder: Callable[[], Responder | None]
    interrupt: Callable[[], None]
    take_back: Callable[[Callable[[], None]], None]  # runs a callable on the llm thread
    resumed: Callable[[], None]  # talking again after a pause: an early transcript is stale
    speaking: Callable[[np.ndarray], None]  # an utterance's first second (its language: hearing.py)
    emit: Callable[[Event], None]
    set_state: Callable[[State], None]


class Utterances:
    """See the module docstring. Owns nothing: the segmenter, guard and continuation are the
    assistant's (push-to-talk uses the same segmenter for its pauses)."""

    def __init__(
        self,
        view: AssistantView,
        segmenter: Segmenter,
        echo: EchoGuard,
        continuation: Continuation,
        to_stt: Callable[[SttItem], None],
    ) -> None:
        self._a = view
        self._segmenter = segmenter
        self._echo = echo
        self._continuation = continuation
        self._to_stt = to_stt

    def mic_block(self, block: np.ndarray) -> None:
        """One block from the microphone (callback thread)."""
        a = self._a
        config = a.config()
        if a.listening():  # push-to-talk: pauses start whisper early (hearing.py)
            self._segment(block)
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
            self._segment(verdict.audio)
        else:
            self._segmenter.reset()
            if (head := self._continuation.dropped()) is not None:  # its words are heard alone
                self._to_stt(Utterance(head.audio, head.t_end, -1, True, head))

    def _segment(self, audio: np.ndarray) -> None:
        for ev in self._segmenter.feed(audio):
            self._on_segment(ev)

    def _on_segment(self, ev: SegmentEvent) -> None:
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
        self._to_stt(Utterance(audio, t_end, ev.end_sample, ev.kind != "pause", ended))

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
