"""Helpers for tests that run the app as a user does, in a child process."""

from __future__ import annotations

import json
import queue
import subprocess
import sys
import threading
import time
from typing import IO


class LineReader:
    """Reads a child's text stream on a daemon thread, so a test waits for a line with a
    deadline instead of blocking in `readline()` on a child that went quiet (a hang there used
    to hold the whole suite until CI's own limit)."""

    def __init__(self, stream: IO[str]) -> None:
        self._lines: queue.Queue[str | None] = queue.Queue()
        self.seen: list[str] = []
        threading.Thread(target=self._pump, args=(stream,), daemon=True).start()

    def _pump(self, stream: IO[str]) -> None:
        for line in stream:
            self._lines.put(line)
        self._lines.put(None)  # the stream ended

    def next_line(self, timeout: float) -> str:
        """The next line; fails when none comes within `timeout` s or the stream ends."""
        try:
            line = self._lines.get(timeout=timeout)
        except queue.Empty:
            raise AssertionError(f"no line within {timeout:.0f} s; before it: {self.tail()}") from None
        if line is None:
            self._lines.put(None)
            raise AssertionError(f"the stream ended; before it: {self.tail()}")
        self.seen.append(line)
        return line

    def wait_for(self, marker: str, timeout: float = 60) -> str:
        """Read lines until one contains `marker`; fails at the deadline or the stream's end."""
        deadline = time.monotonic() + timeout
        while True:
            line = self.next_line(max(0.0, deadline - time.monotonic()))
            if marker in line:
                return line

    def tail(self, n: int = 20) -> str:
        return "".join(self.seen[-n:])


def text_chat(
    url: str, lines: list[str], env: dict[str, str], *flags: str, timeout: float = 600
) -> tuple[list[dict], subprocess.CompletedProcess]:
    """`talk-llama chat --text --jsonl --llm-url URL FLAGS` with `lines` typed on stdin, as a
    user runs it; returns the turn records and the finished process."""
    cmd = [sys.executable, "-m", "app", "chat", "--text", "--jsonl", "--llm-url", url, *flags]
    typed = "\n".join(lines) + "\n"
    out = subprocess.run(cmd, input=typed, capture_output=True, text=True, env=env, timeout=timeout)
    return [json.loads(line) for line in out.stdout.splitlines() if line.startswith("{")], out
