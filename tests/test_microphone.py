"""The microphone, through the real PulseAudio virtual mic: what it captures, the push-to-talk
pre-roll, its block period, a failing handler, levels, its ring buffer, a missing device."""

from __future__ import annotations

import time

import numpy as np
import pytest

from app.ears.microphone import Microphone, MicrophoneError
from app.ears.vad import RATE
from tests.conftest import espeak, load16k, words


@pytest.fixture
def mic(virtual_audio):
    m = Microphone(preroll_s=0.25)
    m.open()
    yield m
    m.close()


def test_virtual_mic_delivers_the_fed_wav(mic, virtual_audio, speech_dir) -> None:
    wav = espeak("Tell me something interesting about the moon.", speech_dir / "moon.wav")
    source = load16k(wav)
    start = mic.position
    virtual_audio.play_into_mic(wav).wait(30)
    time.sleep(0.5)
    captured = mic.read(start)
    # Locate the source in the capture by cross-correlation and compare.
    corr = np.correlate(captured, source[: RATE // 2], mode="valid")
    offset = int(np.argmax(corr))
    aligned = captured[offset : offset + len(source)]
    assert len(aligned) == len(source)
    r = np.corrcoef(aligned, source)[0, 1]
    assert r > 0.95, r
    assert mic.capture_rate in (16000, 44100, 48000)


def test_push_to_talk_keeps_preroll(mic, virtual_audio, speech_dir, transcriber) -> None:
    """Press only once speech is already arriving: the pre-roll still holds its onset."""
    wav = espeak("Remind me to call my mother tomorrow.", speech_dir / "remind.wav", wpm=140)
    source = load16k(wav)
    time.sleep(0.5)  # the microphone has been open a while, as in the app
    start = mic.position
    player = virtual_audio.play_into_mic(wav)
    deadline = time.monotonic() + 10
    while np.max(np.abs(mic.read(start)), initial=0) < 0.05:  # the user is already talking
        assert time.monotonic() < deadline, "no audio arrived from the virtual mic"
        time.sleep(0.01)
    pressed_at = mic.position
    mic.start_utterance()
    preroll = pressed_at - mic.utterance_start
    player.wait(30)
    time.sleep(0.4)
    utt = mic.stop_utterance()
    assert 0.2 * RATE <= preroll <= 0.3 * RATE
    onset = int(np.nonzero(np.abs(source) > 0.02)[0][0])
    head = source[onset : onset + RATE // 10]
    # normalized cross-correlation: where does the speech onset sit in the utterance?
    windows = np.lib.stride_tricks.sliding_window_view(utt[: preroll + RATE // 10], len(head))
    ncc = windows @ head / (np.linalg.norm(windows, axis=1) * np.linalg.norm(head) + 1e-9)
    assert ncc.max() > 0.9 and int(ncc.argmax()) < preroll  # the onset came before the press
    result = transcriber.transcribe(utt)
    assert words(result.text) == words("Remind me to call my mother tomorrow.")


def wait_position(mic: Microphone, target: int, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while mic.position < target:
        assert time.monotonic() < deadline, "the microphone stopped delivering audio"
        time.sleep(0.01)


def test_slow_blocks_keep_capturing_and_release_waits_for_the_block_in_flight(mic) -> None:
    """set_block_s reopens the stream with the new period and keeps the ring; with long blocks
    a release returns audio captured after the call (the end of the last word)."""
    wait_position(mic, mic.position + RATE // 10)
    before = mic.position
    mic.set_block_s(0.1)
    assert mic.is_open and mic.block_s == 0.1
    sizes: list[int] = []
    mic.on_block = lambda block: sizes.append(len(block))
    wait_position(mic, before + RATE // 2)
    assert sizes and all(n == RATE // 10 for n in sizes)
    mic.start_utterance()
    wait_position(mic, mic.position + 1)  # a callback has just run: the next is ~100 ms away
    at_release = mic.position - mic.utterance_start
    utt = mic.stop_utterance()
    assert len(utt) >= at_release + RATE // 10


def test_a_failing_block_handler_does_not_stop_the_microphone(mic, caplog) -> None:
    calls = []

    def broken(block: np.ndarray) -> None:
        calls.append(len(block))
        raise ValueError("bug in a handler")

    mic.on_block = broken
    wait_position(mic, mic.position + RATE // 2)
    assert mic.is_open and len(calls) > 5
    assert sum("capture goes on" in r.getMessage() for r in caplog.records) == 1  # said once


def test_levels_follow_the_voice_but_let_a_steady_room_sleep() -> None:
    """Level reports: >= 20 Hz while the sound changes (a meter that moves with the voice),
    about 1 Hz for a steady tone, none while disabled. Blocks are written as the stream's
    callback writes them, so the count does not depend on the machine's speed."""
    levels = []
    m = Microphone(on_level=levels.append)
    rng = np.random.default_rng(0)
    block = int(0.02 * RATE)
    for i in range(50):  # one second of a voice rising 1.2 dB every 20 ms (a 60 dB swell)
        m.write(rng.standard_normal(block).astype(np.float32) * 10 ** ((i * 1.2 - 60) / 20))
    assert len(levels) >= 20
    levels.clear()
    for _ in range(100):  # two seconds of steady room tone
        m.write(np.full(block, 0.003, dtype=np.float32))
    assert 1 <= len(levels) <= 3
    levels.clear()
    m.levels_enabled = False
    for i in range(50):
        m.write(np.full(block, 0.3 if i % 2 else 0.0, dtype=np.float32))
    assert levels == []


def test_ring_buffer_is_bounded() -> None:
    m = Microphone(ring_s=2.0)
    for _ in range(500):
        m.write(np.ones(1600, np.float32))
    assert m._ring.nbytes == 2 * RATE * 4
    assert len(m.read(0)) == 2 * RATE


def test_missing_device_gives_clear_error(virtual_audio) -> None:
    with pytest.raises(MicrophoneError, match="no input device matches 'no-such-mic'"):
        Microphone(device="no-such-mic").open()
    with pytest.raises(MicrophoneError, match="typing still works"):
        Microphone(device=99).open()


# ----- CLI ----------------------------------------------------------------------------------
