"""`talk-llama self-test`: every native part of the app, exercised for real in one process.

One line per part, `ok` or `FAIL` and what was done; exit status 0 only when every part works.
Made for the bundle (packaging/): a missing library, a Qt plugin that cannot load or an espeak
without its voices shows here as one line instead of a crash in the middle of a conversation.

Parts: the CPU's instruction set, Qt's platform plugin (the display's, or `offscreen` without
one) with font rendering, llama.cpp (a vocabulary-only GGUF is enough: the default model is used
when present, for one generated token), whisper.cpp (the default model transcribing espeak's
speech when present, else the library's system info), PortAudio, webrtcvad, soxr, libsndfile,
espeak-ng synthesizing to memory, the natural voice (Piper on onnxruntime: the default voice
synthesizing to memory when present, else Piper phonemizing with its own espeak-ng data), the
actions' sentences and number parser, and the library path child processes get. libpulse belongs to
the host; it is reported, not required.

Blocking; a few seconds. Imports its libraries inside each check so one failure names itself.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import logging
import os
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

from app.catalog import catalog
from app.system import frozen, logs

log = logging.getLogger(__name__)
RATE = 16000
PHRASE = "Good morning, how are you today?"
# A vocabulary-only GGUF from llama.cpp's sources: the bundle carries one (packaging/README.md).
VOCAB_FILE = "ggml-vocab-llama-spm.gguf"


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("self-test", help="check every native part (Qt, llama, whisper, audio, voices)")
    p.add_argument("--dir", help="models folder (default: the usual one)")
    p.set_defaults(run=run)


def _default_model(kind: str, directory: Path) -> Path | None:
    """The default model of `kind` when present and intact (checksum not re-hashed), else None."""
    path = catalog.default_model_path(kind, directory)
    try:
        catalog.check_file(path, kind, verify_hash=False)
    except catalog.ModelError:
        return None
    return path


def loaded_from(library: str) -> str:
    """The folder this process loaded `library` (a file name prefix, e.g. "libllama") from, per
    /proc/self/maps; "?" when it is not mapped (or not on Linux)."""
    try:
        maps = Path("/proc/self/maps").read_text()
    except OSError:
        return "?"
    for line in maps.splitlines():
        path = line.split(maxsplit=5)[-1] if line.count(" ") >= 5 else ""
        if Path(path).name.startswith(library):
            return str(Path(path).parent)
    return "?"


def check_cpu(_: Path) -> str:
    if problem := frozen.cpu_problem():
        raise RuntimeError(problem)
    return "instruction set: " + ", ".join(f.upper() for f in frozen.REQUIRED_X86_FLAGS)


def check_qt(_: Path) -> str:
    from app.gui.display import choose_platform

    platform = choose_platform()
    if platform.problem or not (platform.qpa or os.environ.get("QT_QPA_PLATFORM")):
        os.environ["QT_QPA_PLATFORM"] = "offscreen"
    elif platform.qpa:
        os.environ["QT_QPA_PLATFORM"] = platform.qpa
    from PySide6.QtCore import Qt
    from PySide6.QtGui import QGuiApplication, QImage, QPainter

    _app = QGuiApplication.instance() or QGuiApplication(["talk-llama"])  # alive while it paints
    qpa_name = QGuiApplication.platformName()
    image = QImage(64, 24, QImage.Format.Format_ARGB32)
    image.fill(Qt.GlobalColor.white)
    painter = QPainter(image)
    painter.drawText(2, 18, "Ab")
    painter.end()
    inked = sum(image.pixel(x, y) != 0xFFFFFFFF for x in range(64) for y in range(24))
    if not inked:
        raise RuntimeError("text renders as nothing (no fonts? install fonts-dejavu-core)")
    return f"platform plugin '{qpa_name}', text rendered ({inked} px)"


def check_llama(directory: Path) -> str:
    import llama_cpp

    model = _default_model("llm", directory)
    if model is None:
        vocab = frozen.bundle_dir() / "vocab" / VOCAB_FILE
        if not frozen.is_bundle() or not vocab.is_file():
            info = llama_cpp.llama_print_system_info().decode().strip()
            return f"library loaded ({info[:60]}…); no model to run (`talk-llama models fetch`)"
        # A vocabulary has no training context, so llama.cpp warns that any context exceeds it,
        # through llama-cpp-python's log callback (Python's sys.stderr): into the log instead.
        with logs.NATIVE_LOAD, contextlib.redirect_stderr(io.StringIO()) as chatter:
            llm = llama_cpp.Llama(str(vocab), vocab_only=True, verbose=False)
            tokens = llm.tokenize(PHRASE.encode())
            llm.close()
        log.info("llama.cpp on the vocabulary: %s", chatter.getvalue().strip())
        if not tokens:
            raise RuntimeError("the vocabulary produced no tokens")
        return f"{VOCAB_FILE}: {len(tokens)} tokens for {PHRASE!r}; from {loaded_from('libllama')}"
    with logs.NATIVE_LOAD:
        llm = llama_cpp.Llama(str(model), n_ctx=64, n_threads=1, verbose=False)
    out = llm.create_completion("The capital of France is", max_tokens=1, temperature=0.0)
    llm.close()
    word = out["choices"][0]["text"]  # type: ignore[index]  # not streamed: one response
    return f"{model.name}: 'The capital of France is' → {word!r}; from {loaded_from('libllama')}"


def _speech_16k() -> np.ndarray:
    import soxr

    from app.voice.synthesizer import Synthesizer

    synth = Synthesizer.get()
    speech = synth.render(PHRASE, rate=140)
    return soxr.resample(speech.pcm, speech.sample_rate, RATE).astype(np.float32)


def check_whisper(directory: Path) -> str:
    model = _default_model("whisper", directory)
    if model is None:
        import _pywhispercpp as pw

        info = pw.whisper_print_system_info()
        return (
            f"library loaded from {loaded_from('libwhisper')} ({info[:40]}…); "
            "no model to run (`talk-llama models fetch`)"
        )
    from app.ears.transcriber import SttConfig, Transcriber

    text = Transcriber(SttConfig(model_path=model, n_threads=1)).transcribe(_speech_16k()).text
    if "morning" not in text.lower():
        raise RuntimeError(f"espeak's {PHRASE!r} was heard as {text!r}")
    return f"{model.name}: espeak's {PHRASE!r} heard as {text!r}; from {loaded_from('libwhisper')}"


def check_portaudio(_: Path) -> str:
    import sounddevice as sd

    devices = sd.query_devices()
    ins = sum(d["max_input_channels"] > 0 for d in devices)
    outs = sum(d["max_output_channels"] > 0 for d in devices)
    version = sd.get_portaudio_version()[1].split(",")[0]
    return f"{version} from {loaded_from('libportaudio')}; {ins} input / {outs} output device(s)"


def check_webrtcvad(_: Path) -> str:
    import webrtcvad

    vad = webrtcvad.Vad(2)
    if vad.is_speech(bytes(640), RATE):
        raise RuntimeError("20 ms of silence classified as speech")
    return "20 ms of silence classified as silence"


def check_soxr(_: Path) -> str:
    import soxr

    out = soxr.resample(np.zeros(22050, dtype=np.float32), 22050, RATE)
    if abs(len(out) - RATE) > 1:
        raise RuntimeError(f"1 s at 22050 Hz became {len(out)} samples at 16 kHz")
    return f"1 s resampled 22050 → 16000 Hz ({len(out)} samples)"


def check_sndfile(_: Path) -> str:
    import soundfile as sf

    buf = io.BytesIO()
    sf.write(buf, np.zeros(RATE, dtype=np.float32), RATE, format="WAV")
    buf.seek(0)
    data, rate = sf.read(buf, dtype="float32")
    if rate != RATE or len(data) != RATE:
        raise RuntimeError("a WAV written to memory read back differently")
    return f"{sf.__libsndfile_version__}: WAV written and read in memory"


def check_espeak(_: Path) -> str:
    from app.voice.synthesizer import Synthesizer, list_voices

    synth = Synthesizer.get()
    speech = synth.render(PHRASE)
    pcm = speech.pcm
    if not len(pcm) or float(np.abs(pcm).max()) < 0.01:
        raise RuntimeError("synthesis produced no sound")
    data = os.environ.get("ESPEAK_DATA_PATH", "the system's")
    return (
        f"{len(list_voices())} voices (data: {data}); {PHRASE!r} → "
        f"{len(pcm) / speech.sample_rate:.2f} s of sound; from {loaded_from('libespeak-ng')}"
    )


def check_voice(directory: Path) -> str:
    import onnxruntime

    from app.voice.natural_voice import NaturalSynthesizer

    where = f"onnxruntime {onnxruntime.__version__} from {Path(onnxruntime.__file__).parent}"
    model = _default_model("voice", directory)
    if model is None:
        from piper import PiperVoice
        from piper.config import PhonemeType, PiperConfig

        config = PiperConfig(0, 1, 22050, "en-us", {}, PhonemeType.ESPEAK)
        phonemes = PiperVoice(session=None, config=config).phonemize(PHRASE)
        if not phonemes or not phonemes[0]:
            raise RuntimeError("piper's espeak-ng made no phonemes")
        return f"piper phonemized {PHRASE!r} ({len(phonemes[0])} phonemes); no voice model; {where}"
    speech = NaturalSynthesizer.get(model).render(PHRASE)
    if not len(speech.pcm) or float(np.abs(speech.pcm).max()) < 0.01:
        raise RuntimeError("synthesis produced no sound")
    return (
        f"{model.name}: {PHRASE!r} → {len(speech.pcm) / speech.sample_rate:.2f} s of sound, "
        f"{len(speech.words)} word timings; {where}"
    )


def check_children(_: Path) -> str:
    """A child process (the `-s` speak command, a browser) sees the user's library path, not the
    bundle's (app.system.frozen.prepare)."""
    import subprocess

    seen = subprocess.run(
        ["/bin/sh", "-c", 'printf %s "${LD_LIBRARY_PATH-}"'], capture_output=True, text=True, timeout=10
    ).stdout
    if frozen.is_bundle() and str(frozen.bundle_dir()) in seen:
        raise RuntimeError(f"child processes get the bundle's LD_LIBRARY_PATH ({seen})")
    return f"child processes get LD_LIBRARY_PATH={seen or '(unset)'}"


def check_actions(_: Path) -> str:
    """Home Assistant's sentences and number words, the app's own, the sum evaluator and the
    unit table (data files and a native number parser the bundle must carry)."""
    import tempfile

    from app.actions.calc import convert
    from app.actions.skills import Actions

    with tempfile.TemporaryDirectory() as folder:
        actions = Actions(Path(folder), lambda *_: None)
        try:
            request = actions.pick("What is twelve times seven?", "en")
            answer = actions.do(request).reply if request is not None else ""
            timer = actions.pick("Stelle einen Timer für fünf Minuten.", "de")
        finally:
            actions.close()
    if answer != "Twelve times seven is 84." or timer is None:
        raise RuntimeError(f"a spoken sum or a German timer was not understood ({answer!r})")
    if convert("a pound", "grams") is None:
        raise RuntimeError("the unit table did not load")
    return "a spoken sum, a German timer and a unit conversion understood"


def check_libpulse(_: Path) -> str:
    from app.system.pulse_watch import sound_server

    server = sound_server()
    return f"sound server {server}" if server else "loaded; no PulseAudio/PipeWire server running"


# (name, check, required): a check returns what it did or raises with what went wrong.
CHECKS: list[tuple[str, Callable[[Path], str], bool]] = [
    ("cpu", check_cpu, True),
    ("qt", check_qt, True),
    ("llama", check_llama, True),
    ("whisper", check_whisper, True),
    ("portaudio", check_portaudio, True),
    ("webrtcvad", check_webrtcvad, True),
    ("soxr", check_soxr, True),
    ("sndfile", check_sndfile, True),
    ("espeak", check_espeak, True),
    ("voice", check_voice, True),
    ("children", check_children, True),
    ("actions", check_actions, True),
    ("libpulse", check_libpulse, False),
]


def run(args: argparse.Namespace) -> int:
    directory = catalog.models_dir(args.dir)
    cpu_ok = frozen.cpu_problem() is None
    failed = 0
    for name, check, required in CHECKS:
        t0 = time.perf_counter()
        if not cpu_ok and name in ("llama", "whisper"):
            ok, text = False, "skipped: this CPU would crash it (see the cpu line)"
        else:
            try:
                ok, text = True, check(directory)
            except Exception as exc:  # every failure, whatever the library raised, is one line
                log.debug("self-test %s failed", name, exc_info=True)
                ok, text = False, f"{type(exc).__name__}: {exc}"
        mark = "ok  " if ok else ("FAIL" if required else "warn")
        failed += not ok and required
        print(f"{mark} {name:<10} {text} ({(time.perf_counter() - t0) * 1000:.0f} ms)", flush=True)
    print("all native parts work" if not failed else f"{failed} part(s) failed", flush=True)
    return 0 if not failed else 1
