"""Watch the sound server for the devices our own streams use, and say when one goes or returns.

On PulseAudio and PipeWire (through its PulseAudio interface) a removed microphone or speaker
does NOT end our PortAudio stream: the server moves the stream to a fallback device, often the
*monitor* of a sink (what the speakers play), and moves it back when the device returns. The
stream never errors, so the app must watch the server itself to tell the user, and must not take
a monitor for a microphone (it would hear the assistant and the desktop's sounds as speech).

`PulseWatch` holds one libpulse connection (the `pulsectl` bindings) on its own thread, blocked
in the server's event poll (no CPU while nothing changes). It finds this process's recording
streams (source outputs) and playback streams (sink inputs) by process id and, whenever the
server reports a change, calls `on_change(DeviceChange)` from that thread when:
- `lost`: the device a stream of ours was on was removed (the stream is now elsewhere, or gone);
- `back`: a device we lost is present again (a recording stream not moved back by the server is
  moved to it).
A look is a snapshot taken by several queries; it counts only when the server reported no change
while it ran (a device removed between two queries would show our stream already moved but the
device still present), else the watcher looks again at once. A stream of ours seen for the first
time was opened on the default device of the last look: if that device is gone, it is `lost`
(a speaker unplugged in the milliseconds between a reply's stream opening and the watcher's look).
Moves the user makes (a mixer) are followed silently. Without a PulseAudio-compatible server, or
without libpulse, `start()` returns False and nothing is watched: PortAudio then reports a
vanished device as a stream error, which the Microphone and Speaker handle themselves.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

log = logging.getLogger(__name__)
INVALID_INDEX = 0xFFFFFFFF  # libpulse's PA_INVALID_INDEX: "not a monitor"


@dataclass(frozen=True)
class Device:
    index: int
    name: str
    description: str
    is_monitor: bool = False  # a source that records a sink's output, not a microphone


@dataclass(frozen=True)
class DeviceChange:
    direction: str  # "input" (microphone) | "output" (speaker)
    change: str  # "lost" | "back"
    device: Device  # the device that went away or came back
    now: Device | None  # where our stream is now (None: no stream of ours)

    @property
    def hears_microphone(self) -> bool:
        """Input: our stream records from a microphone (not from a monitor, not from nothing)."""
        return self.now is not None and not self.now.is_monitor


class PulseWatch:
    """See the module docstring. `start()`, then `close()` (any thread; joins the watcher)."""

    def __init__(self, on_change: Callable[[DeviceChange], None], client_name: str = "talk-llama-watch"):
        self.on_change = on_change
        self.client_name = client_name
        self._pid = str(os.getpid())
        self._pulse: Any = None  # pulsectl.Pulse (the library has no type hints)
        self._thread: threading.Thread | None = None
        self._closed = threading.Event()
        self._on: dict[str, Device] = {}  # direction -> device our stream was on at the last look
        self._lost: dict[str, Device] = {}  # direction -> device that went away, until it returns
        self._default: dict[str, Device] = {}  # direction -> the server's default at the last look
        self._events = 0  # server events seen (in libpulse's loop: the watcher's thread)
        self._looked_at = -1  # the event count at the start of the last whole look

    def start(self) -> bool:
        """Connect and start watching; False (logged) when there is no server to watch."""
        pulse = None
        try:
            import pulsectl

            pulse = pulsectl.Pulse(self.client_name, connect=False)
            pulse.connect(wait=False, timeout=2)
            self._pulse = pulse
            pulse.event_mask_set("server", "source", "sink", "source_output", "sink_input")
            pulse.event_callback_set(self._on_event)
            self._look()
        except Exception as exc:  # no libpulse, no server (plain ALSA), refused
            log.info("device changes are not watched (no PulseAudio-compatible server: %s)", exc)
            if pulse is not None:
                pulse.close()
            self._pulse = None
            return False
        self._thread = threading.Thread(target=self._run, name="pulse-watch", daemon=True)
        self._thread.start()
        return True

    def close(self) -> None:
        self._closed.set()
        pulse, thread = self._pulse, self._thread
        if pulse is None:
            return
        while thread is not None and thread.is_alive():  # event_listen_stop may race its start
            pulse.event_listen_stop()
            thread.join(0.05)
        pulse.close()
        self._pulse = None

    # ----- watcher thread ----------------------------------------------------------------------
    def _on_event(self, _event) -> None:
        """Counts the event, then leaves the poll (queries are not allowed inside it). pulsectl
        also calls this for events that arrive while a query of `_look` runs, and forgets the
        stop when the next query starts: the count is what tells a look it was torn, and `_run`
        to look again."""
        import pulsectl

        self._events += 1
        raise pulsectl.PulseLoopStop

    def _run(self) -> None:
        import pulsectl

        pulse = self._pulse
        while not self._closed.is_set():
            try:
                if self._events == self._looked_at:  # nothing came since the last whole look
                    pulse.event_listen()
                if not self._closed.is_set():
                    self._look()
            except pulsectl.PulseError as exc:
                if isinstance(exc, pulsectl.PulseDisconnected):
                    log.info("device watch ended: the sound server went away")
                    return
                # A device or stream that went away between the event and the query (a module
                # unloaded while another was being loaded): the next event looks again.
                log.debug("device watch: %s %s", type(exc).__name__, exc)
            except Exception as exc:  # anything else: nothing sensible left to watch
                log.info("device watch ended: %s: %s", type(exc).__name__, exc)
                return

    def _look(self) -> None:
        """Compare where our streams are with the last whole look; report losses and returns.
        A torn look (events arrived during its queries) compares nothing: `_run` looks again."""
        pulse = self._pulse
        events = self._events
        server = pulse.server_info()
        sources = {d.index: _device(d) for d in pulse.source_list()}
        sinks = {d.index: _device(d) for d in pulse.sink_list()}
        ours_in = [s for s in pulse.source_output_list() if self._is_ours(s)]
        ours_out = [s for s in pulse.sink_input_list() if self._is_ours(s)]
        if self._events != events:
            log.debug("device watch: the server changed during a look; looking again")
            return
        self._looked_at = events
        self._compare("input", sources, [sources.get(s.source) for s in ours_in], ours_in)
        self._compare("output", sinks, [sinks.get(s.sink) for s in ours_out], ours_out)
        for direction, devices, name in (
            ("input", sources, server.default_source_name),
            ("output", sinks, server.default_sink_name),
        ):
            default = next((d for d in devices.values() if d.name == name), None)
            if default is not None:
                self._default[direction] = default

    def _compare(self, direction: str, devices: dict[int, Device], on: list[Device | None], streams) -> None:
        now = next((d for d in on if d is not None), None)
        before, lost = self._on.get(direction), self._lost.get(direction)
        if before is None and now is not None:  # our first stream: it opened on the default
            before = self._default.get(direction)
        if lost is None and before is not None and before.index not in devices:
            self._lost[direction] = before
            self._report(DeviceChange(direction, "lost", before, now))
        elif lost is not None:
            back = next((d for d in devices.values() if d.name == lost.name), None)
            if back is not None:
                if direction == "input" and streams and (now is None or now.index != back.index):
                    now = self._move_inputs(streams, back) or now
                del self._lost[direction]
                self._report(DeviceChange(direction, "back", back, now))
        if now is not None:
            self._on[direction] = now

    def _move_inputs(self, streams, device: Device) -> Device | None:
        try:
            for s in streams:
                self._pulse.source_output_move(s.index, device.index)
            return device
        except Exception as exc:
            log.warning("could not move the recording back to %s: %s", device.description, exc)
            return None

    def _is_ours(self, stream) -> bool:
        return stream.proplist.get("application.process.id") == self._pid

    def _report(self, change: DeviceChange) -> None:
        log.info(
            "%s device %s: %s (now on %s)",
            change.direction,
            change.change,
            change.device.description,
            change.now.description if change.now else "nothing",
        )
        try:
            self.on_change(change)
        except Exception:
            log.exception("device change handler failed")


def sound_server() -> str | None:
    """ "PulseAudio 16.1" (or PipeWire's "PulseAudio (on PipeWire 1.0)"), None when none answers."""
    try:
        import pulsectl

        with pulsectl.Pulse("talk-llama-doctor", connect=False) as pulse:
            pulse.connect(wait=False, timeout=2)
            info = pulse.server_info()
            return f"{info.server_name} {info.server_version}"
    except Exception:  # no libpulse, no server
        return None


def _device(info) -> Device:
    monitor_of = getattr(info, "monitor_of_sink", INVALID_INDEX)
    return Device(info.index, info.name, info.description or info.name, monitor_of != INVALID_INDEX)
