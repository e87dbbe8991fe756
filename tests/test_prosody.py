"""How the voice ends (ears/prosody.py, issue #15): the pitch tracker on tones of known pitch, and
on speech: a sentence that has finished falls to where the speaker's statements end, a sentence
paused in the middle holds its voice up, though the words before the pause are the same.
Speech is espeak-ng's (the command, not the app's TTS); where statements end is learnt from two
of them, as the stt thread learns it from the user's."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from app.ears.prosody import SR, FinalPitch, pitch
from app.loop.turn_end import TurnEndConfig, end_silence_ms
from tests.conftest import espeak, load16k
from tests.support.speech import before_pause, spoken_through, until_quiet


def voice_like(f0: float, seconds: float = 0.5) -> np.ndarray:
    """A harmonic tone (a glottal-like spectrum: harmonics falling 6 dB per octave)."""
    t = np.arange(int(SR * seconds)) / SR
    return (0.1 * sum(np.sin(2 * np.pi * k * f0 * t) / k for k in range(1, 12))).astype(np.float32)


@pytest.mark.parametrize("f0", [85.0, 120.0, 210.0, 330.0])
def test_pitch_of_a_tone(f0: float) -> None:
    track = pitch(voice_like(f0))
    assert len(track) >= 40 and np.all(track > 0)
    assert np.median(track) == pytest.approx(f0, rel=0.02)


def test_silence_and_noise_have_no_pitch() -> None:
    assert not pitch(np.zeros(SR, np.float32)).any()
    noise = np.random.default_rng(0).normal(0, 0.05, SR).astype(np.float32)
    assert np.count_nonzero(pitch(noise)) < 5


def test_a_hum_after_the_last_word_is_not_the_voice() -> None:
    """A steady hum (periodic, so YIN finds a pitch in it) after a voice at 100 Hz, 23 dB louder."""
    hum = voice_like(150.0, 0.3) * 0.07  # RMS ~0.006 (-44 dBFS): above MIN_RMS
    ends = FinalPitch()
    ends.learn(voice_like(100.0), "Done.")
    ends.learn(voice_like(100.0), "Done.")
    assert np.count_nonzero(pitch(hum)) > 10  # alone, the hum has a pitch
    ending = ends.ending(np.concatenate([voice_like(100.0), hum]))
    assert ending == pytest.approx(1.0, rel=0.03)


def test_no_reference_until_two_statements_have_ended() -> None:
    ends = FinalPitch()
    assert ends.reference is None and ends.ending(voice_like(120.0)) is None
    ends.learn(voice_like(100.0), "Set a timer.")
    ends.learn(voice_like(160.0), "Is it raining?")  # a question may end rising: not learnt
    assert ends.reference is None
    ends.learn(voice_like(104.0), "Thanks")
    assert ends.reference == pytest.approx(102.0, rel=0.02)
    assert ends.ending(voice_like(127.5)) == pytest.approx(1.25, rel=0.03)
    assert ends.ending(np.zeros(SR, np.float32)) is None  # nothing voiced at the end


@pytest.fixture(scope="module")
def learnt(speech_dir: Path) -> FinalPitch:
    ends = FinalPitch()
    for i, text in enumerate(
        ("Please tell me a short joke about cats.", "I would like to listen to some music.")
    ):
        ends.learn(load16k(espeak(text, speech_dir / f"ends{i}.wav", wpm=140)), text)
    return ends


@pytest.mark.parametrize(
    ("head", "tail"),
    [("Tell me something interesting", "about the ocean."), ("Remind me to call", "my mother tomorrow.")],
)
def test_a_pause_mid_sentence_holds_the_voice_up(
    learnt: FinalPitch, speech_dir: Path, head: str, tail: str
) -> None:
    """The same words end level when the sentence goes on, and fall when it has finished: only
    the former holds the turn (`hold_at`)."""
    hold_at = TurnEndConfig().hold_at
    through = load16k(espeak(spoken_through(head, tail, 0.7), speech_dir / "through.wav", wpm=140))
    alone = load16k(espeak(head, speech_dir / "alone.wav", wpm=140))
    held, fallen = learnt.ending(before_pause(through, 0.7)), learnt.ending(until_quiet(alone))
    assert held is not None and fallen is not None
    assert held >= hold_at > fallen, (held, fallen)


def test_without_the_words_a_held_voice_waits_unless_a_finished_question() -> None:
    """A server gives no words' P: the sound decides, and a voice held up at the pause waits,
    unless the sound finds it finished and whisper heard a question (questions end high too).
    With the words' P the pitch is not consulted."""
    c = TurnEndConfig()
    held, done = c.hold_at + 0.05, 0.9
    head = "Tell me something interesting."
    assert end_silence_ms(None, c, 400, audio=done, words=head) == c.short_ms  # the sound alone
    assert end_silence_ms(None, c, 400, held, head, done) == c.long_ms
    assert end_silence_ms(None, c, 400, c.hold_at - 0.1, head, done) == c.short_ms
    question = "What is the capital of France?"
    assert end_silence_ms(None, c, 400, c.hold_at + 0.3, question, done) == c.short_ms  # rising
    assert end_silence_ms(None, c, 400, held, "What should I cook?", 0.3) == c.long_ms  # unsure sound
    assert end_silence_ms(None, TurnEndConfig(hold_at=0), 400, 2.0, head, done) == c.short_ms  # off
    assert end_silence_ms(0.06, c, 400, held, head, done) == end_silence_ms(0.06, c, 400, None, head, done)
    assert end_silence_ms(None, c, 400, pitch_end=2.0) == 400  # neither: the fixed rule


def test_the_terminal_sets_the_hold() -> None:
    from app.cli import build_parser
    from app.cli.chat_voice import assistant_config

    default = assistant_config(build_parser().parse_args(["chat"])).turn_end
    off = assistant_config(build_parser().parse_args(["chat", "--pitch-hold", "0"])).turn_end
    assert default.hold_at == TurnEndConfig().hold_at and off.hold_at == 0
