"""The Speaker's output device: one sounddevice stream, opened at the size its OutputBuffer
chose, aborted and closed safely, and its underflow reports told apart (a longer pause before a
sentence, or a hole inside one).

Threads: the Speaker's playback thread opens it, writes to it, aborts it and reports the
underflows; `close()` may also come from the thread that closes the Speaker once the playback
thread is gone (closing one PortAudio stream twice at once aborts the process: the lock makes it
once). `holes` may be read from any thread.
"""

from __future__ import annotations

import logging
import threading
from typing import Any, Final

from app.system.sound_devices import close_stream
from app.voice.output_buffer import OutputBuffer

log = logging.getLogger(__name__)
DRY_INSIDE_FROM: Final = 2  # the first write whose underflow report is a hole in speech (ran_dry)
RAN_DRY: Final = "output underflow"  # the log line's head (tests.support.monkey counts them)


class DeviceOutput:
    def __init__(self, device: int | str | None, latency: float | str, latency_most: float) -> None:
        """`device`: sounddevice's output device; `latency`/`latency_most`: the buffer's
        configured and largest size (output_buffer.py; shared per device)."""
        self.device = device
        self.buffer = OutputBuffer.for_device(device, latency, latency_most)  # grows after a hole
        self.holes = 0  # holes inside sentences so far
        self._stream: Any = None  # sounddevice.OutputStream, opened per reply
        self._lock = threading.Lock()

    def stream_for(self, rate: int) -> Any:
        """Playback thread: the open stream, (re)opened when it is closed, inactive (aborted) or
        at another sample rate (blocks while PortAudio opens it; raises when the device fails)."""
        stream = self._stream
        if stream is None or not stream.active or stream.samplerate != rate:
            self.close()
            self._stream = stream = self._open(rate)
        return stream

    def _open(self, rate: int) -> Any:
        import sounddevice as sd

        stream = sd.OutputStream(
            samplerate=rate, channels=1, dtype="float32", device=self.device, latency=self.buffer.latency
        )
        stream.start()
        log.info("output stream open: %.0f ms of output latency", stream.latency * 1000)
        return stream

    def ran_dry(self, write_index: int) -> bool:
        """Playback thread: a write of the sentence playing (its `write_index`th block) reported
        that the device ran dry; True when that is a hole inside the sentence. PortAudio reports
        a dry spell late: the one before write k comes with write k + 1 (measured on PulseAudio
        at 9-200 ms of latency: the pause between two sentences always comes with the second
        write, a stall after write k with write k + 2). So a report before DRY_INSIDE_FROM is
        the longer pause before this sentence (the next one was not ready: the brain or the
        synthesis was busy), and later ones are holes in speech (the next stream's buffer grows)."""
        if write_index < DRY_INSIDE_FROM:
            log.info("%s: a longer pause before a sentence", RAN_DRY)
            return False
        log.info("%s: a hole inside a sentence", RAN_DRY)
        self.holes += 1
        self.buffer.hole()
        return True

    def abort(self) -> None:
        """Playback thread: silence the stream now, with what its buffer holds (it is reopened
        for the next sentence)."""
        stream = self._stream
        if stream is not None:
            try:
                stream.abort()
            except Exception as exc:  # the device went away
                log.debug("abort: %s", exc)

    def close(self) -> None:
        """Close the stream, once (releases the device; the next `stream_for` opens another)."""
        with self._lock:
            stream, self._stream = self._stream, None
        close_stream(stream, "output")
