"""When a hands-free turn ends: from the words and the silence (issue #15).

The fixed rule ends a turn after a fixed silence (VadConfig.end_silence_ms, 400 ms): too slow
for a finished question, too fast for a thinking pause ("Tell me about… [600 ms] …the moon"
became two turns). The words rule uses the model's probability that the words heard so far are a finished turn
(brain/user_turn.py; read when the tentative turn's prompt is evaluated, at the first pause):

    P >= finished_at  -> short_ms of silence ends the turn
    P <= trailing_at  -> long_ms
    between           -> log-linear between the two

and the sound (ears/turn_model.py, Smart Turn v3.2, trained on people's speech): its P that the
utterance so far is a finished turn, heard at the pause, maps linearly onto the same 0..1 scale.
Beside the words the sound only holds a turn it clearly hears unfinished (P below
`audio_finished_beside_words`, 0.1; the model's own decision point is 0.5): the words already
tell most trailing heads from finished questions, and Smart Turn hears voices unlike those it
learnt from as unfinished (espeak-ng's complete questions read 0.01-0.98). Alone (a server
brain without the local words reader, brain/words_reader.py) it maps between
`audio_trailing_at` and `audio_finished_at`. `combine` joins
the two: "both" (the default) waits unless the words *and* the sound are finished (the smaller
of the two positions), "either" the larger, "mean" their mean, "audio" the sound alone, "words"
the words alone.

With "both" the sound is asked only where it can change the answer and the words are unsure
(`sound_counts`): not for words that trail off (P <= `trailing_at`: the long silence whatever
the sound), nor from `words_sure_at` (0.12) up. Below it the words wait at least ~460 ms, so the
sound's answer (~50-130 ms after the words' P) and the reply's speculative generation, one
thread slower while it scores, fit within the wait. Above it they do not: asked up to the
words' top (0.15), it delayed "How do I make a cup of tea?" (P 0.146, a 235 ms wait) by ~65 ms
in every voice family (bench/latency). On the clips of bench/turn_rules (6 voices, 144 paused
heads) asking it up to P 0.5 changed no paused utterance's outcome and made complete questions
wait for it; on two cores it slows whisper or the prompt beside it by its own ~50 ms, so it is
never asked beside them.

The voice (ears/prosody.py) counts only when the words are not read (that server): words
whose last voiced frames stay `hold_at` times above the pitch where the speaker's statements end
(a level, continuing contour, not the fall of a finished sentence) wait `long_ms`, unless the
sound finds them finished and whisper heard a "?" (questions end high too). Beside the words'
P it adds only waiting: the natural voice ends complete statements 1.1-1.5 times its floor, as
thinking pauses end. Chosen by bench/turn_rules.py (docs/architecture.md, "Turn-taking", has
the numbers).

Until that probability is known (whisper and the prompt take ~0.2–0.5 s after the pause),
`undecided_ms` applies; without either (no turn model and such a server, a rejected
transcript) the fixed rule.
Pure functions and a config; the Segmenter applies the result (`set_end_silence`). Either rule
can end a turn too early; speech again within `continue_ms` of its end continues it
(continuation.py).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

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


def words_finished(p: float, c: TurnEndConfig) -> float:
    """How finished the words are on 0..1: log-linear between `trailing_at` and `finished_at`."""
    lo, hi = math.log10(c.trailing_at), math.log10(c.finished_at)
    return min(1.0, max(0.0, (math.log10(max(p, 1e-12)) - lo) / (hi - lo)))


def audio_finished(p: float, c: TurnEndConfig, beside_words: bool = False) -> float:
    """How finished the sound is on 0..1: linear between the audio thresholds (those for the
    sound beside the words' P when `beside_words`)."""
    if beside_words:
        lo, hi = c.audio_trailing_beside_words, c.audio_finished_beside_words
    else:
        lo, hi = c.audio_trailing_at, c.audio_finished_at
    x = (p - lo) / (hi - lo)
    return min(1.0, max(0.0, x))


def sound_counts(p: float | None, c: TurnEndConfig) -> bool:
    """Whether the audio turn model's P is part of the decision for words whose end-of-turn
    probability is `p` (None: no language model reads them): see the module docstring."""
    if c.rule == "fixed" or c.combine == "words":
        return False
    if p is None or c.combine != "both":
        return True
    return c.trailing_at < p < c.words_sure_at


def end_silence_ms(
    p: float | None,
    c: TurnEndConfig,
    fixed_ms: int,
    pitch_end: float | None = None,
    words: str = "",
    audio: float | None = None,
) -> int:
    """The silence that ends the turn whose `words` have end-of-turn probability `p` (None: no
    language model reads them), whose voice ends at `pitch_end` times the speaker's floor and
    whose sound the audio turn model finds finished with probability `audio` (None: unknown)."""
    if c.rule == "fixed":
        return fixed_ms
    use_audio = audio is not None and sound_counts(p, c)
    if p is None and not use_audio:
        return fixed_ms
    if p is None and pitch_end is not None and c.hold_at > 0 and pitch_end >= c.hold_at:
        # a held voice waits, unless the sound finds it finished and whisper heard a question
        sound_done = audio is not None and audio >= c.audio_finished_at
        if not (sound_done and words.rstrip().endswith("?")):
            return c.long_ms
    xs = []
    if p is not None and c.combine != "audio":
        xs.append(words_finished(p, c))
    if use_audio and audio is not None:
        xs.append(audio_finished(audio, c, beside_words=p is not None and c.combine != "audio"))
    if not xs:  # "audio" without its model's answer: the words alone
        xs.append(words_finished(p, c) if p is not None else 0.0)
    if c.combine == "both":
        x = min(xs)
    elif c.combine == "either":
        x = max(xs)
    else:
        x = sum(xs) / len(xs)
    return round(c.long_ms + x * (c.short_ms - c.long_ms))
