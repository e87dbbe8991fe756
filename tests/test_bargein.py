"""Voice barge-in on the real virtual devices: the echo guard (speexdsp canceller + judge) wired
as in the app (tests/support/echo_rig), and once through the whole assistant."""

from __future__ import annotations

import time
from collections import deque

import numpy as np
import pytest
import soundfile as sf

from app.ears import echo, speex_aec
from app.ears.echo import EchoGuard
from app.ears.echo_path import EchoPath
from app.ears.transcriber import SttConfig, Transcriber
from app.ears.vad import rms_db
from tests.conftest import espeak, load16k
from tests.support.assistant_rig import Recorder, make
from tests.support.echo_rig import EchoRig, onset_position, room

# The voice the "never barges in on itself" tests play: espeak-ng's, which the echo guard's
# rules were tuned and measured on. With the natural voice in a room the guard barges in on
# itself now and then (bench.bargein: 1 false barge-in in 20 replies at -20 dB; a known limit in
# the README): a measured rate, not yet a guarantee, so those tests would be a coin toss.
TUNED_VOICE = "gmw/en-us"

STORY = [
    "Once upon a time there was a small dragon who lived by a quiet river in the mountains.",
    "Every morning he brewed a pot of green tea and watched the fish jump in the sunlight.",
]


def wait_until(predicate, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True


def test_speexdsp_is_there_and_cancels_a_linear_echo() -> None:
    """The library loads, and a delayed, attenuated copy of the far end is removed (>= 10 dB
    after a few seconds), while a voice that is not in the far end passes (within 3 dB)."""
    assert speex_aec.available(), speex_aec.speexdsp_problem()
    rng = np.random.default_rng(0)
    far = (rng.standard_normal(16000 * 6) * 0.1).astype(np.float32)
    mic = np.zeros_like(far)
    mic[800:] = 0.3 * far[:-800]  # 50 ms later, -10 dB
    aec = speex_aec.SpeexEchoCanceller()
    out = np.concatenate([aec.process(mic[i : i + 320], far[i : i + 320]) for i in range(0, len(far), 320)])

    assert rms_db(mic[-16000:]) - rms_db(out[-16000:]) >= 10
    voice = (np.sin(np.arange(320 * 50) * 0.07) * 0.1).astype(np.float32)
    silent = np.zeros(320, np.float32)
    passed = np.concatenate([aec.process(voice[i : i + 320], silent) for i in range(0, len(voice), 320)])
    assert abs(rms_db(passed[3200:]) - rms_db(voice[3200:])) < 3


def talk_over_the_story(
    rig: EchoRig, virtual_audio, wav, after_s: float, warm_up: bool = False
) -> np.ndarray:
    """Play `wav` into the microphone `after_s` into the story (after one whole reply when
    `warm_up`): it must barge in, silence the speaker and pass the words on; returns everything
    passed on."""
    if warm_up:
        rig.say(STORY[:1])
        assert rig.started.wait(30)
        rig.quiet(60)
        rig.barges.clear()  # one on itself is the own-voice tests' and bench.bargein's matter
        rig.utterances.clear()
    rig.say(STORY)
    assert rig.started.wait(30)
    time.sleep(after_s)
    virtual_audio.play_into_mic(wav).wait(30)
    assert wait_until(lambda: rig.barges, 3), "no barge-in"
    assert not rig.speaker.busy
    assert rig.got_utterance.wait(5), "the words after the barge-in were not passed on"
    time.sleep(2.0)  # "Stop." and the question may come as two utterances
    return np.concatenate(rig.utterances)


def test_talking_over_it_on_a_silent_headset_stops_it_and_the_words_are_kept(
    virtual_audio, speech_dir, whisper_model
) -> None:
    """A headset that delivers digital silence (no echo path, no noise): a normal-level
    "Stop. What is two plus two?" stops the voice, and the question is heard from its start."""
    wav = espeak("Stop. What is two plus two?", speech_dir / "stop-two.wav", wpm=150)
    rig = EchoRig()
    try:
        heard = talk_over_the_story(rig, virtual_audio, wav, after_s=1.0)
    finally:
        rig.close()
    # its start is kept: the first 300 ms of "Stop." are found in what was passed on
    assert onset_position(heard, 0, load16k(wav)) is not None
    text = Transcriber(SttConfig(whisper_model)).transcribe(heard).text.lower()
    assert "plus" in text, text  # and the question with it


def test_talking_over_it_in_a_room_stops_it_and_the_question_is_heard(
    virtual_audio, speech_dir, whisper_model
) -> None:
    """Speaker looped into the microphone at -20 dB (one clock, as one sound card), faint room
    noise, the natural voice: a normal-level "Stop. What is two plus two?" 3 s into a reply (the
    canceller has learned the path by then; the first second of the very first reply is a known
    limit) stops the voice, and the question is heard. A louder room (-10 dB) is caught 17-19
    times in 20: bench.bargein's target, not an assertion."""
    db = -20.0
    wav = espeak("Stop. What is two plus two?", speech_dir / "stop-two.wav", wpm=150)
    noise = speech_noise(virtual_audio)
    rig = EchoRig()
    try:
        with room(virtual_audio, db):
            heard = talk_over_the_story(rig, virtual_audio, wav, after_s=3.0, warm_up=True)
    finally:
        rig.close()
        noise.terminate()
    text = Transcriber(SttConfig(whisper_model)).transcribe(heard).text.lower()
    assert "plus" in text or "+" in text, text  # whisper writes "two plus two" or "2 + 2"


@pytest.mark.parametrize("db", [-20.0, -10.0])
def test_own_voice_through_a_room_never_barges_in(virtual_audio, db) -> None:
    """Speaker looped into the microphone at -20 / -10 dB, faint room noise: two whole replies
    (in the voice the guard was tuned on, TUNED_VOICE) play with no barge-in and nothing reaches
    the segmenter as an utterance."""
    rig = EchoRig(voice=TUNED_VOICE)
    play_two_replies(rig, virtual_audio, db)
    assert rig.barges == [] and rig.utterances == []


def play_two_replies(rig: EchoRig, virtual_audio, db: float) -> None:
    """The story twice, whole, through a room at `db` with faint room noise; closes the rig."""
    noise = speech_noise(virtual_audio)
    try:
        with room(virtual_audio, db):
            for _ in range(2):
                rig.say(STORY)
                assert rig.started.wait(30)
                rig.quiet(60)
    finally:
        rig.close()
        noise.terminate()


def test_own_voice_with_a_late_playback_thread_never_barges_in(virtual_audio) -> None:
    """A busy desktop: the speaker's thread is 60 ms late every 0.3-0.8 s (a sleep before its
    write, standing in for the scheduler), so the real device runs dry and PortAudio reports
    the underflows, in a room at -10 dB: they reach the guard and two whole replies play with
    no barge-in (before the guard knew of underflows, stalls of 35–90 ms barged in on 2 of 12
    replies; with it, 0 of 12; TUNED_VOICE)."""
    rig = EchoRig(voice=TUNED_VOICE)
    rng = np.random.default_rng(0)
    countdown = [int(rng.integers(15, 40))]
    note_output = rig.guard.note_output

    def late_writer(samples, rate, latency_s) -> None:
        countdown[0] -= 1
        if countdown[0] == 0:
            time.sleep(0.06)
            countdown[0] = int(rng.integers(15, 40))
        note_output(samples, rate, latency_s)

    rig.speaker.on_output = late_writer
    play_two_replies(rig, virtual_audio, -10.0)
    assert rig.guard.gaps >= 10
    assert rig.barges == [] and rig.utterances == []


def speech_noise(virtual_audio):
    """-50 dBFS noise into the microphone for a minute (a quiet room)."""
    path = virtual_audio.dir / "room-noise.wav"
    noise = np.random.default_rng(1).standard_normal(16000 * 60).astype(np.float32) * 10 ** (-50 / 20)
    sf.write(path, noise, 16000, subtype="PCM_16")
    return virtual_audio.play_into_mic(path)


def test_voice_barge_in_then_the_question_is_answered(
    virtual_audio, llm_model, whisper_model, speech_dir
) -> None:
    """Hands-free, the whole assistant: talking over a long reply stops it (speech and
    generation), and the question spoken over it becomes the next turn and is answered."""
    wav = espeak("Stop. What is two plus two?", speech_dir / "stop-two.wav", wpm=150)
    rec = Recorder()
    a = make(llm_model, whisper_model, rec, hands_free=True, max_tokens=400)
    try:
        a.send_text("Tell me a long story about a dragon who loves tea.")
        rec.wait_for("sentence", 60, lambda e: e.progress == "sentence_started")
        time.sleep(1.0)
        virtual_audio.play_into_mic(wav).wait(30)
        rec.wait_for("notice", 10, lambda e: e.message == "barge-in")
        second = rec.wait_for("turn", 90, lambda e: "plus" in e.user.lower())
    finally:
        a.shutdown()
    assert rec.of("turn")[0].interrupted
    assert second.reply


def test_a_voice_that_starts_while_the_user_talks_stops_and_the_whole_utterance_is_heard(
    virtual_audio, llm_model, whisper_model, speech_dir
) -> None:
    """The user is talking when the assistant starts to speak (a slow reply, a new sentence
    begun after the last turn's end): the user keeps the floor. The voice stops at once, and the
    words said before it started are not dropped with the gate (the segmenter holds them; a
    guard that reset it found the voice again only after up to 1.6 s, and the head of the
    utterance was lost)."""
    wav = espeak(
        "Please tell me a short story about a dragon who lives by a quiet river in the mountains.",
        speech_dir / "dragon.wav",
        wpm=140,
    )
    rec = Recorder()
    a = make(llm_model, whisper_model, rec, hands_free=True, max_tokens=8)
    try:
        feeding = virtual_audio.play_into_mic(wav)
        assert wait_until(lambda: a.segmenter.in_speech, 10), "the utterance did not start"
        time.sleep(0.8)  # "Please tell me a short…" is in the segmenter
        a.speaker.say("Here is a long announcement that I would like to make right now, if I may.")
        rec.wait_for("notice", 10, lambda e: e.message == "barge-in")
        assert wait_until(lambda: not a.speaker.busy, 3)
        feeding.wait(30)
        turn = rec.wait_for("turn", 90)
    finally:
        a.shutdown()
    words = turn.user.lower()
    assert "tell me" in words and ("river" in words or "mountain" in words), words


def test_guard_passes_the_microphone_untouched_when_nothing_plays() -> None:
    guard = EchoGuard()
    block = np.full(640, 0.2, dtype=np.float32)
    verdict = guard.mic_block(block)
    assert verdict.audio is block and not verdict.barge and not guard.gated


def test_a_canceller_reset_does_not_turn_the_echo_into_the_user(tmp_path) -> None:
    """speexdsp resets its filter by itself when it diverges (seen in CI: the assistant's own
    voice then became a turn). Forced here through the library's own reset call, mid-reply: the
    guard notices and judges the echo that now passes whole as echo, not as a voice. Drives the
    guard's per-frame step directly (a narrow unit test; the whole path is in test_assistant)."""
    far = load16k(espeak(" ".join(STORY), tmp_path / "story.wav", wpm=170)) * 0.5
    delay = 480  # 30 ms, as the loopback in test_assistant
    mic = np.zeros_like(far)
    mic[delay:] = 0.5 * far[:-delay]
    guard = EchoGuard()
    window = int(guard.config.echo_window_s * 16000)
    padded = np.concatenate([np.zeros(window, np.float32), far])

    def frames(start: int, end: int) -> list[bool]:
        return [
            guard._frame(mic[i : i + 320], padded[i : i + window + 320])[1] for i in range(start, end, 320)
        ]

    learned = frames(0, 16000 * 5)
    assert guard.residual_db < -10 and not any(learned[100:])
    speex_aec._lib().speex_echo_state_reset(guard._aec._echo)  # what speexdsp does on divergence
    after = frames(16000 * 5, 16000 * 7)
    assert guard.canceller_resets == 1
    assert sum(after) < guard.config.barge_frames, f"{sum(after)} echo frames judged the user's voice"


def test_the_timeline_runs_on_the_microphones_sample_count(monkeypatch) -> None:
    """The echo's delay, as the canceller sees it, must not move with the callback's timing:
    microphone blocks arriving in a burst, then with jitter and a slow drift, are labelled by
    their sample count (consecutive), and the speaker's samples are placed on the same clock.
    Drives the timeline with a made-up monotonic clock (a narrow unit test; the live path is
    the room tests above and bench/bargein)."""
    clock = [100.0]
    monkeypatch.setattr(echo.time, "monotonic", lambda: clock[0])
    guard = EchoGuard()
    tl, n, rng = guard._timeline, 640, np.random.default_rng(1)
    arrivals = [100.5] * 10 + [100.5 + k * 0.04 + rng.uniform(0, 0.015) + k * 0.0001 for k in range(1, 200)]
    labels = []
    for t in arrivals:
        clock[0] = t
        guard.mic_block(np.zeros(n, np.float32))
        labels.append(guard._mic_index)
    assert set(np.diff(labels)) == {n}
    # `now` runs from the count by the earliest arrival of the last 2 s, not the last block's
    clock[0] = arrivals[-1] + 0.01  # (which came up to 15 ms late): never behind the count
    assert labels[-1] + 160 <= tl.now() <= labels[-1] + 160 + 16 * 15
    tl.append(np.ones(320, np.float32), 16000)  # the speaker starts: its samples go to `now`
    assert tl.head == tl.now() + 320


class MadeUpPlayback:
    """The guard driven with a made-up clock, speaker and microphone (for narrow unit tests;
    the live path is the room tests above and bench/bargein). The speaker writes the story in
    20 ms blocks and keeps four queued on the device (a blocking write); each 20 ms the device
    plays the next block, or silence when the writer is late; the microphone hears the device
    `delay` samples later at -10 dB."""

    def __init__(self, monkeypatch, tmp_path) -> None:
        self.clock = [100.0]
        monkeypatch.setattr(echo.time, "monotonic", lambda: self.clock[0])
        self.far = load16k(espeak(" ".join(STORY), tmp_path / "story.wav", wpm=170)) * 0.5
        self.guard = EchoGuard()
        self.noise = np.random.default_rng(2).standard_normal(16000).astype(np.float32) * 1e-4
        self.barges = 0

    def reply(self, delay: int, seconds: float, dry_at: tuple[float, ...] = (), dry_ms: int = 0) -> list:
        """Play `seconds` of the story. At each of `dry_at` (seconds) the device runs dry for
        `dry_ms` (the writer was late; for less than the guard's timeline restart gap, so on its
        timeline playback ran on) and PortAudio reports the underflow with the next write.
        Returns the echo the canceller left (`path.left`) at the end; counts barge-ins."""
        guard = self.guard
        blocks = [self.far[i : i + 320] for i in range(0, int(seconds * 16000), 320)]
        dry = {int(t * 50) for t in dry_at}
        queued: deque[np.ndarray] = deque()
        played: list[np.ndarray] = []
        written, step, silent = 0, 0, 0
        while written < len(blocks) or queued:
            while written < len(blocks) and len(queued) < 4:
                guard.note_output(blocks[written], 16000)
                queued.append(blocks[written])
                written += 1
                if silent < 0:  # the first write after running dry
                    guard.playback_gap()
                    silent = 0
            if step in dry:
                silent = dry_ms // 20
            if silent > 0:
                played.append(np.zeros(320, np.float32))
                silent = -1 if silent == 1 else silent - 1
            else:
                played.append(queued.popleft())
            self._hear(np.concatenate(played[-(delay // 320 + 2) :]), delay)
            step += 1
        left = list(guard.path.left)
        guard.playback_stopped()
        for _ in range(50):  # a second of quiet between replies
            self.clock[0] += 0.02
            guard.mic_block(self.noise[:320])
        return left

    def _hear(self, recent: np.ndarray, delay: int) -> None:
        """The microphone's next 20 ms: what the device played `delay` samples ago, and noise."""
        got = recent[max(0, len(recent) - delay - 320) : max(0, len(recent) - delay)]
        mic = np.zeros(320, np.float32)
        mic[320 - len(got) :] = 0.3 * got
        self.barges += self.guard.mic_block(mic + self.noise[:320]).barge
        self.clock[0] += 0.02


def test_the_echo_delay_is_held_where_the_canceller_learned_it(monkeypatch, tmp_path) -> None:
    """Each reply reopens the output stream, and its echo's delay against the microphone's
    count moves (3–58 ms apart, measured on the virtual devices). The echo 30 ms after its
    reference in one reply and 45 ms in the next: the guard moves the reference by the 15 ms
    once its path check has measured it, and the canceller is as good as in the reply before
    (the median echo it leaves over the last 3 s, within 6 dB)."""
    p = MadeUpPlayback(monkeypatch, tmp_path)
    p.reply(480, 6.0)  # (the first reply starts before the microphone's first block)
    before = p.reply(480, 8.0)
    shift = p.guard.path.shift
    after = p.reply(720, 8.0)
    assert p.guard.path.shift - shift == 240
    assert p.guard.path.lag == p.guard.path.target_lag  # measured again at the end: held
    assert np.median(after) < np.median(before) + 6, (before, after)
    assert p.barges == 0


def test_a_late_speaker_thread_never_turns_the_echo_into_the_user(monkeypatch, tmp_path) -> None:
    """On a busy desktop the playback thread can be late: the device runs dry for a moment and
    everything after comes later than the guard's timeline says, by less than the gap that
    restarts it (seen in CI: the assistant's own voice then barged in). PortAudio reports the
    underflow; the guard judges as at a reply's start until it has measured the new delay, then
    holds it: no barge-in, and the reference follows the echo."""
    p = MadeUpPlayback(monkeypatch, tmp_path)
    p.reply(480, 6.0)
    p.reply(480, 6.0)
    shift = p.guard.path.shift  # where a reply starts
    p.reply(480, 6.0, dry_at=(2.0,), dry_ms=40)
    assert p.guard.gaps == 1 and p.barges == 0
    assert p.guard.path.settled and p.guard.path.shift == shift + 640  # the reference followed
    p.reply(480, 8.0, dry_at=(1.0, 3.0, 5.0, 7.0), dry_ms=40)  # (twice: the timeline restarts)
    assert p.guard.gaps == 5 and p.barges == 0


def test_the_held_delay_never_holds_frames_back_long() -> None:
    """Moving the reference later makes every frame wait for it: up to 20 ms of that is
    accepted; a delay that moved further earlier is re-learned by the canceller instead.
    (A narrow unit test of EchoPath's rule on made-up measurements.)"""
    path = EchoPath(0.4, cancelling=True)
    path.ncc, path.lag = 0.9, 1600
    path._track()
    assert path.target_lag == 1600 and path.shift == 0
    path.lag = 1600 + 480  # 30 ms later than learned: read the reference 30 ms earlier
    path._track()
    assert path.shift == 480 and path.lag == 1600
    path.lag = 1600 - 640  # 40 ms earlier: the reference read 10 ms later (frames wait 10 ms)
    path._track()
    assert path.shift == -160 and path.lag == 1600
    path.lag = 1600 - 800  # 50 ms earlier again: a 60 ms wait would be needed; re-learn
    path._track()
    assert path.shift == -160 and path.target_lag == 800
