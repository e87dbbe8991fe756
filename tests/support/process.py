"""Helpers for tests that run the app as a user does, in a child process."""

from __future__ import annotations

import json
import subprocess
import sys
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


def text_chat(
    url: str, lines: list[str], env: dict[str, str], *flags: str, timeout: float = 600
) -> tuple[list[dict], subprocess.CompletedProcess]:
    """`talk-llama chat --text --jsonl --llm-url URL FLAGS` with `lines` typed on stdin, as a
    user runs it; returns the turn records and the finished process."""
    cmd = [sys.executable, "-m", "app", "chat", "--text", "--jsonl", "--llm-url", url, *flags]
    typed = "\n".join(lines) + "\n"
    out = subprocess.run(cmd, input=typed, capture_output=True, text=True, env=env, timeout=timeout)
    return [json.loads(line) for line in out.stdout.splitlines() if line.startswith("{")], out
