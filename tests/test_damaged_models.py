"""No model file can crash the app (issue #13, point 2): damaged Whisper and GGUF files give a
message and the app stays up, through the CLI and the window."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from app.catalog.catalog import ModelError, check_file
from app.loop.settings import AppSettings
from tests.conftest import espeak

KINDS = ("truncated", "zero-filled", "header-only", "random")


def damaged(original: Path, kind: str, out: Path) -> Path:
    data = original.read_bytes()
    rng = np.random.default_rng(7)
    made = {
        "truncated": data[:3_000_000],
        "zero-filled": bytes(len(data) // 8),
        "header-only": data[:64],
        "random": data[:4] + rng.bytes(2_000_000),
    }[kind]
    out.write_bytes(made)
    return out


@pytest.mark.parametrize("kind", KINDS)
def test_damaged_whisper_files_are_refused_before_whisper_sees_them(
    whisper_model, speech_dir, tmp_path, kind
):
    bad = damaged(whisper_model, kind, tmp_path / f"{kind}.bin")
    with pytest.raises(ModelError, match="Speech model"):
        check_file(bad, "whisper")
    wav = espeak("Hello there.", speech_dir / "damaged-hello.wav")
    run = subprocess.run(
        [sys.executable, "-m", "app", "transcribe", "-m", str(bad), str(wav)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 2, (run.returncode, run.stderr[-500:])  # a crash would be -11 / 139
    said = run.stdout + run.stderr
    assert "Speech model" in said and str(bad) in said


@pytest.mark.parametrize("kind", KINDS)
def test_damaged_gguf_files_give_a_message_not_a_crash(llm_model, tmp_path, kind):
    bad = damaged(llm_model, kind, tmp_path / f"{kind}.gguf")
    run = subprocess.run(
        [sys.executable, "-m", "app", "chat", "--text", "-ml", str(bad)],
        input="Hello?\n",
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "TALK_LLAMA_CONFIG": str(tmp_path / "config")},
    )
    assert run.returncode == 2, (run.returncode, run.stderr[-500:])
    assert "error:" in run.stderr and ("Language model" in run.stderr or "Failed to load model" in run.stderr)


def test_the_window_stays_up_with_damaged_models(
    qtbot, config_dir, virtual_audio, llm_model, whisper_model, tmp_path
):
    from tests.test_gui import close_window, open_window

    settings = AppSettings(
        llm_model=str(damaged(llm_model, "random", tmp_path / "bad.gguf")),
        whisper_model=str(damaged(whisper_model, "truncated", tmp_path / "bad.bin")),
    )
    w = open_window(qtbot, settings, wait_loaded=False)
    qtbot.waitUntil(lambda: {"llm", "whisper"} <= set(w.banners.messages()), timeout=60000)
    assert "bad.bin is damaged" in w.banners.messages()["whisper"]
    qtbot.waitUntil(lambda: w.loading.isHidden(), timeout=30000)
    assert w.isVisible()
    close_window(w)
