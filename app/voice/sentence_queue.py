"""What both speakers share (speaker.py plays sentences itself, external_speaker.py hands them
to the user's command): their events and the count of sentences still to be spoken."""

from __future__ import annotations

import time
from dataclasses import dataclass, field


@dataclass
class SpeakerEvent:
    kind: str  # sentence_started | sentence_finished | sentence_cut | queue_empty | error
    text: str = ""
    index: int = -1
    t: float = field(default_factory=time.perf_counter)
    message: str = ""
    heard: str = ""  # sentence_cut: the part of `text` the listener heard


class SentenceQueue:
    """Pending-sentence bookkeeping shared by the speakers: `busy` and `wait()`."""

    _pending: int = 0

    @property
    def busy(self) -> bool:
        return self._pending > 0

    def wait(self, timeout: float | None = None) -> bool:
        """Block until everything queued has been played; False on timeout."""
        end = None if timeout is None else time.monotonic() + timeout
        while self._pending > 0:
            if end is not None and time.monotonic() > end:
                return False
            time.sleep(0.005)
        return True
