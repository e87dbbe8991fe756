"""The assistant's microphone device: opened at start, its callback period chosen by need, mute
and level updates kept across a reopen.

The period is the main cost of an idle app (ears.microphone): 40 ms while someone uses the audio
as it comes (the hands-free segmenter, a level meter at 25 Hz), 100 ms when nothing watches it
live (push-to-talk only needs the ring). It never changes while an utterance is being held (a
reopen would leave a gap mid-word).

Threads: `open`/`close` run on the assistant's lifecycle thread; `set_muted`,
`set_level_updates` and `apply_period` on one front-end thread; `mic` is read from any thread
(None when there is no working microphone: the error was reported).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from app.ears.microphone import Level, Microphone, MicrophoneError
from app.loop.assistant_config import AssistantConfig

LIVE_BLOCK_S = 0.04  # microphone period when the audio is used as it comes (segmenter, meter)
SLOW_BLOCK_S = 0.1  # ... and when nothing watches it live (push-to-talk, window hidden)


class MicControl:
    def __init__(
        self,
        config: AssistantConfig,
        on_block: Callable[[np.ndarray], None],
        on_level: Callable[[Level], None],
        on_error: Callable[[str], None],
        report: Callable[[str, str], None],
    ) -> None:
        """`on_block`, `on_level`, `on_error`: the Microphone's callbacks (audio thread);
        `report(message, source)`: how a failure to open is told."""
        self.config = config
        self._on_block, self._on_level, self._on_error, self._report = on_block, on_level, on_error, report
        self.mic: Microphone | None = None
        self.levels_wanted = True
        self.muted = False

    def open(self) -> None:
        """Open the configured input (blocking, ~50 ms); a failure is reported, not raised."""
        if not self.config.use_microphone:
            return
        vad = self.config.vad
        mic = Microphone(
            self.config.input_device,
            ring_s=vad.max_utterance_s + 10,
            preroll_s=vad.preroll_ms / 1000,
            on_block=self._on_block,
            on_level=self._on_level,
            on_error=self._on_error,
            block_s=self.period(),
        )
        mic.levels_enabled = self.levels_wanted
        mic.muted = self.muted
        try:
            mic.open()
        except MicrophoneError as exc:
            self._report(str(exc), "microphone")
            return
        self.mic = mic

    def close(self) -> None:
        if self.mic is not None:
            self.mic.close()

    def set_muted(self, muted: bool) -> None:
        """The microphone delivers silence while muted (an utterance in progress ends with the
        words before; nothing is heard until unmuted); kept across a reopen. Any thread."""
        self.muted = muted
        if self.mic is not None:
            self.mic.muted = muted

    def set_level_updates(self, enabled: bool, listening: bool) -> None:
        """Whether level callbacks are wanted; may reopen the microphone (not while `listening`)."""
        self.levels_wanted = enabled
        if self.mic is not None:
            self.mic.levels_enabled = enabled
            self.apply_period(listening)

    def period(self) -> float:
        return LIVE_BLOCK_S if self.config.hands_free or self.levels_wanted else SLOW_BLOCK_S

    def apply_period(self, listening: bool) -> None:
        """Apply the wanted period, unless an utterance is being held (`listening`)."""
        if self.mic is not None and not listening:
            try:
                self.mic.set_block_s(self.period())
            except MicrophoneError as exc:
                self.mic = None
                self._report(str(exc), "microphone")
