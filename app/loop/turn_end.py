"""When a hands-free turn ends: the silence after the words, chosen per turn by a rule.

A rule is a small object chosen by config (`rule_for`): it says how long a silence ends a turn
before anything is known of it (`undecided_ms`), whether the audio turn model's verdict counts
for words of a given end-of-turn probability (`wants_sound`), and the silence once the signals
are in (`silence_ms`). The signals of a turn (`Signals`): the words' end-of-turn probability
read by the brain (brain/user_turn.py; None when no model reads them), the voice's last pitch
over the speaker's floor (ears/prosody.py), whisper's text, and the audio turn model's
probability that the utterance sounds finished (ears/turn_model.py; None when not known).

- `FixedSilence`: the VAD's silence (VadConfig.end_silence_ms), always.
- `FromSignals`: each signal is mapped onto "how finished" on 0..1 (the words log-linear between
  `trailing_at` and `finished_at`; the sound linear between its thresholds, stricter beside the
  words), the positions are joined (`combine`: "words" or "audio" alone, "both" the smaller,
  "either" the larger, "mean" their mean), and 0..1 maps onto `long_ms`..`short_ms`. With
  "both" the sound is asked only where it can change the answer: for unsure words
  (`trailing_at` < P < `words_sure_at`). Without the words' P a voice held high (`hold_at`
  times its floor) waits `long_ms`, unless the sound finds it finished and whisper heard a "?".

Why these rules and thresholds, with the measurements: docs/turn-taking.md.
Pure objects; the Segmenter applies the result (`set_end_silence`, end_of_turn.py).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

RULES = ("words", "fixed")
COMBINES = ("words", "audio", "both", "either", "mean")


@dataclass(frozen=True)
class TurnEndConfig:
    rule: str = "words"  # "words": from the model's end-of-turn probability; "fixed": the VAD's
    short_ms: int = 200
    long_ms: int = 1500
    undecided_ms: int = 800
    finished_at: float = 0.15
    trailing_at: float = 0.05
    words_sure_at: float = 0.12  # "both": from here the words decide without the sound
    hold_at: float = 1.12  # without the words' P: a voice ending this much above its floor holds (0: off)
    continue_ms: int = 1500  # speech this soon after a turn ended continues it (0: never)
    combine: str = "both"  # how the audio turn model's P joins the words' (COMBINES)
    audio_finished_at: float = 0.5  # alone: the audio model's P from which the sound says "finished"
    audio_trailing_at: float = 0.1  # ... and up to which it says "not finished"
    audio_finished_beside_words: float = 0.1  # the same two beside the words' P
    audio_trailing_beside_words: float = 0.01

    def __post_init__(self) -> None:
        if self.rule not in RULES:
            raise ValueError(f"turn end rule must be one of {', '.join(RULES)}, not {self.rule!r}")
        if self.combine not in COMBINES:
            raise ValueError(f"turn end combine must be one of {', '.join(COMBINES)}, not {self.combine!r}")

    def base_ms(self, fixed_ms: int) -> int:
        """The silence that ends a turn before (or without) a decision from the words."""
        return self.undecided_ms if self.rule == "words" else fixed_ms


@dataclass(frozen=True)
class Signals:
    """What is known of a tentative turn at its pause (None: not known)."""

    words_p: float | None = None
    pitch_end: float | None = None
    text: str = ""
    sound_p: float | None = None


class TurnEndRule(Protocol):
    def undecided_ms(self) -> int: ...

    def wants_sound(self, words_p: float | None) -> bool: ...

    def silence_ms(self, s: Signals) -> int: ...


@dataclass(frozen=True)
class FixedSilence:
    """The VAD's fixed silence ends every turn; nothing else is asked."""

    fixed_ms: int

    def undecided_ms(self) -> int:
        return self.fixed_ms

    def wants_sound(self, words_p: float | None) -> bool:
        return False

    def silence_ms(self, s: Signals) -> int:
        return self.fixed_ms


def _mean(xs: list[float]) -> float:
    return sum(xs) / len(xs)


# "words" and "audio" join one position (the words' or the sound's): its mean is itself
JOIN: dict[str, Callable[[list[float]], float]] = {
    "both": min,
    "either": max,
    "mean": _mean,
    "words": _mean,
    "audio": _mean,
}


@dataclass(frozen=True)
class FromSignals:
    """The words, the sound and the voice, joined as `c.combine` says (module docstring)."""

    c: TurnEndConfig
    fixed_ms: int  # without any signal

    def undecided_ms(self) -> int:
        return self.c.undecided_ms

    def wants_sound(self, words_p: float | None) -> bool:
        c = self.c
        if c.combine == "words":
            return False
        if words_p is None or c.combine != "both":
            return True
        return c.trailing_at < words_p < c.words_sure_at

    def silence_ms(self, s: Signals) -> int:
        c, p = self.c, s.words_p
        sound = s.sound_p if s.sound_p is not None and self.wants_sound(p) else None
        if p is None and sound is None:
            return self.fixed_ms
        if p is None and self._voice_held(s):
            return c.long_ms
        xs = []
        if p is not None and c.combine != "audio":
            xs.append(self.words_finished(p))
        if sound is not None:
            xs.append(self.sound_finished(sound, beside_words=p is not None and c.combine != "audio"))
        if not xs:  # "audio" without its model's answer: the words alone
            xs.append(self.words_finished(p) if p is not None else 0.0)
        x = JOIN[c.combine](xs)
        return round(c.long_ms + x * (c.short_ms - c.long_ms))

    def words_finished(self, p: float) -> float:
        """How finished the words are on 0..1: log-linear between `trailing_at` and `finished_at`."""
        lo, hi = math.log10(self.c.trailing_at), math.log10(self.c.finished_at)
        return min(1.0, max(0.0, (math.log10(max(p, 1e-12)) - lo) / (hi - lo)))

    def sound_finished(self, p: float, beside_words: bool = False) -> float:
        """How finished the sound is on 0..1: linear between the audio thresholds (those for the
        sound beside the words' P when `beside_words`)."""
        c = self.c
        if beside_words:
            lo, hi = c.audio_trailing_beside_words, c.audio_finished_beside_words
        else:
            lo, hi = c.audio_trailing_at, c.audio_finished_at
        return min(1.0, max(0.0, (p - lo) / (hi - lo)))

    def _voice_held(self, s: Signals) -> bool:
        """No words' P and a voice ending high: it waits, unless the sound finds it finished and
        whisper heard a question."""
        c = self.c
        if s.pitch_end is None or c.hold_at <= 0 or s.pitch_end < c.hold_at:
            return False
        sound_done = s.sound_p is not None and s.sound_p >= c.audio_finished_at
        return not (sound_done and s.text.rstrip().endswith("?"))


def rule_for(c: TurnEndConfig, fixed_ms: int) -> TurnEndRule:
    """The rule `c` chooses; `fixed_ms`: the VAD's silence (the fixed rule's, and the fallback)."""
    return FixedSilence(fixed_ms) if c.rule == "fixed" else FromSignals(c, fixed_ms)


def sound_counts(p: float | None, c: TurnEndConfig) -> bool:
    """Whether the audio turn model's P is part of the decision for words of end-of-turn
    probability `p` (None: no language model reads them)."""
    return rule_for(c, 0).wants_sound(p)


def end_silence_ms(
    p: float | None,
    c: TurnEndConfig,
    fixed_ms: int,
    pitch_end: float | None = None,
    words: str = "",
    audio: float | None = None,
) -> int:
    """The silence that ends a turn with these signals under the rule `c` chooses."""
    return rule_for(c, fixed_ms).silence_ms(Signals(p, pitch_end, words, audio))
