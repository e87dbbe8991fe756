"""What differs when talk-llama runs from its PyInstaller bundle (packaging/), and the CPU check.

`prepare()` runs first thing in `app.cli.main`, before any native library loads:
- in the bundle, the child processes we start (`-s` speak commands, a browser, `apt`) get the
  user's own `LD_LIBRARY_PATH` back: PyInstaller's bootloader points it at the bundle and keeps
  the original in `LD_LIBRARY_PATH_ORIG`. Our own process is not affected (the dynamic loader
  read the variable when the process started);
- in the bundle, espeak-ng finds its voices in the bundle (`ESPEAK_DATA_PATH`) unless the user
  set their own;
- everywhere: a CPU without the instructions llama.cpp and whisper.cpp were built for is refused
  with a sentence instead of dying of SIGILL in the first model load (`missing_cpu_features`,
  from CPUID as numpy reads it: /proc/cpuinfo shows the host's flags even where an emulator or
  hypervisor does not let this process use them; tested under qemu-user with an older CPU).

Below every stage: imports nothing from the app.
"""

from __future__ import annotations

import importlib
import os
import platform
import sys
from pathlib import Path

# What the portable llama-cpp-python build uses (Makefile LLAMA_CMAKE_ARGS); pywhispercpp's
# wheel asks for no more than these.
REQUIRED_X86_FLAGS = ("avx", "avx2", "fma", "f16c")
CPUINFO = Path("/proc/cpuinfo")


def is_bundle() -> bool:
    """True inside the PyInstaller bundle."""
    return bool(getattr(sys, "frozen", False)) and hasattr(sys, "_MEIPASS")


def bundle_dir() -> Path:
    """The bundle's `_internal` folder (only meaningful when `is_bundle()`)."""
    return Path(getattr(sys, "_MEIPASS", Path(sys.executable).parent))


def _cpuid_features() -> dict[str, bool] | None:
    """What this process can execute, from CPUID as numpy's dispatcher reads it at start-up
    (None when numpy does not say). Unlike /proc/cpuinfo (the kernel's view of the host) this is
    right under an emulator or a hypervisor that hides instructions."""
    for module in ("numpy._core._multiarray_umath", "numpy.core._multiarray_umath"):
        try:
            features = importlib.import_module(module).__cpu_features__
        except (ImportError, AttributeError):
            continue
        return dict(features)
    return None


NUMPY_NAMES = {"avx": "AVX", "avx2": "AVX2", "fma": "FMA3", "f16c": "F16C"}


def missing_cpu_features(cpuinfo: str | None = None, machine: str | None = None) -> list[str]:
    """The required instruction-set flags this CPU lacks ([] when all are there or the machine
    is not x86-64). Read from CPUID (numpy's) when available, else /proc/cpuinfo's flags; a
    `cpuinfo` text given by the caller is read instead of both."""
    if (machine or platform.machine()).lower() not in ("x86_64", "amd64"):
        return []
    if cpuinfo is None:
        if (features := _cpuid_features()) is not None:
            return [f for f in REQUIRED_X86_FLAGS if not features.get(NUMPY_NAMES[f], False)]
        try:
            cpuinfo = CPUINFO.read_text(encoding="ascii", errors="replace")
        except OSError:
            return []
    for line in cpuinfo.splitlines():
        if line.startswith("flags"):
            flags = set(line.partition(":")[2].split())
            return [f for f in REQUIRED_X86_FLAGS if f not in flags]
    return []


def cpu_problem() -> str | None:
    """One sentence for the user when this CPU cannot run the built-in models, else None."""
    missing = missing_cpu_features()
    if not missing:
        return None
    how = (
        "build talk-llama from its sources on this computer (make install LLAMA_CMAKE_ARGS=-DGGML_NATIVE=ON)"
        if not is_bundle()
        else "install it from its sources instead of the bundle (see the README)"
    )
    return (
        f"this processor lacks {', '.join(f.upper() for f in missing)}, which talk-llama's "
        f"built-in llama.cpp and whisper.cpp need; it would crash. To use it here, {how}."
    )


def prepare() -> None:
    """Fix up the environment for the bundle (no-op elsewhere). Call before native libraries."""
    if not is_bundle():
        return
    original = os.environ.pop("LD_LIBRARY_PATH_ORIG", None)
    if original is not None:
        os.environ["LD_LIBRARY_PATH"] = original
    else:
        os.environ.pop("LD_LIBRARY_PATH", None)
    voices = bundle_dir()
    if "ESPEAK_DATA_PATH" not in os.environ and (voices / "espeak-ng-data").is_dir():
        os.environ["ESPEAK_DATA_PATH"] = str(voices)
