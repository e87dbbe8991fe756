"""Test session set-up: real models, a private PulseAudio server, offscreen Qt.

The audio environment must exist before anything imports sounddevice (PortAudio enumerates
devices once), so the server starts in pytest_configure, before test modules are imported.
"""

from __future__ import annotations

import gc
import os
import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf
import soxr

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from app.catalog import catalog
from tests.support import xvfb as xvfb_server
from tests.support.pulse import VirtualAudio
from tests.support.speech import espeak_command

ARTIFACTS = Path(__file__).parent / "artifacts"
_AUDIO: VirtualAudio | None = None


def pytest_configure(config: pytest.Config) -> None:
    global _AUDIO
    ARTIFACTS.mkdir(exist_ok=True)
    if shutil.which("pulseaudio"):
        _AUDIO = VirtualAudio().start()


# Fixtures of the real-time rigs: a test that plays or records through the virtual devices, or
# runs a window on an X server, runs in real time (seconds each) and belongs to the full suite.
REAL_TIME = {"virtual_audio", "x11"}


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """`make check` runs `-m "not slow"`: the real-time rigs and the long runs are `slow`."""
    for item in items:
        if REAL_TIME & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.audio)
            item.add_marker(pytest.mark.slow)


def pytest_unconfigure(config: pytest.Config) -> None:
    if _AUDIO is not None:
        _AUDIO.stop()


@pytest.fixture
def config_dir(tmp_path, monkeypatch) -> Path:
    """Settings, sessions and logs of the app under test in a fresh folder."""
    monkeypatch.setenv("TALK_LLAMA_CONFIG", str(tmp_path / "config"))
    return tmp_path / "config"


@pytest.fixture(scope="session")
def virtual_audio() -> VirtualAudio:
    if _AUDIO is None:
        pytest.fail("PulseAudio is not installed; run `make test`, which installs it")
    return _AUDIO


@pytest.fixture(autouse=True)
def _collect_garbage():
    """After each test, free what it left in reference cycles (an assistant's threads and
    callbacks refer back to it): Python's collector runs by object counts, not by the native
    memory a cycle holds, and a run of audio tests otherwise kept every test's models (3 GB a
    pass of the audio set)."""
    yield
    gc.collect()


@pytest.fixture(scope="session")
def llm_model() -> Path:
    path = catalog.default_model_path("llm")
    catalog.check_file(path, "llm")
    return path


@pytest.fixture(scope="session")
def instruct_model() -> Path:
    """The real instruct model beside the default (Qwen2.5 Coder 0.5B; `make test` fetches it)."""
    entry = catalog.find_entry("qwen2.5-coder-0.5b")
    path = catalog.models_dir() / entry.file
    catalog.check_file(path, "llm", entry)
    return path


@pytest.fixture(scope="session")
def whisper_model() -> Path:
    path = catalog.default_model_path("whisper")
    catalog.check_file(path, "whisper")
    return path


@pytest.fixture(scope="module")
def transcriber(whisper_model: Path):
    """The default whisper model, loaded once per test module that uses it."""
    from app.ears.transcriber import SttConfig, Transcriber

    return Transcriber(SttConfig(whisper_model))


@pytest.fixture(scope="session")
def multilingual_whisper() -> Path:
    """The model a language other than English is heard with (base-q5_1), fetched by `make test`."""
    from app.catalog.languages import whisper_model_for

    path = whisper_model_for("fr")
    catalog.check_file(path, "whisper")
    return path


@pytest.fixture(scope="session")
def natural_voice_model() -> Path:
    """The default natural voice (Piper), fetched by `make models`."""
    path = catalog.default_model_path("voice")
    catalog.check_file(path, "voice")
    return path


def espeak(text: str, out: Path, rate: int = 16000, voice: str = "en-us", wpm: int = 160) -> Path:
    """Synthesize `text` with the espeak-ng command (independent of the app's TTS) as a WAV."""
    raw = out.with_suffix(".raw.wav")
    subprocess.run(espeak_command(text, raw, voice, wpm), check=True)
    data, sr = sf.read(raw, dtype="float32")
    raw.unlink()
    if sr != rate:
        data = soxr.resample(data, sr, rate)
    sf.write(out, data, rate, subtype="PCM_16")
    return out


def words(text: str) -> list[str]:
    """A transcript's words, lower case, without punctuation (apostrophes kept)."""
    return re.findall(r"[a-z']+", text.lower())


def load16k(path: Path) -> np.ndarray:
    data, sr = sf.read(path, dtype="float32", always_2d=True)
    mono = data.mean(axis=1)
    return soxr.resample(mono, sr, 16000) if sr != 16000 else mono


@pytest.fixture(scope="session")
def speech_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("speech")


@pytest.fixture
def x11(tmp_path):
    """A private Xvfb display; yields the environment for a Qt xcb subprocess."""
    if shutil.which("Xvfb") is None:
        pytest.fail("Xvfb is not installed; run `make test`, which installs it")
    display = f":{80 + os.getpid() % 19}"
    xvfb = xvfb_server.start(display)
    yield {**os.environ, "DISPLAY": display, "QT_QPA_PLATFORM": "xcb", "TALK_LLAMA_CONFIG": str(tmp_path)}
    xvfb.terminate()
    xvfb.wait(5)


@pytest.fixture(scope="session")
def speech_model_file() -> Path:
    """The default speech detector (Silero VAD), fetched by `make models`."""
    path = catalog.default_model_path("vad")
    catalog.check_file(path, "vad")
    return path


@pytest.fixture(scope="session")
def turn_model_file() -> Path:
    """The default audio turn model (Smart Turn v3.2), fetched by `make models`."""
    path = catalog.default_model_path("turn")
    catalog.check_file(path, "turn")
    return path
