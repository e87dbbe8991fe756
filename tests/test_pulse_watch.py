"""The device watcher's races with the sound server (`app.system.pulse_watch`), on the real
PulseAudio test server: a device unplugged while the watcher looks, between the queries of a look,
or before the watcher first saw a new stream is still reported. The watcher is instrumented (its
look held, or a query wrapped to unplug the speaker right after it answers) to put the unplug at
that moment every time; the server, the streams and the events are real. What the assistant does
with the reports is `test_device_faults.py`.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import SimpleNamespace

from app.system.pulse_watch import DeviceChange, PulseWatch
from tests.support.pulse import VirtualAudio


class _Rig:
    """A real PulseWatch whose reports are collected, our playback stream, and the speaker
    unplugged by the test (plugged back when the rig closes)."""

    def __init__(self, audio: VirtualAudio) -> None:
        self.audio = audio
        self.changes: list[DeviceChange] = []
        self.reported = threading.Event()
        self.watch = PulseWatch(lambda change: (self.changes.append(change), self.reported.set()))
        self.unplugged: list[str] = []
        self.stream = None

    def open_stream(self) -> None:
        """Open and start our playback stream: the server places it on the default speaker."""
        import sounddevice as sd

        self.stream = sd.OutputStream(samplerate=16000, channels=1, dtype="float32")
        self.stream.start()

    def unplug_speaker(self) -> None:
        self.unplugged.append(self.audio.unload_module("sink_name=speaker"))

    def assert_speaker_lost(self) -> None:
        assert self.reported.wait(10), "the unplugged speaker was not reported"
        assert self.unplugged, "the instrumented step did not run"
        assert [(c.direction, c.change) for c in self.changes] == [("output", "lost")]
        lost = self.changes[0]
        assert lost.device.name == "speaker" and lost.now is not None and lost.now.name != "speaker"

    def close(self) -> None:
        self.watch.close()
        if self.stream is not None:
            self.stream.abort()
            self.stream.close()
        for spec in self.unplugged:
            self.audio.load_module(spec)


@contextmanager
def _rig(audio: VirtualAudio) -> Iterator[_Rig]:
    rig = _Rig(audio)
    try:
        yield rig
    finally:
        rig.close()


def _once_on_the_watcher(step: Callable[[], object]) -> Callable[[], None]:
    """`step`, run the first time the result is called on the watcher's own thread; else nothing."""
    done: list[bool] = []

    def wrapped() -> None:
        if threading.current_thread().name == "pulse-watch" and not done:
            done.append(True)
            step()

    return wrapped


def _wake_the_watcher(audio: VirtualAudio) -> None:
    audio.pactl("set-sink-volume", "speaker", "90%")  # a server event: the watcher looks


def test_a_device_removed_while_the_watch_looks_is_reported(virtual_audio) -> None:
    """pulsectl dispatches the server's events inside the watcher's own queries and then forgets
    them: a speaker unplugged right after a look (e.g. the one a reply's new stream causes), its
    events arriving inside the watcher's next query, must still be reported."""
    with _rig(virtual_audio) as rig:
        real_look = rig.watch._look
        unplug = _once_on_the_watcher(lambda: (rig.unplug_speaker(), rig.watch._pulse.server_info()))

        def look_then_unplug() -> None:
            real_look()
            unplug()  # then a query: the removal's events arrive inside it

        rig.watch._look = look_then_unplug  # type: ignore[method-assign]
        rig.open_stream()
        assert rig.watch.start()  # sees our stream on the speaker
        _wake_the_watcher(virtual_audio)
        rig.assert_speaker_lost()


def test_a_device_removed_between_the_queries_of_a_look_is_reported(virtual_audio) -> None:
    """A look is several queries: a speaker unplugged between the device list and the stream list
    shows our stream already moved while the speaker is still listed. That torn look must not
    become the new "where we are" (the loss would then never be seen)."""
    with _rig(virtual_audio) as rig:
        rig.open_stream()
        assert rig.watch.start()  # sees our stream on the speaker
        real_sink_list = rig.watch._pulse.sink_list
        unplug = _once_on_the_watcher(rig.unplug_speaker)

        def sink_list_then_unplug():
            sinks = real_sink_list()
            unplug()
            return sinks

        rig.watch._pulse.sink_list = sink_list_then_unplug
        _wake_the_watcher(virtual_audio)
        rig.assert_speaker_lost()


def test_a_stream_first_seen_after_its_device_went_is_a_loss(virtual_audio) -> None:
    """A reply's stream opens on the speaker and the speaker goes before the watcher has looked
    at the stream (milliseconds on a busy machine): the watcher first sees it on the fallback.
    It opened on the default speaker of the last look, which is gone: that is a loss."""
    holding, release = threading.Event(), threading.Event()
    with _rig(virtual_audio) as rig:
        assert rig.watch.start()  # no stream of ours yet
        real_look = rig.watch._look
        hold = _once_on_the_watcher(lambda: (holding.set(), release.wait(10)))

        def held_look() -> None:
            hold()
            real_look()

        rig.watch._look = held_look  # type: ignore[method-assign]
        try:
            rig.open_stream()  # known to the server at once (an event): the watcher's look is held
            assert holding.wait(10), "the watcher did not look at the new stream"
            rig.unplug_speaker()
        finally:
            release.set()
        rig.assert_speaker_lost()


class _FlakyPulse:
    """A labelled fake of pulsectl.Pulse for one narrow unit test: the first query after an event
    fails as a query races a device that is going away; the real path (the real server) is the
    rest of this file."""

    def __init__(self) -> None:
        self.events, self.looks = 0, 0

    def event_listen(self) -> None:
        self.events += 1
        if self.events > 3:
            import pulsectl

            raise pulsectl.PulseDisconnected()

    def source_list(self) -> list:
        import pulsectl

        self.looks += 1
        if self.looks == 2:  # the first look after an event (the first is start()'s)
            raise pulsectl.PulseOperationFailed(7)
        return []

    def server_info(self) -> SimpleNamespace:
        return SimpleNamespace(default_source_name="mic", default_sink_name="speaker")

    sink_list = source_output_list = sink_input_list = staticmethod(list)


def test_the_device_watch_survives_a_query_that_races_a_device_going_away() -> None:
    """A query that fails between an event and the look (a device unloaded meanwhile) does not
    end the watch: the next events are looked at; only a lost server ends it."""
    watch = PulseWatch(lambda change: None)
    fake = _FlakyPulse()
    watch._pulse = fake
    watch._look()  # as start() does
    watch._run()
    assert fake.events == 4 and fake.looks == 4  # one look per event: the failed one ended nothing
