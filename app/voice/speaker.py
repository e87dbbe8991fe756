"""Speaker: queue sentences, synthesize ahead, play through sounddevice, stop at once.

Two threads owned by the Speaker: the synthesis thread turns queued sentences into PCM (sentence
N+1 is synthesized while N plays), the playback thread writes PCM to an output stream in ~20 ms
blocks. `stop()` (any thread) clears both queues and tells the playback thread, which aborts its
stream after the block it is writing (the sound ends within ~one block); it returns without
waiting for the threads. Only the playback thread touches its stream while it may be writing:
aborting a PortAudio stream from another thread during a blocking write left that write
spinning at 100% CPU forever (seen in a CI run).

Events go to `on_event(SpeakerEvent)` from the Speaker's threads: `sentence_started`,
`sentence_finished`, `queue_empty`, `error`; and from the thread calling `stop()`:
`sentence_cut` for the sentence that was playing, with `heard`, its words whose sound had started
(espeak's word timings against the samples written).

Held sentences (`say(held=True)`, a tentative turn's first words): synthesized at once, played
only after `release_held()`; `discard_held()` (or `stop()`) drops them unheard.

The engine is chosen from `config.voice` when the Speaker is made (voices.py: a natural voice, or
espeak-ng; loading a natural voice blocks ~0.5-1 s). A natural voice that cannot load falls back
to the system voice and `notice` says why. Without any engine the Speaker reports one error
event and otherwise ignores `say()` (the app keeps working text-only).
"""

from __future__ import annotations

import logging
import queue
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Final, Literal

import numpy as np

from app.catalog.languages import primary
from app.system.thread_names import named_thread
from app.voice.device_output import DeviceOutput
from app.voice.lanes import Lane
from app.voice.natural_voice import Cancelled
from app.voice.sentence_queue import SentenceQueue, SpeakerEvent
from app.voice.synthesizer import Speech
from app.voice.voices import open_engine

log = logging.getLogger(__name__)
BLOCK_S = 0.02


@dataclass
class _Hold:
    """Sentences of a turn not yet confirmed: synthesized at once, played only once released."""

    decided: threading.Event = field(default_factory=threading.Event)
    keep: bool = False


@dataclass(frozen=True)
class _ToSynthesize:
    """A sentence for the synthesis thread (`gen`: the stop() generation it belongs to)."""

    gen: int
    index: int
    text: str
    hold: _Hold | None
    language: str
    first: bool = False  # said next, ahead of what waits (say(next_up=True))


@dataclass(frozen=True)
class _ToPlay:
    """A synthesized sentence for the playback thread."""

    gen: int
    index: int
    speech: Speech
    hold: _Hold | None


@dataclass
class _Playing:
    """The sentence being written to the device (playback thread writes, stop() reads)."""

    gen: int
    index: int
    speech: Speech
    written: int = 0  # samples handed to the device so far
    buffered: int = 0  # of those, how many its output buffer holds before they are heard


@dataclass
class SpeakerConfig:
    voice: str | None = None  # voices.py: a natural voice's name or file, a system voice; None: default
    rate: int | None = None  # words per minute (espeak default 175)
    volume: float | None = None  # 0..1
    device: int | str | None = None  # sounddevice output device
    # Output buffer (PortAudio's suggested latency): seconds, or "low" (the device's lowest, ~9 ms
    # on PulseAudio). 50 ms: with the app's own work in the process (the brain writing, whisper
    # transcribing) and one other core busy, "low" ran dry 21 times in 20 replies, 50 ms never
    # (bench/underruns.py --load app). Busier still, it grows after a hole (output_buffer.py).
    latency: float | str = 0.05
    latency_most: float = 0.2  # the most it grows to after holes (output_buffer.py); = latency: fixed
    language: str = "en"  # whose natural voice is the default


class Speaker(SentenceQueue):
    """Interruptible sentence-by-sentence speech. Call `close()` when done."""

    can_hold = True

    def __init__(
        self, config: SpeakerConfig | None = None, on_event: Callable[[SpeakerEvent], None] | None = None
    ):
        self.config = config or SpeakerConfig()
        self.on_event = on_event or (lambda e: None)
        # Every block about to be written: (samples, sample rate, the stream's output latency in
        # seconds: how long after the write it is heard); the playback thread calls it.
        self.on_output: Callable[[np.ndarray, int, float], None] | None = None
        # The device ran dry before the block just written (PortAudio's output underflow: this
        # thread was late, as on a busy desktop), so it plays later than the blocks before it
        # implied; the playback thread calls it.
        self.on_gap: Callable[[], None] | None = None
        # The RMS of what is played, every 2 blocks (25 a second; the playback thread calls it)
        self.on_level: Callable[[float], None] | None = None
        opened = open_engine(self.config.voice, self.config.language)
        self._engine = opened.engine
        self.voice = opened.voice  # what speaks (None: espeak's default voice)
        self.notice = opened.notice  # a natural voice fell back to the system voice: why
        self.available = self._engine is not None
        self.problem = opened.problem
        # The first chunk of a reply may end after this many words (0: at a clause or sentence
        # end only): a natural voice's first audio waits for its whole first chunk.
        self.first_chunk_words = getattr(self._engine, "first_chunk_words", 0)
        if not self.available:
            log.warning("speech output disabled: %s", self.problem)
        self._text_q: Lane[_ToSynthesize | None] = Lane()
        # Engines for the languages replies were spoken in besides the configured voice's
        # (language code -> engine; opened on the synthesis thread when first needed).
        self._engines: dict[str, Any] = {}
        self._pcm_q: Lane[_ToPlay | Literal["abort"] | None] = Lane()
        self._hold: _Hold | None = None  # the sentences held now (see the module docstring)
        self._playing: _Playing | None = None
        self._generation = 0  # bumped by stop(): stale work is dropped
        self._index = 0
        self._synthesized = 0  # sentences up to this index are synthesized or dropped
        self._synthesized_cv = threading.Condition()
        self._pending = 0
        self._lock = threading.Lock()
        c = self.config
        self._output = DeviceOutput(c.device, c.latency, c.latency_most)  # the playback thread's
        self._closed = False
        self._threads = [
            named_thread(self._synth_loop, "speaker-synth"),
            named_thread(self._play_loop, "speaker-play"),
        ]
        for t in self._threads:
            t.start()

    # ----- public API ----------------------------------------------------------------------
    def say(self, sentence: str, held: bool = False, language: str = "", next_up: bool = False) -> int:
        """Queue one sentence (non-blocking); returns its index for the sentence events (-1 if
        nothing was queued). `held`: synthesize now, play after `release_held()`. `language`:
        a whisper code other than the configured one is spoken by that language's default
        voice (natural where one is downloaded, else espeak-ng's). `next_up`: ahead of every
        sentence waiting, right after the one playing (an announcement during a reply)."""
        if not sentence.strip():
            return -1
        if not self.available:
            self._emit(SpeakerEvent("error", sentence, message=self.problem))
            return -1
        with self._lock:
            self._pending += 1
            self._index += 1
            if held and self._hold is None:
                self._hold = _Hold()
            item = _ToSynthesize(
                self._generation, self._index, sentence, self._hold if held else None, language, next_up
            )
        self._text_q.put(item, first=next_up)
        return item.index

    @property
    def holes(self) -> int:
        """Holes in the speech so far: the device ran dry inside a sentence (device_output.py)."""
        return self._output.holes

    def wait_synthesized(self, index: int, timeout: float) -> bool:
        """Block until sentence `index` is synthesized (or dropped); False on timeout. The reply's
        writer waits on its first sentence, so that the synthesis has the cores to itself."""
        with self._synthesized_cv:
            return self._synthesized_cv.wait_for(lambda: self._synthesized >= index, timeout)

    def release_held(self) -> None:
        """Play the held sentences (in their place in the queue)."""
        self._decide_hold(True)

    def discard_held(self) -> None:
        """Drop the held sentences unheard (no events)."""
        self._decide_hold(False)

    def _decide_hold(self, keep: bool) -> None:
        with self._lock:
            hold, self._hold = self._hold, None
        if hold is not None:
            hold.keep = keep
            hold.decided.set()

    def stop(self) -> None:
        """Silence now: drop queued sentences and abort playback. Returns promptly, after the
        `sentence_cut` event of the sentence that was playing (if any)."""
        with self._lock:
            playing = self._playing
            cut = playing is not None and playing.gen == self._generation
            self._generation += 1
            self._pending = 0
            dropped = self._index
        with self._synthesized_cv:  # what was queued is dropped: nobody waits for it
            self._synthesized = max(self._synthesized, dropped)
            self._synthesized_cv.notify_all()
        self.discard_held()
        for q in (self._text_q, self._pcm_q):
            _drain(q)
        for engine in (self._engine, *list(self._engines.values())):  # (a copy: the synthesis thread adds)
            if engine is not None:
                engine.cancel()  # a long sentence being synthesized is not waited for
        self._pcm_q.put(_SILENCE)  # the playback thread aborts its stream (buffered sound too)
        if cut and playing is not None:
            heard = playing.speech.heard(max(0, playing.written - playing.buffered))
            self._emit(SpeakerEvent("sentence_cut", playing.speech.text, playing.index, heard=heard))

    def close(self) -> None:
        self.stop()
        self._closed = True
        self._text_q.put(None)
        self._pcm_q.put(None)
        for t in self._threads:
            t.join(timeout=2)
        if self._threads[1].is_alive():  # still inside a write: closing under it aborts PortAudio
            log.warning("speaker: playback thread did not stop; its stream is left to it")
            return
        self._output.close()

    # ----- threads -------------------------------------------------------------------------
    def _emit(self, event: SpeakerEvent) -> None:
        try:
            self.on_event(event)
        except Exception:
            log.exception("speaker event handler failed")

    def _finish_one(self, gen: int, quiet: bool = False) -> None:
        with self._lock:
            if gen == self._generation and self._pending > 0:
                self._pending -= 1
                empty = self._pending == 0
            else:
                empty = False
        if empty and not quiet:
            self._emit(SpeakerEvent("queue_empty"))

    def _synth_loop(self) -> None:
        while (item := self._text_q.get()) is not None:
            try:
                self._synthesize(item)
            finally:
                with self._synthesized_cv:
                    self._synthesized = max(self._synthesized, item.index)
                    self._synthesized_cv.notify_all()

    def _synthesize(self, item: _ToSynthesize) -> None:
        """Synthesis thread: one queued sentence to the playback queue (or dropped)."""
        gen, index, text, hold = item.gen, item.index, item.text, item.hold
        if gen != self._generation:
            return
        if hold is not None and hold.decided.is_set() and not hold.keep:
            self._finish_one(gen, quiet=True)
            return
        try:
            speech = self._render(gen, text, self._engine_for(item.language))
        except Cancelled:  # stop(): this sentence belongs to what was stopped
            return
        except Exception as exc:
            log.exception("synthesis failed")
            self._emit(SpeakerEvent("error", text, index, message=f"speech synthesis failed: {exc}"))
            self._finish_one(gen)
            return
        if gen == self._generation:
            self._pcm_q.put(_ToPlay(gen, index, speech, hold), first=item.first)

    def _engine_for(self, language: str) -> Any:
        """Synthesis thread: the engine that speaks `language` (the configured one for its own
        language, an unknown one, or when the language's voice cannot load)."""
        if not language or primary(language) == primary(self.config.language):
            return self._engine
        if language not in self._engines:
            opened = open_engine(None, language)
            self._engines[language] = opened.engine or self._engine
            log.info("speaking %s with %s", language, getattr(opened.voice, "name", "espeak's default voice"))
        return self._engines[language]

    def _render(self, gen: int, text: str, engine: Any) -> Speech:
        """Synthesis thread: `text` as sound. A cancel meant for the sentences stop() dropped
        can land on one queued just after it (say() from another thread): that one is redone."""
        assert engine is not None
        while True:
            try:
                return engine.render(text, self.config.rate, self.config.volume)
            except Cancelled:
                if gen != self._generation:
                    raise

    def _play_loop(self) -> None:
        while True:
            try:
                item = self._pcm_q.get(timeout=0.5)
            except queue.Empty:
                self._output.close()  # idle: release the device
                continue
            if item is None:
                return
            if item == _SILENCE:
                self._output.abort()
                continue
            gen, index, speech, hold = item.gen, item.index, item.speech, item.hold
            if hold is not None:
                hold.decided.wait()  # released, discarded, or stop()/close()
                if not hold.keep:
                    self._finish_one(gen, quiet=True)
                    continue
            if gen != self._generation:
                continue
            self._play_one(gen, index, speech)

    def _play_one(self, gen: int, index: int, speech: Speech) -> None:
        text, pcm, rate = speech.text, speech.pcm, speech.sample_rate
        playing = _Playing(gen, index, speech)
        holes = self._output.holes
        try:
            stream = self._output.stream_for(rate)
            block = int(rate * BLOCK_S)
            playing.buffered = int(float(stream.latency) * rate)
            self._playing = playing
            self._emit(SpeakerEvent("sentence_started", text, index))
            for start in range(0, len(pcm), block):
                if gen != self._generation:
                    break
                chunk = pcm[start : start + block]
                if self.on_output is not None:
                    self.on_output(chunk, rate, float(stream.latency))
                if self.on_level is not None and start % (2 * block) == 0:
                    self.on_level(float(np.sqrt(np.mean(chunk**2))) if len(chunk) else 0.0)
                if stream.write(chunk):
                    self._output.ran_dry(start // block)
                    if self.on_gap is not None:
                        self.on_gap()
                playing.written = start + len(chunk)
            with self._lock:
                finished = gen == self._generation
                self._playing = None
            if finished:
                if self._output.holes == holes:
                    self._output.buffer.sentence_played()
                self._emit(SpeakerEvent("sentence_finished", text, index))
            else:
                self._output.abort()  # stopped mid-sentence: drop what the device still holds
        except Exception as exc:
            if gen == self._generation:  # an abort from stop() is not an error
                log.warning("audio output failed: %s", exc)
                self._emit(SpeakerEvent("error", text, index, message=f"audio output failed: {exc}"))
            self._output.close()
        self._playing = None
        self._finish_one(gen)


_Pcm = tuple[int, int, "Speech", "_Hold | None"]  # generation, index, sound, hold
_SILENCE: Final = "abort"  # playback queue item: abort the stream now (see stop())


def _drain(q: Lane) -> None:
    while True:
        try:
            item = q.get_nowait()
        except queue.Empty:
            return
        if item is None:  # keep shutdown sentinels
            q.put(None)
            return
