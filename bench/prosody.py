"""How the voice ends, across voices (issue #15): does the pitch rule tell a pause mid-sentence
from a finished statement in voices it was not tuned on?

For each espeak-ng voice, `FinalPitch` learns where the voice's statements end from the 12
PHRASES (questions left out, as the app does), then reads the pitch at the pause of the 12
PAUSED utterances said `through` (one sentence with a 700 ms break: the voice stays up) and
`apart` (the head said alone: it ends like a finished sentence), and at the end of held-out
statements (STT_EXTRA), and at the end of the questions of both lists (they end high too:
why a finished question is the one exception to a held voice, loop/turn_end.py). Reported:
each group's range and how many reach `TurnEndConfig.hold_at` (held: should be all; apart and
statements: should be none; questions: how many the voice alone would hold). No audio
devices, no models; ~30 s. The threshold was chosen on en-us; the other voices are held out.
Run: .venv/bin/python -m bench.prosody
"""

from __future__ import annotations

import numpy as np

from bench.common import emit
from tests.support.phrases import PAUSED, PHRASES, STT_EXTRA
from tests.support.speech import before_pause, speak_16k, spoken_through, until_quiet

VOICES = ("en-us", "en-gb", "en-gb-scotland", "en-029", "en-gb-x-rp", "en-us+f3")
PAUSE_S = 0.7


def _group(values: list[float | None], hold_at: float) -> dict:
    known = [v for v in values if v is not None]
    return {
        "min": round(min(known), 2),
        "max": round(max(known), 2),
        "held": sum(v >= hold_at for v in known),
        "n": len(values),
        "unknown": len(values) - len(known),
    }


def main() -> None:
    from app.ears.prosody import FinalPitch
    from app.loop.turn_end import TurnEndConfig

    hold_at = TurnEndConfig().hold_at
    statements = [p for p in STT_EXTRA if not p.endswith("?")]
    questions = [p for p in PHRASES + STT_EXTRA if p.endswith("?")]
    voices = {}
    for voice in VOICES:
        ends = FinalPitch()
        for p in PHRASES:
            ends.learn(np.concatenate([speak_16k(p, voice), np.zeros(8000, np.float32)]), p)
        through = [
            ends.ending(before_pause(speak_16k(spoken_through(h, t, PAUSE_S), voice), PAUSE_S))
            for h, t in PAUSED
        ]
        apart = [ends.ending(until_quiet(speak_16k(h, voice), 0.02)) for h, _ in PAUSED]
        finished = [ends.ending(until_quiet(speak_16k(p, voice), 0.02)) for p in statements]
        asked = [ends.ending(until_quiet(speak_16k(p, voice), 0.02)) for p in questions]
        voices[voice] = {
            "reference_hz": round(ends.reference or 0.0, 1),
            "through": _group(through, hold_at),
            "apart": _group(apart, hold_at),
            "statements": _group(finished, hold_at),
            "questions": _group(asked, hold_at),
        }
    emit("prosody", {"hold_at": hold_at, "voices": voices})


if __name__ == "__main__":
    main()
