"""What the timers' and the reminders' threads share: a thread that sleeps on `_wake` until the
next one is due or it is woken, and `close`, which stops and joins it (nothing it holds outlives
its owner). Subclasses start `_thread` themselves and return from it once `_closed` is set."""

from __future__ import annotations

import threading


class Sleeper:
    def __init__(self) -> None:
        self._wake = threading.Condition()
        self._thread: threading.Thread | None = None
        self._closed = False

    def close(self) -> None:
        """Stop the thread, joined (2 s at most)."""
        with self._wake:
            self._closed = True
            self._wake.notify()
            thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout=2)
