"""Silero VAD (MIT; trained on real voices): a speech probability per 32 ms of 16 kHz audio.

The frame classifier (vad.py) asks it about frames above the absolute floor, beside WebRTC's
model and the energy test: WebRTC starts sooner in quiet, Silero still hears speech 5 dB over
pink noise, where the energy test misses about half the onsets (bench/vad.py; docs/turn-taking.md).

`SpeechModel` is the loaded model; each audio stream (the microphone's segmenter) reads it
through its own `SpeechStream`, which keeps the model's recurrent state and context. A missing
or damaged file raises `SpeechModelUnavailable` with what to do; the caller goes on with WebRTC
and the energy test alone.

Threads: `SpeechModel` loads blocking (a worker thread at start-up) and its streams share its
session under a lock; a stream is used by one thread (the microphone's).
"""

from __future__ import annotations

import logging
import threading
import time
from pathlib import Path

import numpy as np

from app.ears.onnx_model import open_checked

log = logging.getLogger(__name__)
RATE = 16000
WINDOW = 512  # samples the model reads per run (32 ms), after CONTEXT samples of the previous one
CONTEXT = 64
SPEECH_AT = 0.5  # P at or above which a window is speech
FETCH = "talk-llama models fetch silero-vad --force"


class SpeechModelUnavailable(RuntimeError):
    """The speech model cannot be used; the message says why and what to do."""


class SpeechModel:
    """Silero VAD v5 through onnxruntime, one intra-op thread that sleeps when idle."""

    def __init__(self, path: Path) -> None:
        started = time.perf_counter()
        self._session = open_checked(path, "vad", "speech model", FETCH, SpeechModelUnavailable)
        names = sorted(i.name for i in self._session.get_inputs())
        if names != ["input", "sr", "state"]:
            raise SpeechModelUnavailable(
                f"{path} is not a Silero VAD v5 model (inputs {names}); fetch it with: {FETCH}"
            )
        self._lock = threading.Lock()
        self.path = Path(path)
        log.info("speech model %s loaded in %.2f s", self.path.name, time.perf_counter() - started)

    def stream(self) -> SpeechStream:
        """A new stream's reader (its own state; one thread)."""
        return SpeechStream(self)

    def run(self, x: np.ndarray, state: np.ndarray) -> tuple[float, np.ndarray]:
        """One window (with its context) -> (P of speech, the next state). Any thread."""
        with self._lock:
            out, state = self._session.run(None, {"input": x, "state": state, "sr": np.array(RATE, np.int64)})
        return float(np.asarray(out).reshape(-1)[0]), state


class SpeechStream:
    """The model's view of one audio stream: feed consecutive samples, read the latest P."""

    def __init__(self, model: SpeechModel) -> None:
        self._model = model
        self.reset()

    def reset(self) -> None:
        """Start afresh (after a gap in the stream: the next sound is a new onset)."""
        self._state = np.zeros((2, 1, 128), np.float32)
        self._context = np.zeros((1, CONTEXT), np.float32)
        self._pending = np.zeros(0, np.float32)
        self.last = 0.0

    def probability(self, samples: np.ndarray) -> float:
        """Feed `samples` (16 kHz mono float); the speech probability of the latest complete
        window (the previous one's while less than a window has come)."""
        self._pending = np.concatenate([self._pending, np.asarray(samples, np.float32)])
        while len(self._pending) >= WINDOW:
            x = np.concatenate([self._context, self._pending[None, :WINDOW]], axis=1)
            self._pending = self._pending[WINDOW:]
            self.last, self._state = self._model.run(x, self._state)
            self._context = x[:, -CONTEXT:]
        return self.last
