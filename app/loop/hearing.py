"""The stt thread: whisper, and what its transcripts become (hands-free and push-to-talk).

Its inbox carries `ports.Utterance`s and `ports.LanguageSample`s:
- an Utterance not `final` (a pause, hands-free or while the talk key is held): whisper starts
  early (EarlyTranscription); accepted text starts a tentative turn (TentativeTurns) whose prompt
  the llm thread evaluates, and whose first words it prepares, meanwhile. Skipped when newer
  audio is already waiting.
- a `final` Utterance (the end of an utterance, or the key released): a `Transcript` event; if
  the tentative turn was started from this very transcript (nothing was said after its pause,
  `end_sample` matches) it is confirmed, otherwise an ordinary turn is submitted. `ended`
  (hands-free): if the user went on talking before the turn was made, it is not (the next
  utterance holds these words; continuation.py).
- a LanguageSample (Automatic: an utterance's first second, `speaking`): whisper finds the
  language while the user goes on talking (one encoder pass), and the utterance's
  transcriptions use it instead of each finding it again after the end of speech.
At a pause the voice's last pitch is read against where the user's statements end (`pitch`,
learnt from the utterances heard as words; ears/prosody.py). Hands-free, the audio turn model
(sound_scorer.py) scores every pause beside whisper for a brain that reads no words, and is
waited for once the tentative turn is submitted; beside a brain that reads the words, the
pause's audio is only kept for EndOfTurn to have scored if the words are unsure.

Threads: `run` is the stt thread (it alone uses whisper); `resumed()` and `speaking()` are called
from the audio callback thread; `put` from any thread.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

from app.ears.early_transcription import EarlyTranscription
from app.ears.prosody import FinalPitch
from app.ears.silero import SpeechModel, SpeechModelUnavailable
from app.ears.transcriber import SttConfig, Transcriber, Transcript
from app.ears.vad import RATE, VadConfig
from app.ears.wake import strip_wake_command
from app.loop import events
from app.loop.continuation import Continuation
from app.loop.end_of_turn import EndOfTurn
from app.loop.events import Loaded, Notice, State
from app.loop.ports import LanguageSample, Report, SttItem, Utterance
from app.loop.sound_scorer import SoundScorer, scored
from app.loop.tentative_turns import TentativeTurns
from app.loop.turn import Turn

log = logging.getLogger(__name__)


class Hearing:
    def __init__(
        self,
        stt: SttConfig,
        vad: VadConfig,
        *,
        report: Report,
        wake_command: str,
        tentative: TentativeTurns,
        continuation: Continuation,
        sound: SoundScorer,
        end_of_turn: EndOfTurn,
        submit: Callable[[Turn], None],
        speech_model_loaded: Callable[[SpeechModel], None],
        answering: Callable[[], bool],
        aborting: Callable[[], bool],
        hands_free: Callable[[], bool],
        brain_reads_words: Callable[[], bool],
    ) -> None:
        """`submit` hands a turn to the llm thread; `speech_model_loaded` gives the segmenter
        its speech model; `answering()`: a reply is being generated; `aborting()`: stop
        whisper; `hands_free()`: pauses are scored; `brain_reads_words()`: the brain gives an
        end-of-turn probability (else the sound is scored at every pause)."""
        self.stt, self.vad, self.wake_command = stt, vad, wake_command
        self._report = report
        self.tentative = tentative
        self.continuation = continuation
        self.sound = sound
        self._end_of_turn = end_of_turn
        self._submit = submit
        self._speech_model_loaded = speech_model_loaded
        self._answering, self._aborting = answering, aborting
        self._hands_free, self._brain_reads_words = hands_free, brain_reads_words
        self._inbox: queue.Queue[SttItem] = queue.Queue()
        self._waiting = 0  # utterances (or the end) in the inbox: a pause behind them is stale
        self._waiting_lock = threading.Lock()
        self.transcriber: Transcriber | None = None
        self.early: EarlyTranscription | None = None  # set once whisper loads
        self.last_utterance = np.zeros(0, np.float32)  # the last audio sent to whisper (diagnostics)
        self._language: tuple[str, int] | None = None  # (found, samples heard) this utterance
        self.languages_found = 0  # utterances whose language was found while spoken (diagnostics)
        self.pitch = FinalPitch()  # the user's voice (stt thread)

    def put(self, item: SttItem) -> None:
        """Any thread: audio for the stt thread (None ends it)."""
        if not isinstance(item, LanguageSample):
            with self._waiting_lock:
                self._waiting += 1
        self._inbox.put(item)

    @property
    def busy(self) -> bool:
        """Something waits in the inbox (diagnostics, tests)."""
        return not self._inbox.empty()

    def _take(self) -> SttItem:
        item = self._inbox.get()
        if not isinstance(item, LanguageSample):
            with self._waiting_lock:
                self._waiting -= 1
        return item

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
            self.put(LanguageSample(audio))

    def run(self) -> None:
        """The stt thread: load whisper, then transcribe until a None item."""
        try:
            self.transcriber = Transcriber(self.stt, self.vad)
            log.info("speech recognition ready (%s)", Path(self.stt.model_path).name)
            self.sound.load()  # before "loaded": the first pause may need it
            self._load_speech_model()
            self._report.emit(Loaded("whisper"))
        except Exception as exc:  # missing/corrupt model, library failure: keep typing usable
            self._report.error(f"Speech recognition unavailable: {exc}", "whisper")
        early = EarlyTranscription(self.transcriber, self._aborting) if self.transcriber else None
        self.early = early
        while (item := self._take()) is not None:
            if isinstance(item, LanguageSample):
                self._find_language(item.audio)
            elif early is None:
                if item.final:  # no whisper: the utterance cannot be heard (the error was shown)
                    self._report.set_state(State.IDLE)
            elif not item.final:
                self._at_pause(early, item.audio, item.end_sample, item.t_speech_end)
            else:
                self._at_end(early, item)

    def close(self) -> None:
        """After the stt thread has ended: drop whisper and the turn model (freed now)."""
        self.sound.close()
        self.transcriber = self.early = None

    def _load_speech_model(self) -> None:
        if self.vad.speech_model is None:
            return
        try:
            self._speech_model_loaded(SpeechModel(self.vad.speech_model))
        except SpeechModelUnavailable as exc:
            self._report.error(f"Hands-free hears speech in noise less well: {exc}", "vad")

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
        if self._waiting > 0:
            return  # newer audio (or the end) is waiting
        hears = self.sound.ready and self._hands_free()
        sound = self.sound.at_pause(audio) if hears and not self._brain_reads_words() else None
        result = early.at_pause(audio, end_sample, self._language_of(audio))
        if result is not None and (text := self._turn_text(result)):
            pitch_end = self.pitch.ending(audio)
            current = lambda: early.is_current(result)  # noqa: E731
            # kept before the llm thread can see the turn: scored if the words are unsure
            self.sound.keep(end_sample, audio if hears and sound is None else None)
            has_sound = sound is not None
            turn = self.tentative.start(result, text, t_end, end_sample, current, pitch_end, has_sound)
            if sound is not None:  # while the llm thread evaluates the words
                turn.sound_asked = True
                self._end_of_turn.sound_known(scored(turn, sound.result()))

    def _at_end(self, early: EarlyTranscription, heard: Utterance) -> None:
        audio, t_end = heard.audio, heard.t_speech_end
        self.last_utterance = audio
        result = early.final(audio, heard.end_sample, self._language_of(audio))
        self._language = None  # the next utterance finds its own
        r = result
        self._report.emit(events.Transcript(r.text, r.rejected, r.reason, r.prob, r.language))
        if not self.continuation.deliver(heard.ended, lambda: self._turn_of(result, t_end)):
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
                self._report.emit(Notice("wake command not heard; ignored"))
            if not self._answering():
                self._report.set_state(State.IDLE)
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
