"""What the assistant does when the microphone or the speaker goes away mid-use, and comes back.

The sound server reports it (`app.system.pulse_watch`); this module decides what it means for a
conversation and says it in words, as `device` events {direction, change, message}:
- microphone lost, our recording moved to a monitor (no other microphone): the Microphone is
  silenced (it delivers silence, so an utterance in progress ends as a turn with the words
  spoken before the loss: nothing is lost, and the monitor's sound never becomes a turn);
  moved to another microphone: listening goes on there, and the user is told;
- microphone back: listening resumes on it, without a restart;
- speaker lost: the reply being spoken goes on as text only (`on_voice_lost`); the next reply
  speaks on whatever output the server offers then;
- speaker back: said.

Threads: `on_change` runs on the watcher's thread; the callbacks it uses must be thread-safe
(the assistant's are).
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from app.ears.microphone import Microphone
from app.loop.events import DeviceChanged, Event
from app.system.pulse_watch import DeviceChange, PulseWatch

log = logging.getLogger(__name__)


class DeviceFaults:
    """Owns the PulseWatch; `start()` after the devices open, `close()` at shutdown."""

    def __init__(
        self,
        mic: Callable[[], Microphone | None],
        on_voice_lost: Callable[[], bool],
        emit: Callable[[Event], None],
    ) -> None:
        """`mic()`: the open Microphone (or None); `on_voice_lost()`: stop speaking the current
        reply, True if something was being spoken; `emit`: the assistant's event sink."""
        self._mic = mic
        self._on_voice_lost = on_voice_lost
        self._emit = emit
        self._watch = PulseWatch(self.on_change)

    def start(self) -> bool:
        return self._watch.start()

    def close(self) -> None:
        self._watch.close()

    def on_change(self, change: DeviceChange) -> None:
        name = change.device.description
        if change.direction == "input":
            message = self._input_changed(change, name)
        elif change.change == "lost":
            cut = self._on_voice_lost()
            message = f"The speaker “{name}” was disconnected" + (
                "; the rest of this reply is shown, not spoken." if cut else "."
            )
        else:
            message = f"The speaker “{name}” is back."
        self._emit(DeviceChanged(change.direction, change.change, message))

    def _input_changed(self, change: DeviceChange, name: str) -> str:
        hears = change.hears_microphone
        mic = self._mic()
        if mic is not None:
            mic.silenced = not hears
        if change.change == "back":
            if hears:
                return f"The microphone “{name}” is back; listening again."
            return f"The microphone “{name}” is back, but the recording could not return to it."
        if hears:
            assert change.now is not None
            return f"The microphone “{name}” was disconnected; now listening on “{change.now.description}”."
        return (
            f"The microphone “{name}” was disconnected. Listening is paused until it is back; "
            "typing still works."
        )
