"""Microphone: a sounddevice input stream delivered as 16 kHz mono float32.

The device is opened at 16 kHz when it supports it, otherwise at its default rate and resampled
with soxr (streaming, so block edges are seamless). Everything captured goes into a bounded ring
buffer (`ring_s` seconds; memory never grows), which gives push-to-talk its pre-roll: an
utterance starts `preroll_s` before the press. Each block (`block_s`) is also handed to `on_block`
(the hands-free segmenter); levels go to `on_level` (a meter) at most every `level_every_s`
(the loudest block of the interval), only when they changed by 1 dB or a second passed, and not
at all while `levels_enabled` is False (a hidden window): an idle app does not wake its front end
50 times a second.

The callback period (`block_s`) is the main cost of an idle app: PortAudio and the sound server
wake once per block (20 ms: ~2% of a core here, 40 ms: ~1.2%, 100 ms: ~0.5%). `set_block_s()`
changes it (reopening the stream; the ring keeps its contents).

Threads: PortAudio's callback thread calls `on_block`/`on_level`/`on_error`; keep them short.
An exception in them is logged and the stream goes on (PortAudio would stop it silently).
A stream error (device unplugged, stream finished unexpectedly) becomes `on_error(message)` and
the Microphone can be reopened with `open()`. With long blocks (> 50 ms) `stop_utterance()` waits
for the block in flight (at most ~1.5 blocks, never on a dead device).

`silenced` (set from any thread) makes the stream deliver silence instead of what the device
hears: the sound server moved the recording to something that is not a microphone (see
loop.devices). `muted` does the same for the user's Mute (a separate flag: neither reason may
undo the other). Positions keep advancing, so an utterance in progress simply falls silent.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import soxr

from app.system.sound_devices import close_stream
from app.system.thread_names import name_os_thread

log = logging.getLogger(__name__)
RATE = 16000
BLOCK_S = 0.02
WAIT_IN_FLIGHT_S = 0.05  # blocks longer than this are waited for at the end of an utterance


class MicrophoneError(RuntimeError):
    """The microphone cannot be opened; the message says why and what to do."""


@dataclass(frozen=True)
class Level:
    rms: float
    peak: float


@dataclass(frozen=True)
class InputDevice:
    index: int
    name: str
    hostapi: str
    channels: int
    default_rate: float
    is_default: bool


def list_input_devices() -> list[InputDevice]:
    import sounddevice as sd

    try:
        default_in = sd.default.device[0]
        hostapis = sd.query_hostapis()
        return [
            InputDevice(
                i,
                d["name"],
                hostapis[d["hostapi"]]["name"],
                d["max_input_channels"],
                d["default_samplerate"],
                i == default_in,
            )
            for i, d in enumerate(sd.query_devices())
            if d["max_input_channels"] > 0
        ]
    except Exception as exc:  # PortAudio missing/broken
        raise MicrophoneError(f"cannot list audio devices: {exc}") from exc


def resolve_device(spec: int | str | None) -> int | None:
    """Device index for an index, a (case-insensitive, partial) name, or None for the default."""
    if spec is None or spec == "":
        return None
    if isinstance(spec, int) or str(spec).isdigit():
        return int(spec)
    matches = [d for d in list_input_devices() if str(spec).lower() in d.name.lower()]
    if not matches:
        raise MicrophoneError(f"no input device matches {spec!r}; see `talk-llama doctor` for the list")
    return matches[0].index


class Microphone:
    """Captures continuously while open; utterances are slices of the ring buffer."""

    def __init__(
        self,
        device: int | str | None = None,
        ring_s: float = 40.0,
        preroll_s: float = 0.25,
        on_block: Callable[[np.ndarray], None] | None = None,
        on_level: Callable[[Level], None] | None = None,
        on_error: Callable[[str], None] | None = None,
        level_every_s: float = 0.04,
        block_s: float = BLOCK_S,
    ) -> None:
        self.device = device
        self.preroll_s = preroll_s
        self.on_block = on_block
        self.on_level = on_level
        self.on_error = on_error
        self.levels_enabled = True
        self.silenced = False  # deliver zeros: the device now is not a microphone (loop.devices)
        self.muted = False  # deliver zeros: the user muted the microphone (same effect, own reason)
        self.block_s = block_s  # callback period: 20 ms for VAD; push-to-talk can take 40 (half the wake-ups)
        self._level_every = int(level_every_s * RATE)
        self._level_due = 0  # position of the next level report
        self._level_max = Level(0.0, 0.0)
        self._level_sent, self._level_sent_at = Level(0.0, 0.0), 0
        self._ring = np.zeros(int(ring_s * RATE), dtype=np.float32)
        self._written = 0  # total samples ever written (monotonic position)
        self._lock = threading.Lock()
        self._stream: Any = None  # sounddevice.InputStream, imported when opened
        self._resampler: soxr.ResampleStream | None = None
        self._mark: int | None = None
        self._written_cond = threading.Condition(self._lock)
        self._callback_failed = False
        self._callback_thread = 0  # PortAudio's thread that calls `_callback` (named for the OS)
        self.capture_rate = RATE
        self.overflows = 0

    # ----- device --------------------------------------------------------------------------
    def open(self) -> None:
        """Open and start the input stream. Raises MicrophoneError with a clear message."""
        import sounddevice as sd

        self.close()
        try:
            index = resolve_device(self.device)
            info = sd.query_devices(index, "input")
        except (ValueError, sd.PortAudioError) as exc:
            raise MicrophoneError(
                f"no microphone available ({exc}). Plug one in or pick another input device; "
                "typing still works."
            ) from exc
        try:
            sd.check_input_settings(device=index, channels=1, samplerate=RATE, dtype="float32")
            rate = RATE
        except Exception:
            rate = int(info["default_samplerate"])
        self.capture_rate = rate
        self._resampler = None if rate == RATE else soxr.ResampleStream(rate, RATE, 1, dtype="float32")
        try:
            self._stream = sd.InputStream(
                device=index,
                channels=1,
                samplerate=rate,
                dtype="float32",
                blocksize=int(rate * self.block_s),
                callback=self._callback,
                finished_callback=self._finished,
            )
            self._stream.start()
        except Exception as exc:
            self._stream = None
            raise MicrophoneError(f"cannot open microphone {info['name']!r}: {exc}") from exc
        log.info("microphone %r open at %d Hz", info["name"], rate)

    def close(self) -> None:
        stream, self._stream = self._stream, None
        close_stream(stream, "input")

    def set_block_s(self, block_s: float) -> None:
        """Change the callback period; an open stream is reopened (a gap of a few tens of ms).
        Call it from one thread at a time, not from the callback."""
        if abs(block_s - self.block_s) < 1e-6:
            return
        self.block_s = block_s
        if self._stream is not None:
            self.open()

    @property
    def is_open(self) -> bool:
        return self._stream is not None and self._stream.active

    def _finished(self) -> None:
        """PortAudio's thread: the stream ended. Unless close() asked for it, tell the owner."""
        if self._stream is not None and self.on_error:
            self.on_error("the microphone stopped (device unplugged or failed); reopen it in Settings")

    def _callback(self, indata: np.ndarray, frames: int, _time, status) -> None:
        if self._callback_thread != (tid := threading.get_native_id()):  # a stream's first block
            self._callback_thread = tid
            name_os_thread("mic-callback")  # hands-free, the VAD and echo guard run here
        if status and status.input_overflow:
            self.overflows += 1
        mono = indata[:, 0]
        if self.silenced or self.muted:
            mono = np.zeros_like(mono)
        try:
            block = self._resampler.resample_chunk(mono) if self._resampler else mono.copy()
            self.write(block)
        except Exception:  # a bug downstream must not end the stream without a word
            if not self._callback_failed:
                log.exception("microphone block handling failed; capture goes on")
            self._callback_failed = True

    def write(self, block: np.ndarray) -> None:
        """Append 16 kHz samples (the stream's callback does this; tests may too)."""
        n = len(block)
        if n == 0:
            return
        with self._lock:
            cap = len(self._ring)
            if n >= cap:
                block, n = block[-cap:], cap
            start = self._written % cap
            first = min(n, cap - start)
            self._ring[start : start + first] = block[:first]
            self._ring[: n - first] = block[first:]
            self._written += n
            self._written_cond.notify_all()
        if self.on_level and self.levels_enabled:
            self._report_level(block)
        if self.on_block:
            self.on_block(block)

    def _report_level(self, block: np.ndarray) -> None:
        """The interval's loudest block, when it differs by >= 1 dB from the last report (or a
        second has passed): a steady room tone wakes nobody."""
        rms, peak = float(np.sqrt(np.mean(block**2))), float(np.max(np.abs(block)))
        m = self._level_max
        self._level_max = Level(max(m.rms, rms), max(m.peak, peak))
        if self._written < self._level_due:
            return
        level, self._level_max = self._level_max, Level(0.0, 0.0)
        self._level_due = self._written + self._level_every
        change_db = abs(20 * np.log10(max(level.rms, 1e-6) / max(self._level_sent.rms, 1e-6)))
        if change_db >= 1.0 or self._written - self._level_sent_at >= RATE:
            self._level_sent, self._level_sent_at = level, self._written
            if self.on_level is not None:
                self.on_level(level)

    # ----- utterances -----------------------------------------------------------------------
    @property
    def position(self) -> int:
        return self._written

    def read(self, start: int, end: int | None = None) -> np.ndarray:
        """Samples between absolute positions (clamped to what the ring still holds)."""
        with self._lock:
            end = self._written if end is None else min(end, self._written)
            start = max(start, self._written - len(self._ring), 0)
            if end <= start:
                return np.zeros(0, dtype=np.float32)
            cap = len(self._ring)
            idx = np.arange(start, end) % cap
            return self._ring[idx].copy()

    def start_utterance(self) -> None:
        """Push-to-talk pressed: the utterance begins `preroll_s` before now."""
        self._mark = max(0, self._written - int(self.preroll_s * RATE))

    def stop_utterance(self) -> np.ndarray:
        """Push-to-talk released: the utterance's samples (empty if none was started).

        With long blocks, first wait (at most 1.5 blocks) for the block being captured now: its
        audio can hold the end of the last word. Short blocks are not worth the latency."""
        if self._mark is None:
            return np.zeros(0, dtype=np.float32)
        mark, self._mark = self._mark, None
        if self.block_s > WAIT_IN_FLIGHT_S and self.is_open:
            with self._lock:
                target = self._written + 1
                self._written_cond.wait_for(lambda: self._written >= target, timeout=self.block_s * 1.5)
        return self.read(mark)

    @property
    def utterance_start(self) -> int | None:
        """Absolute sample position where the current utterance begins (None when idle)."""
        return self._mark

    @property
    def utterance_s(self) -> float:
        return 0.0 if self._mark is None else (self._written - self._mark) / RATE
