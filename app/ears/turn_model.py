"""The audio turn model: how likely the speaker has finished their turn, heard from the sound of
the utterance itself (intonation, pace, a trailing "um"), not from its words.

Smart Turn v3.2 (pipecat-ai's, BSD-2-Clause; trained on human speech in 23 languages): whisper's
log-mel features (log_mel.py) of the last 8 s of 16 kHz audio, zero-padded at the front and
normalised to zero mean and unit variance as in its training, in; the probability that the turn
is complete, out. One run took 70–130 ms here with both cores busy (bench/turn_rules). The
model file comes from the catalog (`smart-turn`); a missing or damaged file raises
`TurnModelUnavailable` with what to do, and the caller goes on without it.

Blocking; one thread at a time (the transcriber's thread in the loop).
"""

from __future__ import annotations

import logging
import time
from pathlib import Path

import numpy as np

from app.ears.log_mel import RATE, log_mel
from app.ears.onnx_model import open_checked

log = logging.getLogger(__name__)
WINDOW_S = 8  # the model reads the last 8 s
INPUT = "input_features"
FETCH = "talk-llama models fetch smart-turn --force"


class TurnModelUnavailable(RuntimeError):
    """The turn model cannot be used; the message says why and what to do."""


class TurnModel:
    """See the module docstring."""

    def __init__(self, path: Path) -> None:
        started = time.perf_counter()
        self._session = open_checked(path, "turn", "turn model", FETCH, TurnModelUnavailable)
        inputs = {i.name: i.shape for i in self._session.get_inputs()}
        if list(inputs.get(INPUT, []))[1:] != [80, WINDOW_S * 100]:
            raise TurnModelUnavailable(
                f"{path} is not a Smart Turn v3 model (inputs {inputs}); fetch the right one with: {FETCH}"
            )
        self.path = Path(path)
        log.info("turn model %s loaded in %.2f s", self.path.name, time.perf_counter() - started)

    def probability(self, audio: np.ndarray) -> float:
        """P(the turn is complete) for 16 kHz mono float `audio` ending where the speaker is now
        silent (or paused). Empty audio reads as silence."""
        n = WINDOW_S * RATE
        x = np.zeros(n, np.float32)
        tail = np.asarray(audio, dtype=np.float32)[-n:]
        if tail.size:
            x[n - tail.size :] = tail
        x = (x - x.mean()) / np.sqrt(x.var() + 1e-7)
        features = log_mel(x)[None, :, :]
        out = self._session.run(None, {INPUT: features})[0]
        return float(np.clip(np.asarray(out).reshape(-1)[0], 0.0, 1.0))
