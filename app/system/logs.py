"""Where logs go: a rotating file in the platform's state folder, and the terminal only when asked.

Native libraries (llama.cpp, ggml, whisper.cpp, Qt, PortAudio) print straight to file descriptor
2, so their chatter ("repack tensor…", "whisper_model_load…", an aborted early transcription's
"failed to encode") would fill the terminal. `setup()` points fd 2 at a pipe; a reader thread
appends each line to the log file (logger `native`) and echoes it to the terminal only with
`-v`. Python's `sys.stderr` (tracebacks, the console log handler, `print(..., file=sys.stderr)`)
keeps writing to the real terminal through a duplicate of the original fd 2.

Terminal: warnings and errors (`-v`: info and native lines, `-vv`: debug). File: info and native
lines (`-vv`: debug), rotated at 1 MB, 3 old files kept, mode 0600 (it can hold what was said).
Call `setup()` once, from the main thread, before native libraries load.

llama-cpp-python (verbose=False) points fd 2 itself at /dev/null, for the whole process, while it
loads a model; a whisper model loading in another thread at that moment would lose its lines.
Code that loads a native model holds `NATIVE_LOAD` so the two loads never overlap.
"""

from __future__ import annotations

import atexit
import contextlib
import faulthandler
import logging
import logging.handlers
import os
import sys
import threading
import time
from pathlib import Path

from app.system.paths import state_dir

log = logging.getLogger(__name__)
FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"
NATIVE_LOAD = threading.Lock()  # held while a native model loads (see the module docstring)


def since_start_ms() -> float:
    """Milliseconds since this process was started (the kernel's start time, in clock ticks
    since boot, against the boot-time clock; ~10 ms steps): what a user waits from a click on
    the menu entry, interpreter start and imports included. NaN where /proc is missing."""
    try:
        stat = Path("/proc/self/stat").read_text()
        start_ticks = int(stat.rsplit(")", 1)[1].split()[19])  # field 22: starttime
        now = time.clock_gettime(time.CLOCK_BOOTTIME)
        return (now - start_ticks / os.sysconf("SC_CLK_TCK")) * 1000
    except (OSError, ValueError, IndexError, AttributeError):
        return float("nan")


def log_path() -> Path:
    return state_dir() / "talk-llama.log"


_console: logging.Handler | None = None  # the terminal handler `setup` installed


class _NotNative(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        return record.name != "native"


def setup(verbosity: int, capture_native: bool = True) -> Path | None:
    """Configure logging (see the module docstring); returns the log file's path, or None when
    the state folder is not writable (then everything goes to the terminal as before)."""
    root = logging.getLogger()
    root.setLevel(logging.DEBUG)
    terminal_stream = _take_native_stderr() if capture_native else sys.stderr
    global _console
    console = _console = logging.StreamHandler(terminal_stream)
    console.setLevel({0: logging.WARNING, 1: logging.INFO}.get(verbosity, logging.DEBUG))
    console.setFormatter(logging.Formatter(FORMAT))
    if verbosity == 0:
        console.addFilter(_NotNative())
    root.addHandler(console)
    path = log_path()
    try:
        # The folder is private (0700): rotated files inherit nothing, the folder protects all.
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        with contextlib.suppress(OSError):
            os.chmod(path.parent, 0o700)
            os.close(os.open(path, os.O_CREAT | os.O_APPEND | os.O_WRONLY, 0o600))
            os.chmod(path, 0o600)
        to_file = logging.handlers.RotatingFileHandler(
            path, maxBytes=1_000_000, backupCount=3, encoding="utf-8"
        )
    except OSError as exc:
        log.warning("cannot write the log file %s (%s); logging to the terminal only", path, exc)
        return None
    to_file.setLevel(logging.DEBUG if verbosity >= 2 else logging.INFO)
    to_file.setFormatter(logging.Formatter(FORMAT))
    root.addHandler(to_file)
    return path


def show_progress() -> None:
    """Let the app's info lines reach the terminal (commands whose progress is their output,
    like `models fetch`); native lines stay in the file unless -v."""
    if _console is not None and _console.level > logging.INFO:
        _console.setLevel(logging.INFO)


def _take_native_stderr():
    """Point fd 2 at a pipe read by a thread that logs each line as `native`; return a text
    stream on the original stderr for Python's own output."""
    try:
        saved = os.dup(2)
        read_fd, write_fd = os.pipe()
        os.dup2(write_fd, 2)
        os.close(write_fd)
    except OSError:  # no fd 2 (some launchers): nothing to capture
        return sys.stderr
    terminal = os.fdopen(saved, "w", buffering=1, encoding="utf-8", errors="replace")
    sys.stderr = terminal
    faulthandler.enable(file=terminal)  # a native crash still reaches the terminal
    pump = threading.Thread(target=_pump, args=(read_fd,), daemon=True, name="native-log")
    pump.start()

    def drain() -> None:
        """At exit: give fd 2 back to the terminal (the pipe's writer closes, so the pump reads
        to the end) and let the pump write what is still in the pipe."""
        with contextlib.suppress(OSError):
            os.dup2(saved, 2)
        pump.join(timeout=2.0)

    atexit.register(drain)
    return terminal


# Native lines that report something expected, logged at debug: whisper.cpp says "failed to
# encode" when the app aborts an early transcription because the user kept talking.
EXPECTED = ("failed to encode", "failed to decode")


def _pump(read_fd: int) -> None:
    native = logging.getLogger("native")
    with os.fdopen(read_fd, "rb") as pipe:
        for raw in pipe:
            line = raw.decode("utf-8", "replace").rstrip()
            if line:
                expected = any(e in line for e in EXPECTED)
                native.log(logging.DEBUG if expected else logging.INFO, "%s", line)
