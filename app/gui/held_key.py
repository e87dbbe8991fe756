"""One push-to-talk hold from the noisy press/release stream a keyboard stack delivers.

A held key does not arrive as one press and one release. X11 auto-repeat sends a release and a
press for every repeat while the key is held (about 25 a second); Qt flags only some of them as
auto-repeat, and remote-desktop clients and XWayland replay repeats as real events. On Xvfb,
with xdotool holding Space for 3 s (three runs), Qt left 20, 53 and 24 of the ~55 pairs
unflagged, each release 0.1-1.4 ms before its press. Taken at face value, every such pair
ends a turn and starts another: one held question became 18 turns.

`HeldKey` turns that stream into one hold: the first `down()` presses; an `up()` releases only
after the key has stayed up for `settle_s` (a `down()` within it continues the same hold).
50 ms is 35 times the widest pair measured (a margin for pairs that cross a network) and short
enough that a release and a new press on purpose stay two turns; it costs a push-to-talk turn
`settle_s` of latency. Only X11 (Xvfb) was measured here.

Qt-free. Thread-safe: `down()`/`up()` may come from any thread (Qt's GUI thread, pynput's
listener thread) and return at once. `on_press` runs on the caller's thread; `on_release` runs
on a timer thread (the callbacks must be thread-safe, as AssistantBridge's are).
"""

from __future__ import annotations

import threading
from collections.abc import Callable

SETTLE_S = 0.05


class HeldKey:
    """Debounced key state; see the module docstring for the contract."""

    def __init__(
        self, on_press: Callable[[], None], on_release: Callable[[], None], settle_s: float = SETTLE_S
    ) -> None:
        self.on_press, self.on_release, self.settle_s = on_press, on_release, settle_s
        self._lock = threading.Lock()
        self._held = False  # between the first down and the settled up
        self._timer: threading.Timer | None = None

    @property
    def held(self) -> bool:
        return self._held

    def down(self) -> None:
        """The key went down (a real press or a repeat): starts a hold or continues this one."""
        with self._lock:
            if self._timer is not None:
                self._timer.cancel()  # a repeat's release/press pair: the same hold goes on
                self._timer = None
            if self._held:
                return
            self._held = True
        self.on_press()

    def up(self) -> None:
        """The key went up: the hold ends once it stays up for `settle_s`."""
        with self._lock:
            if not self._held or self._timer is not None:
                return
            timer = threading.Timer(self.settle_s, lambda: self._settled(timer))
            timer.daemon = True
            self._timer = timer
            timer.start()

    def _settled(self, timer: threading.Timer) -> None:
        with self._lock:
            if self._timer is not timer:
                return  # a down() came first (this timer was cancelled while it fired)
            self._timer, self._held = None, False
        self.on_release()

    def cancel(self) -> None:
        """Forget a hold without releasing (the window closes): no callback follows."""
        with self._lock:
            if self._timer is not None:
                self._timer.cancel()
            self._timer, self._held = None, False
