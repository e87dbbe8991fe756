"""The hands-free barge-in path without the language model, on the real virtual devices.

`EchoRig` wires the real Speaker, Microphone (40 ms blocks), EchoGuard and Segmenter the way
`loop.assistant` does: each microphone block goes through the guard; a barge-in stops the
speaker; the guard's audio feeds the segmenter (with the default speech model beside WebRTC's,
as the app's), whose utterances are collected. Used by
`bench/bargein.py` and `tests/test_bargein.py`. `room(audio, db)` adds a loopback from the
virtual speaker into the microphone (a speaker in a room) at `db`, or none for a headset.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Iterator

import numpy as np

from app.catalog.catalog import default_model_path
from app.ears.echo import EchoConfig, EchoGuard
from app.ears.microphone import Microphone
from app.ears.silero import SpeechModel
from app.ears.vad import RATE, Segmenter, SegmentEvent, VadConfig
from app.voice.speaker import Speaker, SpeakerConfig, SpeakerEvent
from tests.support.pulse import VirtualAudio


class EchoRig:
    def __init__(self, config: EchoConfig | None = None, voice: str | None = None) -> None:
        """`voice`: the Speaker's (voices.py; None: the app's default, the natural voice)."""
        self.guard = EchoGuard(config)
        self.started = threading.Event()
        # A fixed 50 ms buffer: the rig studies the guard at the default size (one that grew after
        # a hole would hide the underflows a late-thread test makes on purpose).
        config = SpeakerConfig(voice=voice, latency=0.05, latency_most=0.05)
        self.speaker = Speaker(config, on_event=self._on_speaker)
        self.guard.hear_speaker(self.speaker)
        self.segmenter = Segmenter(VadConfig())
        self.segmenter.hear_with(SpeechModel(default_model_path("vad")))
        self.mic = Microphone(block_s=0.04, on_block=self._on_block)
        self.barges: list[tuple[int, float]] = []  # (microphone position, monotonic time)
        self.utterances: list[np.ndarray] = []
        self.got_utterance = threading.Event()
        self.mic.open()

    def _on_speaker(self, ev: SpeakerEvent) -> None:
        if ev.kind == "sentence_started":
            self.started.set()
        elif ev.kind == "queue_empty":
            self.guard.playback_stopped()

    def _on_block(self, block: np.ndarray) -> None:
        verdict = self.guard.mic_block(block, self.segmenter.in_speech)
        if verdict.barge and self.speaker.busy:
            self.barges.append((self.mic.position, time.monotonic()))
            self.speaker.stop()
            self.guard.playback_stopped()
        if verdict.audio is not None:
            for ev in self.segmenter.feed(verdict.audio):
                self._on_segment(ev)
        else:
            self.segmenter.reset()

    def _on_segment(self, ev: SegmentEvent) -> None:
        if ev.kind in ("utterance", "capped"):
            self.utterances.append(ev.audio)
            self.got_utterance.set()

    def say(self, sentences: list[str]) -> None:
        self.started.clear()
        for s in sentences:
            self.speaker.say(s)

    def quiet(self, timeout: float = 30.0) -> None:
        """Wait until nothing plays and the guard's gate is open again."""
        self.speaker.wait(timeout)
        deadline = time.monotonic() + timeout
        while self.guard.gated and time.monotonic() < deadline:
            time.sleep(0.02)

    def close(self) -> None:
        self.mic.close()
        self.speaker.close()


def onset_position(captured: np.ndarray, start: int, utterance: np.ndarray) -> int | None:
    """Where `utterance`'s first sound sits in the capture (absolute mic position), found by
    normalized cross-correlation of its first 300 ms of sound; None when it is not there."""
    onset = int(np.nonzero(np.abs(utterance) > 0.02 * np.abs(utterance).max())[0][0])
    head = utterance[onset : onset + int(0.3 * RATE)]
    if len(captured) < len(head):
        return None
    windows = np.lib.stride_tricks.sliding_window_view(captured, len(head))[::4]
    ncc = windows @ head / (np.linalg.norm(windows, axis=1) * np.linalg.norm(head) + 1e-9)
    best = int(ncc.argmax())
    return start + best * 4 if ncc[best] > 0.5 else None


@contextlib.contextmanager
def room(audio: VirtualAudio, db: float | None, drift: bool = False) -> Iterator[None]:
    """A loopback speaker -> microphone at `db` (None: no echo path, like a headset).

    By default the speaker and the microphone share one clock, as a computer's own sound card
    does: the echo's delay stays fixed (module-loopback's rate adjustment off). `drift=True`
    leaves PulseAudio adjusting the loopback's rate to hold its latency, which moves the echo's
    delay by ~1 ms every 8 s, like a microphone and a speaker on two devices (a USB microphone,
    HDMI speakers): too fast for the linear canceller to follow (docs/barge-in.md: the echo guard)."""
    if db is None:
        yield
        return
    adjust = [] if drift else ["adjust_time=0"]
    module = audio.pactl(
        "load-module", "module-loopback", "source=speaker.monitor", "sink=micfeed", "latency_msec=30", *adjust
    ).strip()
    try:
        inputs = [
            line.split("\t")[0]
            for line in audio.pactl("list", "short", "sink-inputs").splitlines()
            if "module-loopback" in line
        ]
        assert len(inputs) == 1, inputs
        audio.pactl("set-sink-input-volume", inputs[0], f"{db}dB")
        yield
    finally:
        audio.pactl("unload-module", module)
