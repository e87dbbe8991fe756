"""What the listener heard of a reply: what the assistant remembers saying after a barge-in.

The Responder registers each sentence it hands to the Speaker with its span in the reply text
(`queued`); the Speaker's events then tell which sentences were heard whole (`sentence_finished`)
and how far into the one playing the sound got when it was stopped (`sentence_cut`: the words
whose sound had started, or the whole sentence where the player cannot tell). `text(reply)` is
the reply up to there.

Threads: events arrive on the Speaker's threads and on the thread that stopped it; `text` is
read on the llm thread. A lock guards the state.
"""

from __future__ import annotations

import re
import threading

from app.voice.speaker import SpeakerEvent

_WORD = re.compile(r"\S+")


class HeardReply:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._spans: dict[int, tuple[int, int, str]] = {}  # speaker index -> (start, end, text)
        self._end = 0  # characters of the reply heard so far
        self._search_from = 0

    def queued(self, index: int, sentence: str, reply_so_far: str) -> None:
        """`sentence` (as cut by the splitter from `reply_so_far`) was queued as `index`."""
        with self._lock:
            start = reply_so_far.find(sentence, self._search_from)
            if start < 0:  # not found verbatim (cannot happen with SentenceSplitter): up to here
                start, end = self._search_from, len(reply_so_far)
            else:
                end = start + len(sentence)
            self._spans[index] = (start, end, reply_so_far[start:end])
            self._search_from = end

    def on_speaker(self, ev: SpeakerEvent) -> None:
        with self._lock:
            span = self._spans.get(ev.index)
            if span is None:
                return
            start, end, sentence = span
            if ev.kind == "sentence_finished":
                self._end = max(self._end, end)
            elif ev.kind == "sentence_cut":
                self._end = max(self._end, start + _prefix_chars(sentence, len(ev.heard.split())))

    def text(self, reply: str) -> str:
        """The part of `reply` that was heard, without surrounding space."""
        with self._lock:
            return reply[: self._end].strip()


def _prefix_chars(sentence: str, words: int) -> int:
    """Characters of `sentence` that hold its first `words` words (the spoken form may have
    dropped symbols, not words)."""
    if words <= 0:
        return 0
    end = 0
    for n, match in enumerate(_WORD.finditer(sentence), start=1):
        end = match.end()
        if n == words:
            break
    return end
