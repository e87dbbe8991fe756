"""Whisper model quantization (app.catalog.whisper_quant) on the real tiny.en model and ggml's quantizer."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from app.catalog import catalog, ggml_whisper
from app.catalog.fetch import fetch
from app.catalog.ggml_whisper import GgmlFormatError
from app.catalog.whisper_quant import QuantizeError, quantize, quantize_matrix
from app.ears.transcriber import SttConfig, Transcriber
from tests.conftest import espeak, load16k


@pytest.fixture(scope="module")
def whisper_model() -> Path:
    """The f16 tiny.en that the quantized default is made from (`make test` fetches both)."""
    path = catalog.models_dir() / catalog.find_entry("tiny.en").file
    catalog.check_file(path, "whisper")
    return path


@pytest.fixture(scope="module")
def quantized(whisper_model: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """`models fetch tiny.en-q4_0` into a scratch folder that already holds the f16 model."""
    folder = tmp_path_factory.mktemp("models")
    os.symlink(whisper_model, folder / whisper_model.name)
    return fetch(catalog.find_entry("tiny.en-q4_0"), folder)


def test_fetch_quantizes_deterministically(quantized: Path, whisper_model: Path) -> None:
    entry = catalog.find_entry("tiny.en-q4_0")
    assert catalog.sha256_of(quantized) == entry.sha256  # same bytes as the pinned catalog file
    hp, n_tok, n_tensors = ggml_whisper.read_header(quantized)
    _, _, f16_tensors = ggml_whisper.read_header(whisper_model)
    assert hp.weight_type.name == "q4_0" and hp.ftype == 2002
    assert n_tensors == f16_tensors and n_tok == 50256
    assert quantized.stat().st_size < whisper_model.stat().st_size / 2.5
    assert not [p for p in quantized.parent.iterdir() if p.name.startswith(".fetch-") or ".part-" in p.name]


def test_quantized_model_transcribes(quantized: Path, tmp_path: Path) -> None:
    audio = load16k(espeak("Please turn off the lights in the kitchen.", tmp_path / "q.wav", wpm=140))
    result = Transcriber(SttConfig(quantized)).transcribe(audio)
    text = result.text.lower()
    assert not result.rejected, result
    for word in ("turn", "off", "lights", "kitchen"):
        assert word in text, text


def test_q8_0_blocks_hold_the_matrix() -> None:
    """Decode ggml's q8_0 blocks by hand (fp16 scale + 32 int8 per block, row-major over
    rows of `n_per_row`): the layout and orientation whisper.cpp will read."""
    rng = np.random.default_rng(3)
    m = rng.standard_normal((3, 64)).astype(np.float32)
    raw = quantize_matrix(m, "q8_0")
    assert len(raw) == 3 * 2 * 34
    blocks = np.frombuffer(raw, dtype=np.dtype([("d", "<f2"), ("q", "i1", 32)]))
    decoded = (blocks["d"].astype(np.float32)[:, None] * blocks["q"]).reshape(3, 64)
    scale = np.repeat(blocks["d"].astype(np.float32), 32).reshape(3, 64)
    # error within half a step, plus the fp16 rounding of the block scale
    assert np.all(np.abs(decoded - m) <= scale * 0.6)


def test_refuses_bad_input(quantized: Path, whisper_model: Path, tmp_path: Path) -> None:
    dest = tmp_path / "out.bin"
    with pytest.raises(QuantizeError, match="unknown quantization"):
        quantize(whisper_model, dest, "q3_x")
    with pytest.raises(QuantizeError, match="has q4_0 weights"):
        quantize(quantized, dest, "q8_0")
    truncated = tmp_path / "cut.bin"
    truncated.write_bytes(whisper_model.read_bytes()[:20_000_000])
    with pytest.raises(GgmlFormatError, match="truncated"):
        quantize(truncated, dest, "q4_0")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cut.bin"]  # nothing partial left behind


def test_models_quantize_cli(whisper_model: Path, quantized: Path, tmp_path: Path) -> None:
    dest = tmp_path / "tiny-q8.bin"
    cli = [sys.executable, "-m", "app", "models", "quantize"]
    ok = subprocess.run(
        [*cli, str(whisper_model), str(dest), "--type", "q8_0"], capture_output=True, text=True
    )
    assert ok.returncode == 0 and "as q8_0" in ok.stdout, ok.stdout + ok.stderr
    assert ggml_whisper.read_header(dest)[0].weight_type.name == "q8_0"
    again = subprocess.run([*cli, str(quantized)], capture_output=True, text=True)
    assert again.returncode == 1 and "quantize an f16 model" in again.stdout
