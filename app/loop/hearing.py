"""The stt thread: whisper, and what its transcripts become (hands-free and push-to-talk).

Items arrive on `queue` as (audio, t_speech_end, end_sample, final, ended):
- not final (a pause, hands-free or while the talk key is held): whisper starts early
  (EarlyTranscription); accepted text starts a tentative turn (TentativeTurns) whose prompt the
  llm thread evaluates, and whose first words it prepares, meanwhile. Skipped when newer audio
  is already waiting.
- final (the end of an utterance, or the key released): a `transcript` event; if the tentative
  turn was started from this very transcript (nothing was said after its pause, `end_sample`
  matches) it is confirmed, otherwise an ordinary turn is submitted. `ended` (hands-free: a
  continuation.Ended, else None): if the user went on talking before the turn was made, it is
  not (the next utterance holds these words; continuation.py).
`end_sample` is a position on the clock of the segmenter that saw the pause (-1: none).
On Automatic, a `LanguageSample` (an utterance's first second, `speaking`) comes first: whisper
finds the language in it while the user goes on talking (one encoder pass), and the utterance's
transcriptions use that language instead of each finding it again after the end of speech
(bench/languages). `speaking` is called from the audio thread.
At a pause the voice's last pitch is read against where the user's statements end (`pitch`,
learnt from the utterances heard as words; ears/prosody.py) and, hands-free (`score_pauses`), the
audio turn model may hear whether the utterance sounds finished (ears/turn_model.py, ~50 ms on
one core) on its own thread. For a brain that reads no words (`sound_first`: a server without
the words reader, brain/words_reader.py) it is started with whisper at every pause (it needs
only the audio; its answer is usually in by the time the words are transcribed) and waited for
right after the tentative turn is submitted.
Beside a brain that reads the words it is started only when asked (`score`, once the words'
P is known and unsure: loop/turn_end.sound_counts), on the pause's audio kept with the current
tentative turn. Both go with the turn (loop/turn_end.py; the silence is decided once both are
known: `sound_known`). A turn model that cannot load is reported (source "turn") and the words
decide alone.

Threads: `run` is the stt thread (it alone uses whisper); the turn model runs on `_scorer`, one
worker owned by the stt thread (shut down in `close`); `resumed()` is called from the audio
callback thread, `score` from any (the llm thread); `queue.put` from any thread.
"""

from __future__ import annotations

import logging
import queue
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from app.ears.early_transcription import EarlyTranscription
from app.ears.prosody import FinalPitch
from app.ears.silero import SpeechModel, SpeechModelUnavailable
from app.ears.transcriber import SttConfig, Transcriber, Transcript
from app.ears.turn_model import TurnModel, TurnModelUnavailable
from app.ears.vad import RATE, VadConfig
from app.ears.wake import strip_wake_command
from app.loop import events
from app.loop.continuation import Continuation, Ended
from app.loop.events import Event, Loaded, Notice, State
from app.loop.tentative_turns import TentativeTurns
from app.loop.turn import Turn
from app.system.cpu import core_taken
from app.system.thread_names import name_os_thread

log = logging.getLogger(__name__)
Heard = tuple[np.ndarray, float, int, bool, Ended | None]  # audio, t_speech_end, end_sample, final, ended


@dataclass(frozen=True)
class LanguageSample:
    """The start of an utterance still being spoken, to find its language in (Automatic)."""

    audio: np.ndarray


Queued = Heard | LanguageSample | None  # None: the thread ends


class Hearing:
    def __init__(
        self,
        stt: SttConfig,
        vad: VadConfig,
        wake_command: str,
        tentative: TentativeTurns,
        continuation: Continuation,
        submit: Callable[[Turn], None],
        emit: Callable[[Event], None],
        set_state: Callable[[State], None],
        error: Callable[[str, str], None],
        answering: Callable[[], bool],
        aborting: Callable[[], bool],
        turn_model: Path | None = None,
    ) -> None:
        """`submit` hands a turn to the llm thread; `emit`/`set_state`/`error` are the
        assistant's; `answering()`: a reply is being generated; `aborting()`: stop whisper."""
        self.stt, self.vad, self.wake_command = stt, vad, wake_command
        self.tentative = tentative
        self.continuation = continuation
        self._submit, self._emit, self._set_state, self._error = submit, emit, set_state, error
        self._answering, self._aborting = answering, aborting
        self.queue: queue.Queue[Queued] = queue.Queue()
        self.transcriber: Transcriber | None = None
        self.early: EarlyTranscription | None = None  # set once whisper loads
        self.last_utterance = np.zeros(0, np.float32)  # the last audio sent to whisper (diagnostics)
        self._language: tuple[str, int] | None = None  # (found, samples heard) this utterance
        self.languages_found = 0  # utterances whose language was found while spoken (diagnostics)
        self.pitch = FinalPitch()  # the user's voice (stt thread)
        self.turn_model_path = turn_model
        self.turn_model: TurnModel | None = None  # loaded after whisper (stt thread)
        self._scorer: ThreadPoolExecutor | None = None  # runs the turn model (beside whisper or the llm)
        self.score_pauses: Callable[[], bool] = lambda: False  # hands-free: the turn model hears pauses
        self.sound_first: Callable[[], bool] = lambda: True  # score every pause (the brain reads no words)
        self._paused: tuple[int, np.ndarray] | None = None  # (end_sample, audio) of the newest pause
        self.sound_known: Callable[[Turn], None] = lambda turn: None  # a turn's audio_end is set
        self.speech_model_loaded: Callable[[SpeechModel], None] = lambda model: None  # vad.speech_model

    def change_stt(self, stt: SttConfig) -> None:
        """Any thread: whisper's settings from the next clip on (the model stays loaded; only
        per-clip settings such as the initial prompt apply without a reload)."""
        self.stt = stt
        if self.transcriber is not None:
            self.transcriber.config = stt

    def resumed(self) -> None:
        """Audio thread: talking again after a pause: its early transcript and tentative turn
        are stale."""
        if self.early is not None:
            self.early.resumed()
        self.tentative.withdraw()

    def speaking(self, audio: np.ndarray) -> None:
        """Audio thread: an utterance has gone on a second; on Automatic its language is found
        from `audio` on the stt thread meanwhile."""
        if self.transcriber is not None and self.transcriber.automatic:
            self.queue.put(LanguageSample(audio))

    def run(self) -> None:
        """The stt thread: load whisper, then transcribe until a None item."""
        try:
            self.transcriber = Transcriber(self.stt, self.vad)
            log.info("speech recognition ready (%s)", Path(self.stt.model_path).name)
            self._load_turn_model()  # before "loaded": the first pause may need it
            self._load_speech_model()
            self._emit(Loaded("whisper"))
        except Exception as exc:  # missing/corrupt model, library failure: keep typing usable
            self._error(f"Speech recognition unavailable: {exc}", "whisper")
        early = EarlyTranscription(self.transcriber, self._aborting) if self.transcriber else None
        self.early = early
        while (item := self.queue.get()) is not None:
            if isinstance(item, LanguageSample):
                self._find_language(item.audio)
                continue
            audio, t_end, end_sample, final, ended = item
            if early is None:
                if final:  # no whisper: the utterance cannot be heard (the error was shown)
                    self._set_state(State.IDLE)
            elif not final:
                self._at_pause(early, audio, end_sample, t_end)
            else:
                self._at_end(early, audio, end_sample, t_end, ended)

    def close(self) -> None:
        """After the stt thread has ended: drop whisper and the turn model (freed now)."""
        if self._scorer is not None:
            self._scorer.shutdown(wait=True)
        self.transcriber = self.early = self.turn_model = self._scorer = self._paused = None

    def _load_turn_model(self) -> None:
        if self.turn_model_path is None:
            return
        try:
            self.turn_model = TurnModel(self.turn_model_path)
            self._scorer = ThreadPoolExecutor(1, "turn-model", initializer=name_os_thread)
        except TurnModelUnavailable as exc:
            self._error(f"Hands-free turns end by your words alone: {exc}", "turn")

    def _load_speech_model(self) -> None:
        if self.vad.speech_model is None:
            return
        try:
            self.speech_model_loaded(SpeechModel(self.vad.speech_model))
        except SpeechModelUnavailable as exc:
            self._error(f"Hands-free hears speech in noise less well: {exc}", "vad")

    def _find_language(self, audio: np.ndarray) -> None:
        """The language of the utterance under way (one encoder pass, while it is spoken)."""
        if self.transcriber is None or not self.transcriber.automatic:
            return
        language, p = self.transcriber.detect_language(audio)
        self._language = (language, len(audio)) if language else None
        self.languages_found += bool(language)
        log.info("language while speaking: %s (p %.2f, %.1f s heard)", language or "?", p, len(audio) / RATE)

    def _language_of(self, audio: np.ndarray) -> str | None:
        """The language found while `audio` was spoken. An utterance shorter than the sample
        it was found in is another one (the one sampled was dropped unheard, e.g. as echo)."""
        found = self._language
        return found[0] if found is not None and len(audio) >= found[1] else None

    def _at_pause(self, early: EarlyTranscription, audio: np.ndarray, end_sample: int, t_end: float) -> None:
        with self.queue.mutex:
            if any(not isinstance(item, LanguageSample) for item in self.queue.queue):
                return  # newer audio (or the end) is waiting
        sound: Future[float | None] | None = None
        hears = self._scorer is not None and self.score_pauses()
        if hears and self.sound_first():
            sound = self._scorer.submit(self._sounds_finished, audio)  # type: ignore[union-attr]
        result = early.at_pause(audio, end_sample, self._language_of(audio))
        if result is not None and (text := self._turn_text(result)):
            pitch_end = self.pitch.ending(audio)
            current = lambda: early.is_current(result)  # noqa: E731
            scored = sound is not None
            # kept before the llm thread can see the turn: scored if the words are unsure (`score`)
            self._paused = (end_sample, audio) if hears and not scored else None
            turn = self.tentative.start(result, text, t_end, end_sample, current, pitch_end, scored)
            if sound is not None:  # while the llm thread evaluates the words
                turn.sound_asked = True
                self._scored(turn, sound.result())

    def score(self, turn: Turn) -> bool:
        """Any thread: start the turn model on tentative `turn`'s audio (the pause it was made
        at); `sound_known(turn)` follows from the scorer's thread. False (nothing started) when
        there is no turn model or a newer pause has replaced `turn`'s."""
        paused, scorer = self._paused, self._scorer
        if paused is None or scorer is None or paused[0] != turn.end_sample:
            return False
        try:
            future = scorer.submit(self._sounds_finished, paused[1])
        except RuntimeError:  # shut down meanwhile
            return False
        future.add_done_callback(lambda f: self._scored(turn, f.result()))
        return True

    def _scored(self, turn: Turn, p: float | None) -> None:
        turn.audio_end = p
        turn.audio_pending = False
        self.sound_known(turn)

    def _sounds_finished(self, audio: np.ndarray) -> float | None:
        """The turn model's P that the utterance so far is a finished turn (None: it failed).
        On the `_scorer` thread."""
        assert self.turn_model is not None
        try:
            with core_taken():  # the llm computes with one thread fewer meanwhile (system/cpu.py)
                return self.turn_model.probability(audio)
        except Exception:  # onnxruntime failing on one clip must not cost the turn
            log.exception("the turn model failed on a pause")
            return None

    def _at_end(
        self, early: EarlyTranscription, audio: np.ndarray, end_sample: int, t_end: float, ended: Ended | None
    ) -> None:
        self.last_utterance = audio
        result = early.final(audio, end_sample, self._language_of(audio))
        self._language = None  # the next utterance finds its own
        self._emit(
            events.Transcript(result.text, result.rejected, result.reason, result.prob, result.language)
        )
        if not self.continuation.deliver(ended, lambda: self._turn_of(result, t_end)):
            self.tentative.withdraw()  # the user went on: these words head the next utterance
            log.info("the user went on after the pause: %r continues", result.text)
        if not result.rejected:  # after the turn is on its way (~8 ms)
            self.pitch.learn(audio, result.text)

    def _turn_of(self, result: Transcript, t_end: float) -> Turn | None:
        """Confirm the tentative turn made of `result`, or submit a new one; the turn, if any."""
        if (turn := self.tentative.settle(result)) is not None:
            return turn  # confirmed: the llm thread has evaluated its prompt already
        text = self._turn_text(result)
        if not text:
            if not result.rejected:
                self._emit(Notice("wake command not heard; ignored"))
            if not self._answering():
                self._set_state(State.IDLE)
            return None
        turn = Turn(text, t_end, time.perf_counter(), result.transcribe_s * 1000, language=result.language)
        self._submit(turn)
        return turn

    def _turn_text(self, result: Transcript) -> str:
        """What a transcript says to the assistant: "" if rejected or the wake command is missing."""
        if result.rejected:
            return ""
        if self.wake_command:
            return strip_wake_command(result.text, self.wake_command) or ""
        return result.text
