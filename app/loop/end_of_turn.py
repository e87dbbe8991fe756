"""The silence that ends a hands-free turn, decided once per tentative turn from what is known
of it: its words' end-of-turn probability (read by the brain), the voice's last pitch, and, when
the rule wants it for those words, the audio turn model's verdict. The rule is the config's
(turn_end.rule_for); this object gathers the signals as they arrive from three threads and sets
the segmenter's end silence once.

Threads: `words_known` and `brain_loaded` on the llm thread; the sound arrives on the turn
model's worker (or the stt thread, `sound_known`). A reentrant lock: a score that is already
done runs its callback on the thread that asked for it.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

from app.brain.brain import Brain
from app.ears.vad import Segmenter
from app.loop.assistant_config import AssistantConfig
from app.loop.sound_scorer import SoundScorer
from app.loop.turn import Turn
from app.loop.turn_end import Signals, TurnEndRule, rule_for

log = logging.getLogger(__name__)


class EndOfTurn:
    def __init__(
        self,
        config: Callable[[], AssistantConfig],
        segmenter: Segmenter,
        sound: SoundScorer,
        listening: Callable[[], bool],
    ) -> None:
        """`config()`: the assistant's current settings; `listening()`: push-to-talk is held
        (the release, not a silence, then ends the turn)."""
        self._config = config
        self._segmenter = segmenter
        self._sound = sound
        self._listening = listening
        self._deciding = threading.RLock()

    def brain_loaded(self, brain: Brain) -> None:
        """llm thread: a brain that reads no end-of-turn probability (a server without the local
        words reader, brain/words_reader.py) gets the fixed silence rule until the audio turn
        model answers at a pause."""
        if not brain.reads_end_of_turn:
            self._segmenter.base_end_ms = self._config().vad.end_silence_ms

    def words_known(self, turn: Turn) -> None:
        """llm thread: a tentative turn's words are evaluated (their end-of-turn probability, or
        None from a server without the words reader)."""
        self._decide(turn)

    def sound_known(self, turn: Turn) -> None:
        """stt thread or the turn model's: the tentative turn's audio is scored."""
        self._decide(turn)

    def _decide(self, turn: Turn) -> None:
        """Once the words and (when it counts for them) the sound are known, they set the
        silence that ends this utterance. The sound is asked for once, the silence decided once."""
        with self._deciding:
            if turn.audio_pending or "end_of_turn" not in turn.stamps or turn.end_silence_ms is not None:
                return
            if not turn.sound_asked and self._rule().wants_sound(turn.end_of_turn):
                turn.sound_asked = turn.audio_pending = True
                if self._sound.score(turn, self.sound_known):
                    return  # decided when the sound is known
                turn.audio_pending = False  # no turn model (or the turn is gone): the words alone
            self._set_end_silence(turn)

    def _rule(self) -> TurnEndRule:
        c = self._config()
        return rule_for(c.turn_end, c.vad.end_silence_ms)

    def _set_end_silence(self, turn: Turn) -> None:
        ms = self._rule().silence_ms(Signals(turn.end_of_turn, turn.pitch_end, turn.text, turn.audio_end))
        turn.end_silence_ms = ms
        if not self._listening():  # push-to-talk: the release ends the turn
            self._segmenter.set_end_silence(ms, turn.end_sample)
        log.debug(
            "end of turn: P=%s, pitch %s, audio %s -> %d ms of silence",
            turn.end_of_turn,
            turn.pitch_end,
            turn.audio_end,
            ms,
        )
