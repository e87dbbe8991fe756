"""OS names for the app's threads, as `top -H`, `ps -L` and /proc show them.

Python names its threads for itself only (before 3.14). A native thread inherits the name of the
thread that starts it, so once the stt thread is named, whisper's OpenMP workers carry its name,
and ggml's workers carry the llm thread's: the CPU a stage uses can be read per name
(bench/thread_cpu.py). Linux only; elsewhere `name_os_thread` does nothing.
"""

from __future__ import annotations

import ctypes
import sys
import threading
from collections.abc import Callable

_PR_SET_NAME = 15  # prctl option: the calling thread's name, 15 bytes and a NUL
_libc = ctypes.CDLL(None, use_errno=True) if sys.platform.startswith("linux") else None


def name_os_thread(name: str | None = None) -> None:
    """Give the calling thread its OS name: `name`, or its Python name (the first 15 bytes)."""
    if _libc is None:
        return
    raw = (name or threading.current_thread().name).encode("utf-8", "replace")[:15]
    _libc.prctl(_PR_SET_NAME, ctypes.c_char_p(raw), 0, 0, 0)


def named_thread(target: Callable[[], object], name: str) -> threading.Thread:
    """A daemon thread (not started) called `name` by Python and, once it runs, by the OS."""

    def run() -> None:
        name_os_thread(name)
        target()

    return threading.Thread(target=run, name=name, daemon=True)
