"""The audio turn model (#33): whisper's log-mel features computed here, Smart Turn v3.2 on real
speech (the natural voice: a neural voice trained on a person; espeak-ng's voices are outside
what the model was trained on, bench/turn_rules.py), its place in the end-of-turn rule, and a
missing or damaged model that leaves turn-taking to the words with a message.
Real models; the loop tests use the virtual microphone."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest

from app.brain.records import RemoteConfig
from app.ears.log_mel import HOP, N_MELS, RATE, log_mel, mel_filters
from app.ears.turn_model import TurnModel, TurnModelUnavailable
from app.loop.turn_end import TurnEndConfig, end_silence_ms, sound_counts
from tests.conftest import espeak
from tests.support.assistant_rig import spoken_turn
from tests.support.phrases import PAUSED, PHRASES
from tests.support.servers import LlamaServer
from tests.support.voices import PIPER, speak, through_head


def test_log_mel_puts_a_tone_in_its_band_and_keeps_whispers_scale() -> None:
    """1 s of a 1 kHz tone: 100 frames of 80 bands, loudest in the band whose filter peaks
    nearest 1 kHz; everything within 8 (80 dB) of the loudest, then (x + 4) / 4."""
    t = np.arange(RATE) / RATE
    features = log_mel(0.5 * np.sin(2 * np.pi * 1000 * t))
    assert features.shape == (N_MELS, RATE // HOP) and features.dtype == np.float32
    bins = np.linspace(0, RATE / 2, mel_filters().shape[1])
    peak_hz = bins[np.argmax(mel_filters(), axis=1)]
    loudest = int(np.argmax(features[:, 50]))
    assert abs(peak_hz[loudest] - 1000) == np.min(np.abs(peak_hz - 1000))
    top = features.max()
    assert np.isclose(features.min(), top - 2.0, atol=1e-5)  # (max - 8 + 4) / 4 = top - 2
    assert np.allclose(mel_filters().sum(axis=1) * (bins[1] - bins[0]), 1.0, atol=0.15)  # unit area


@pytest.fixture(scope="module")
def model(turn_model_file: Path) -> TurnModel:
    return TurnModel(turn_model_file)


def test_finished_questions_sound_finished_and_heads_cut_mid_sentence_do_not(
    model: TurnModel, natural_voice_model: Path
) -> None:
    """The natural voice: six complete questions and six sentences cut where their tail begins
    (the voice is mid-sentence). Measured on all twelve of each (bench/turn_rules.py): complete
    0.15–0.99 (10 of 12 at or above 0.5), cut 0.01–0.94 (9 of 12 at or below 0.15); the medians
    lie far apart on either side of the model's own decision point."""
    silence = np.zeros(RATE // 50, np.float32)  # the segmenter's pause comes after 20 ms
    complete = [model.probability(np.concatenate([speak(q, PIPER), silence])) for q in PHRASES[:6]]
    cut = [
        model.probability(np.concatenate([through_head(head, tail, PIPER, 0.6), silence]))
        for head, tail in PAUSED[:6]
    ]
    assert np.median(complete) > 0.5 > np.median(cut), (complete, cut)
    assert model.probability(np.zeros(0, np.float32)) == model.probability(np.zeros(RATE, np.float32))


def test_a_missing_damaged_or_wrong_turn_model_says_what_to_do(
    tmp_path: Path, natural_voice_model: Path
) -> None:
    with pytest.raises(TurnModelUnavailable, match="talk-llama models fetch"):
        TurnModel(tmp_path / "smart-turn-v3.2-cpu.onnx")
    damaged = tmp_path / "damaged.onnx"
    damaged.write_bytes(b"\x08\x07" + bytes(range(256)) * 40)
    with pytest.raises(TurnModelUnavailable, match=r"could not be loaded.*models fetch smart-turn"):
        TurnModel(damaged)
    with pytest.raises(TurnModelUnavailable, match="is not a Smart Turn v3 model"):
        TurnModel(natural_voice_model)  # an ONNX file, but a voice


def test_the_end_of_turn_rule_with_the_sound() -> None:
    """ "both": the turn ends soon only when the words and the sound find it finished (beside the
    words the sound holds only what it clearly hears unfinished); without the words' P (a
    server) the sound decides on its own scale, with the pitch hold; without either, the fixed
    rule."""
    c = TurnEndConfig()
    assert c.combine == "both"
    words_unsure, words_not, words_sure = 0.1, 1e-5, 0.3
    assert c.trailing_at < words_unsure < c.words_sure_at <= c.finished_at <= words_sure
    between = end_silence_ms(words_unsure, c, 400)  # no turn model: the words alone
    assert c.short_ms < between < c.long_ms
    assert end_silence_ms(words_unsure, c, 400, audio=0.9) == between  # the sound finished too
    assert end_silence_ms(words_unsure, c, 400, audio=0.005) == c.long_ms  # the sound trails off
    assert end_silence_ms(words_not, c, 400, audio=0.9) == c.long_ms  # the words trail off
    # the sound is asked only between trailing words and finished ones, where it can change the answer
    asked = [sound_counts(p, c) for p in (words_not, words_unsure, words_sure, None)]
    assert asked == [False, True, False, True]
    assert end_silence_ms(words_sure, c, 400, audio=0.005) == c.short_ms  # finished words: sound not heard
    assert end_silence_ms(words_sure, c, 400) == c.short_ms
    assert end_silence_ms(None, c, 400, audio=0.9) == c.short_ms  # a server: the sound alone
    assert end_silence_ms(None, c, 400, audio=0.05) == c.long_ms
    assert end_silence_ms(None, c, 400, audio=0.3) not in (c.short_ms, c.long_ms)
    assert end_silence_ms(None, c, 400) == 400
    held = c.hold_at + 0.1  # a server: a voice held up at the pause waits, unless a finished question
    assert end_silence_ms(None, c, 400, held, "Is it raining?", audio=0.9) == c.short_ms
    assert end_silence_ms(None, c, 400, held, "Tell me about", audio=0.9) == c.long_ms
    # with the words read, the pitch is not consulted
    assert end_silence_ms(words_sure, c, 400, held, "Tell me about", audio=0.9) == c.short_ms
    either = dataclasses.replace(c, combine="either")
    assert end_silence_ms(words_unsure, either, 400, audio=0.005) == between
    words = dataclasses.replace(c, combine="words")
    assert end_silence_ms(words_unsure, words, 400, audio=0.005) == between and not sound_counts(0.1, words)
    with pytest.raises(ValueError, match="combine"):
        TurnEndConfig(combine="vote")


@pytest.mark.parametrize("sure_at", [1.0, 0.051])
def test_hands_free_turns_are_decided_with_the_turn_model(
    virtual_audio, llm_model, whisper_model, turn_model_file, speech_dir, sure_at: float
) -> None:
    """The loop asks the turn model about a pause when the words are unsure (below `sure_at`:
    1.0, always here) and not when they are sure (0.051: a question reads far above it): the
    turn carries its P exactly then, and the silence that ended it is the rule's answer for the
    words' P, the pitch and that P."""
    wav = espeak("What is the weather like today?", speech_dir / "weather.wav", wpm=140)
    rule = TurnEndConfig(words_sure_at=sure_at)
    _, a, turn = spoken_turn(
        virtual_audio,
        llm_model,
        whisper_model,
        wav,
        max_tokens=8,
        turn_model=turn_model_file,
        turn_end=rule,
        actions=False,  # the words' P is the model's (an action would answer the weather)
    )
    d = turn.record()
    assert a.hearing.sound.model is not None and d["end_of_turn"] > rule.trailing_at, d
    assert (d["audio_end"] is not None) == (sure_at == 1.0) == sound_counts(d["end_of_turn"], rule), d
    c = a.config
    expected = end_silence_ms(
        d["end_of_turn"], c.turn_end, c.vad.end_silence_ms, d["pitch_end"], d["user"], d["audio_end"]
    )
    assert abs(d["end_silence_ms"] - expected) <= 2, d  # the record rounds the probabilities


def test_a_damaged_turn_model_is_reported_and_the_words_decide(
    virtual_audio, llm_model, whisper_model, speech_dir, tmp_path
) -> None:
    damaged = tmp_path / "smart-turn-v3.2-cpu.onnx"
    damaged.write_bytes(b"\x08\x07" + b"\x00" * 1000)
    wav = espeak("What is the weather like today?", speech_dir / "weather.wav", wpm=140)
    rec, _, turn = spoken_turn(virtual_audio, llm_model, whisper_model, wav, max_tokens=8, turn_model=damaged)
    errors = [e for e in rec.of("error") if e.source == "turn"]
    assert len(errors) == 1 and "words alone" in errors[0].message, errors
    assert "models fetch smart-turn" in errors[0].message
    assert turn.audio_end is None and "weather" in turn.user.lower()


@pytest.mark.parametrize("reader", [False, True], ids=["sound-alone", "words-reader"])
def test_with_a_server_as_the_brain(
    virtual_audio, llm_model, whisper_model, turn_model_file, speech_dir, tmp_path, reader: bool
) -> None:
    """A server gives no end-of-turn probability for the words: without a local words reader the
    turn model's P alone sets the silence (without that too, a fixed 400 ms cut every pause
    longer than that); with one (brain/words_reader.py) the words' P decides as with a local
    brain, the sound asked only where the words are unsure."""
    wav = espeak("What is the weather like today?", speech_dir / "weather.wav", wpm=140)
    server = LlamaServer(llm_model, tmp_path / "server.log", n_ctx=1024)
    try:
        remote = RemoteConfig(
            server.url, max_tokens=8, temperature=0.0, words_model=llm_model if reader else None
        )
        _, a, turn = spoken_turn(
            virtual_audio,
            llm_model,
            whisper_model,
            wav,
            remote=remote,
            turn_model=turn_model_file,
            actions=False,  # the words' P is the reader's (an action would answer the weather)
        )
    finally:
        server.stop()
    d, c = turn.record(), a.config
    if reader:
        assert d["end_of_turn"] is not None and d["end_of_turn"] > c.turn_end.trailing_at, d
        assert (d["audio_end"] is not None) == sound_counts(d["end_of_turn"], c.turn_end), d
    else:
        assert d["end_of_turn"] is None and d["audio_end"] is not None, d
    expected = end_silence_ms(
        d["end_of_turn"], c.turn_end, c.vad.end_silence_ms, d["pitch_end"], d["user"], d["audio_end"]
    )
    assert abs(d["end_silence_ms"] - expected) <= 2, d
