"""When a hands-free turn ends: from the words and the silence (issue #15).

The fixed rule ends a turn after a fixed silence (VadConfig.end_silence_ms, 400 ms): too slow
for a finished question, too fast for a thinking pause ("Tell me about… [600 ms] …the moon"
became two turns). The words rule uses the model's probability that the words heard so far are a finished turn
(brain/user_turn.py; read when the tentative turn's prompt is evaluated, at the first pause):

    P >= finished_at  -> short_ms of silence ends the turn
    P <= trailing_at  -> long_ms
    between           -> log-linear between the two

and the voice (ears/prosody.py): words whose last voiced frames stay `hold_at` times above the
pitch where the speaker's statements end (a level, continuing contour, not the fall of a finished
sentence) wait `long_ms`, as trailing words do. That is what tells "What should I cook … for
dinner" from "What should I cook?": the same words. The one exception is a finished question
(P >= finished_at, and whisper heard a "?"): questions end high too (espeak's: 1.03–1.45 times
the floor across six voices, 49 of 54 at or above `hold_at`; bench/prosody.py), and a question
the words find finished is answered soon. The voice outranks the words otherwise because the
words' P moves with the conversation: the same head ("Tell me something interesting.") reads
0.03–0.14 in one conversation and ~0.4 in another, on either side of `finished_at`; a finished
statement said with the voice held up (uptalk) pays for this with `long_ms` of waiting rather
than with a turn cut in two.

Until that probability is known (whisper and the prompt take ~0.2–0.5 s after the pause),
`undecided_ms` applies; without one (a remote brain, a rejected transcript) the fixed rule.
Pure functions and a config; the Segmenter applies the result (`set_end_silence`). Either rule
can end a turn too early; speech again within `continue_ms` of its end continues it
(continuation.py).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

RULES = ("words", "fixed")


@dataclass(frozen=True)
class TurnEndConfig:
    rule: str = "words"  # "words": from the model's end-of-turn probability; "fixed": the VAD's
    short_ms: int = 200
    long_ms: int = 1200
    undecided_ms: int = 800
    finished_at: float = 0.2
    trailing_at: float = 0.001
    hold_at: float = 1.12  # a voice ending this much above where their statements end holds (0: off)
    continue_ms: int = 1500  # speech this soon after a turn ended continues it (0: never)

    def __post_init__(self) -> None:
        if self.rule not in RULES:
            raise ValueError(f"turn end rule must be one of {', '.join(RULES)}, not {self.rule!r}")

    def base_ms(self, fixed_ms: int) -> int:
        """The silence that ends a turn before (or without) a decision from the words."""
        return self.undecided_ms if self.rule == "words" else fixed_ms


def end_silence_ms(
    p: float | None, c: TurnEndConfig, fixed_ms: int, pitch_end: float | None = None, words: str = ""
) -> int:
    """The silence that ends the turn whose `words` have end-of-turn probability `p` and whose
    voice ends at `pitch_end` times the speaker's floor (None: unknown)."""
    if c.rule == "fixed" or p is None:
        return fixed_ms
    held = pitch_end is not None and c.hold_at > 0 and pitch_end >= c.hold_at
    if held and not (p >= c.finished_at and words.rstrip().endswith("?")):
        return c.long_ms
    lo, hi = math.log10(c.trailing_at), math.log10(c.finished_at)
    x = (math.log10(max(p, 1e-12)) - lo) / (hi - lo)
    x = min(1.0, max(0.0, x))
    return round(c.long_ms + x * (c.short_ms - c.long_ms))
