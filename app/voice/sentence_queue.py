"""What both speakers share (speaker.py plays sentences itself, external_speaker.py hands them
to the user's command): what the loop uses of either (`Voice`), their events and the count of
sentences still to be spoken."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Protocol


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


class Voice(Protocol):
    """What the loop uses of a speaker. Every method may be called from any thread and returns
    at once (`wait_synthesized` blocks up to its timeout); events arrive on the speaker's threads."""

    available: bool  # False: no voice output (`problem` says why); replies are shown only
    problem: str
    first_chunk_words: int  # the first chunk of a reply may end after this many words (0: not)
    can_hold: bool  # sentences can be synthesized and held until a tentative turn is certain

    @property
    def busy(self) -> bool: ...

    def say(self, sentence: str, held: bool = False, language: str = "", next_up: bool = False) -> int:
        """Queue one sentence; its index (events carry it). `next_up`: ahead of what waits."""
        ...

    def wait_synthesized(self, index: int, timeout: float) -> bool: ...

    def release_held(self) -> None: ...

    def discard_held(self) -> None: ...

    def stop(self) -> None: ...

    def close(self) -> None: ...
