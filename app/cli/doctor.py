"""`talk-llama doctor`: what this machine has, and what is missing, in one report.

Required pieces (exit 1 when absent): the default or configured models, llama-cpp-python and
pywhispercpp. Audio devices, TTS voices and a Qt platform are reported as warnings: the app runs
without them (text only, or terminal only) and says so.
"""

from __future__ import annotations

import argparse
import importlib.metadata as md
import logging
from dataclasses import dataclass
from pathlib import Path

from app.catalog import catalog
from app.ears import speex_aec
from app.system import frozen, logs
from app.system.pulse_watch import sound_server

log = logging.getLogger(__name__)
CPU_FLAGS = ("sse4_2", "avx", "avx2", "fma", "f16c", "avx512f", "avx_vnni", "amx_tile")


@dataclass
class Check:
    section: str
    ok: bool
    text: str
    required: bool = True


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("doctor", help="check models, audio, TTS, Qt and libraries")
    p.add_argument("--dir", help="models folder")
    p.add_argument(
        "--llm-url", help="also check this OpenAI-compatible server (default: the one in Settings)"
    )
    p.add_argument("--llm-model", default="", help="the model to use on it")
    p.set_defaults(run=run)


def _version(dist: str) -> str | None:
    try:
        return md.version(dist)
    except md.PackageNotFoundError:
        return None


def check_models(directory: Path) -> list[Check]:
    out = []
    for entry in catalog.load_catalog():
        st = catalog.status(entry, directory)
        if entry.default:
            text = f"{entry.name}: {st.path} " + ("sha256 ok" if st.verified else st.problem)
            if not st.present:
                text += f" (fix: `{catalog.FETCH_HINT}`)"
            out.append(Check("models", st.verified, text))
        elif st.present:
            out.append(Check("models", not st.problem, f"{entry.name}: {st.problem or 'present'}", False))
    return out


def check_libraries() -> list[Check]:
    out = []
    for dist, mod in (("llama-cpp-python", "llama_cpp"), ("pywhispercpp", "pywhispercpp")):
        ver = _version(dist)
        try:
            __import__(mod)
            out.append(Check("libraries", True, f"{dist} {ver}"))
        except Exception as exc:  # an import of a native library can fail in many ways
            out.append(Check("libraries", False, f"{dist} {ver or 'not installed'}: {exc}"))
    for dist in ("sounddevice", "pyttsx3", "PySide6-Essentials", "numpy", "soxr"):
        ver = _version(dist)
        out.append(Check("libraries", ver is not None, f"{dist} {ver or 'not installed'}", False))
    problem = speex_aec.speexdsp_problem()
    text = problem or "libspeexdsp: echo cancellation for hands-free barge-in"
    out.append(Check("libraries", not problem, text, False))
    return out


def check_cpu() -> list[Check]:
    try:
        with open("/proc/cpuinfo") as f:
            flags = set(next(line for line in f if line.startswith("flags")).split())
    except (OSError, StopIteration):
        return [Check("cpu", True, "CPU flags unknown (no /proc/cpuinfo)", False)]
    have = [f for f in CPU_FLAGS if f in flags]
    problem = frozen.cpu_problem()
    text = (problem + "\n" if problem else "") + "flags: " + " ".join(have)
    try:
        import llama_cpp

        text += f"\nllama.cpp system info: {llama_cpp.llama_print_system_info().decode().strip()}"
    except Exception:  # already reported under libraries
        pass
    return [Check("cpu", problem is None, text)]


def check_audio() -> list[Check]:
    try:
        import sounddevice as sd

        devices = sd.query_devices()
    except Exception as exc:  # PortAudio missing or broken
        return [Check("audio", False, f"audio unavailable: {exc} (install libportaudio2)", False)]
    ins = [d for d in devices if d["max_input_channels"] > 0]
    outs = [d for d in devices if d["max_output_channels"] > 0]

    def describe(found: list, kind: str, missing: str) -> Check:
        names = ", ".join(d["name"] for d in found[:6])
        text = f"{len(found)} {kind} device(s): {names}" if found else f"no {kind} device — {missing}"
        return Check("audio", bool(found), text, False)

    server = sound_server()
    watched = (
        f"sound server: {server} (a device unplugged mid-use is noticed and followed)"
        if server
        else "no PulseAudio/PipeWire server: an unplugged device stops its stream (reopen it in Settings)"
    )
    return [
        describe(ins, "input", "no microphone: typing still works"),
        describe(outs, "output", "no speaker: replies are shown as text"),
        Check("audio", True, watched, False),
    ]


def check_tts() -> list[Check]:
    from app.voice.voices import default_natural, system_voices

    try:
        system = system_voices()
        natural = default_natural()
    except Exception as exc:  # a pyttsx3 driver failure, a broken models folder
        return [Check("tts", False, f"voices unavailable: {exc}; replies stay text-only", False)]
    checks = [
        Check(
            "tts",
            natural is not None,
            f"natural English voice: {natural.name}"
            if natural
            else "no natural voice: `talk-llama models fetch joe` (English speaks with espeak-ng)",
            False,
        ),
        Check(
            "tts",
            bool(system),
            f"{len(system)} system voice(s), e.g. " + ", ".join(v.name for v in system[:5])
            if system
            else "no system voices (install espeak-ng): languages without a natural voice stay text-only",
            False,
        ),
    ]
    return checks


def check_qt() -> list[Check]:
    try:
        import PySide6

        plugins = Path(PySide6.__file__).parent / "Qt" / "plugins" / "platforms"
        names = sorted(p.name.removeprefix("libq").removesuffix(".so") for p in plugins.glob("*.so"))
        text = f"PySide6 {PySide6.__version__}, platform plugins: {', '.join(names)}"
        out = [Check("qt", True, text, False)]
    except Exception as exc:
        return [Check("qt", False, f"Qt unavailable: {exc}; `talk-llama chat` still works", False)]
    from app.gui.display import choose_platform, missing_xcb_packages

    platform = choose_platform()
    if platform.problem:
        out.append(Check("qt", False, platform.problem, False))
    else:
        out.append(Check("qt", True, f"window platform: {platform.qpa or 'QT_QPA_PLATFORM as set'}", False))
    if missing := missing_xcb_packages():
        out.append(Check("qt", False, f"X11 needs: {', '.join(missing)} (apt install them)", False))
    return out


def check_server(url: str, model: str) -> list[Check]:
    """A remote language model: reachable, which model, how much context (required when asked)."""
    from app.brain.records import BrainError
    from app.brain.server_check import describe_server

    try:
        return [Check("server", True, f"{url}: {describe_server(url, model)}")]
    except BrainError as exc:
        return [Check("server", False, str(exc))]


def check_logs() -> list[Check]:
    return [Check("logs", True, f"log file (native library messages too): {logs.log_path()}", False)]


def run(args: argparse.Namespace) -> int:
    directory = catalog.models_dir(args.dir)
    checks = [
        *check_models(directory),
        *check_libraries(),
        *check_cpu(),
        *check_audio(),
        *check_tts(),
        *check_qt(),
        *check_logs(),
    ]
    url = args.llm_url
    if url is None:
        from app.loop.settings import AppSettings

        url = AppSettings.load().llm_url
    if url:
        checks += check_server(url, args.llm_model)
    section = None
    for c in checks:
        if c.section != section:
            section = c.section
            print(f"[{section}]")
        mark = "ok  " if c.ok else ("FAIL" if c.required else "warn")
        lines = c.text.splitlines() or [""]
        print(f"  {mark} {lines[0]}")
        for extra in lines[1:]:
            print(f"       {extra}")
    missing = [c for c in checks if c.required and not c.ok]
    if missing:
        print(f"\n{len(missing)} required piece(s) missing; see FAIL lines above.")
        return 1
    print("\nall required pieces present")
    return 0
