"""The speech detector trained on real voices (#33 point 2): Silero VAD beside WebRTC's model and
the energy test in the hands-free segmenter. Speech a few dB over steady noise starts one whole
utterance with it; noise alone never does; a quiet room never runs it; a missing or damaged
model leaves WebRTC's with a message. Real model and audio (espeak-ng and the natural voice over
bench/vad's noises); the loop test uses the virtual microphone."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from app.ears.silero import SpeechModel, SpeechModelUnavailable
from app.ears.vad import RATE, Segmenter, VadConfig
from tests.conftest import espeak
from tests.support.assistant_rig import spoken_turn
from tests.support.phrases import PHRASES
from tests.support.sounds import noise
from tests.support.speech import until_quiet
from tests.support.voices import PIPER, speak


@pytest.fixture(scope="module")
def model(speech_model_file: Path) -> SpeechModel:
    return SpeechModel(speech_model_file)


def over_pink_noise(speech: np.ndarray, snr_db: float, rng: np.random.Generator) -> np.ndarray:
    """1.5 s of pink noise at -30 dBFS, then `speech` at `snr_db` over it, then 1 s more noise."""
    background = noise("pink", 1.5 + len(speech) / RATE + 1.0, rng)
    at = int(1.5 * RATE)
    gain = 10 ** ((-30 + snr_db) / 20) / np.sqrt(np.mean(speech**2))
    background[at : at + len(speech)] += speech * gain
    return background


def kinds(model: SpeechModel | None, audio: np.ndarray) -> list[str]:
    segmenter = Segmenter(VadConfig())
    segmenter.hear_with(model)
    return [e.kind for e in segmenter.feed(audio)]


@pytest.mark.parametrize("voice", ["en-us", "en-gb-scotland", PIPER])
def test_speech_5_db_over_pink_noise_is_one_utterance_with_the_speech_model(
    model, natural_voice_model, voice
) -> None:
    """bench/vad: WebRTC and the energy test alone miss 35 of 60 such onsets and split others;
    with the speech model none is missed or split (60 of 60). Deterministic audio."""
    rng = np.random.default_rng(11)
    for question in PHRASES[:3]:
        heard = kinds(model, over_pink_noise(until_quiet(speak(question, voice)), 5.0, rng))
        assert heard.count("speech_started") == 1 and heard.count("utterance") == 1, (question, heard)


def test_noise_alone_never_starts_an_utterance_with_the_speech_model(model) -> None:
    """Steady noise, mains hum and typing at a desk's level (-30 dBFS), 10 s each."""
    rng = np.random.default_rng(5)
    for kind in ("white", "pink", "brown", "hum", "keyboard"):
        assert "speech_started" not in kinds(model, noise(kind, 10.0, rng)), kind


def test_a_quiet_room_never_runs_the_speech_model(model, monkeypatch) -> None:
    """Frames below the absolute floor (-50 dBFS) are not given to the model: an idle microphone
    costs what it did without it. (A spy counts the real model's runs.)"""
    runs: list[int] = []
    real_run = SpeechModel.run

    def counted(self, x, state):
        runs.append(1)
        return real_run(self, x, state)

    monkeypatch.setattr(SpeechModel, "run", counted)
    quiet = noise("silence", 10.0, np.random.default_rng(2))  # -70 dBFS
    assert "speech_started" not in kinds(model, quiet) and not runs
    kinds(model, over_pink_noise(until_quiet(speak(PHRASES[0], "en-us")), 15.0, np.random.default_rng(3)))
    assert runs  # the spy does see the model run on sound


def test_a_missing_or_wrong_file_says_what_to_do(tmp_path: Path, turn_model_file: Path) -> None:
    with pytest.raises(SpeechModelUnavailable, match="talk-llama models fetch"):
        SpeechModel(tmp_path / "silero_vad.onnx")
    with pytest.raises(SpeechModelUnavailable, match="not a Silero VAD"):
        SpeechModel(turn_model_file)  # an ONNX model, of something else


def test_a_damaged_speech_model_is_reported_and_webrtcs_decides(
    virtual_audio, llm_model, whisper_model, speech_dir, tmp_path
) -> None:
    damaged = tmp_path / "silero_vad.onnx"
    damaged.write_bytes(b"\x08\x07" + b"\x00" * 1000)
    wav = espeak("What is the weather like today?", speech_dir / "weather.wav", wpm=140)
    vad = VadConfig(speech_model=damaged)
    rec, _, turn = spoken_turn(virtual_audio, llm_model, whisper_model, wav, max_tokens=8, vad=vad)
    errors = [e for e in rec.of("error") if e.source == "vad"]
    assert len(errors) == 1 and "models fetch silero-vad" in errors[0].message, errors
    assert "weather" in turn.user.lower()
