"""A private Xvfb X server for tests and benchmarks (tests/conftest.py's `x11`, bench/coldstart)."""

from __future__ import annotations

import subprocess
import time


def start(display: str, timeout: float = 30.0) -> subprocess.Popen:
    """Start Xvfb on `display` (":N") and wait until it accepts connections; the caller ends it."""
    from app.gui.display import x_server_reachable

    proc = subprocess.Popen(["Xvfb", display, "-screen", "0", "1024x768x24", "-nolisten", "tcp"])
    deadline = time.monotonic() + timeout
    while not x_server_reachable(display):
        assert proc.poll() is None and time.monotonic() < deadline, "Xvfb did not start"
        time.sleep(0.05)
    return proc
