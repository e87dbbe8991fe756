"""Helpers for tests that run the app as a user does, in a child process."""

from __future__ import annotations

import subprocess
import time
from typing import IO


def wait_for_line(proc: subprocess.Popen, stream: IO[str], marker: str, timeout: float = 60) -> str:
    """Read `stream` line by line until one contains `marker`; fail if the process ends first
    or the deadline passes (checked between lines). Returns that line."""
    deadline = time.monotonic() + timeout
    while True:
        assert time.monotonic() < deadline and proc.poll() is None, f"no line with {marker!r}"
        line = stream.readline()
        if marker in line:
            return line
