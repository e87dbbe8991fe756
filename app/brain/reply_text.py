"""Streamed reply bytes to text, for `Conversation.stream`.

UTF-8-safe (a character split across tokens is held until complete), holds back text that may be
the start of a stop string, and remembers where each evaluated token ended in the text so a stop
string's tokens can be rolled back out of the KV cache. One per reply; single thread.
"""

from __future__ import annotations

import codecs


class ReplyText:
    """Streams reply bytes to text: UTF-8-safe, holding back text that may begin a stop string."""

    def __init__(self, stop_strings: tuple[str, ...]):
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._stops = stop_strings
        self._text = ""  # decoded so far
        self._emitted = 0
        self._stop_at: int | None = None
        self._token_ends: list[tuple[int, int]] = []  # (n_past after token, text length then)
        self.stopped = False

    @property
    def text(self) -> str:
        end = self._stop_at if self._stop_at is not None else len(self._text)
        return self._text[:end].strip()

    def feed(self, data: bytes) -> str:
        self._text += self._decoder.decode(data)
        for s in self._stops:
            idx = self._text.find(s)
            if idx >= 0 and (self._stop_at is None or idx < self._stop_at):
                self._stop_at = idx
                self.stopped = True
        limit = self._stop_at if self._stop_at is not None else len(self._text) - self._held_back()
        piece = self._text[self._emitted : limit]
        self._emitted = max(self._emitted, limit)
        return piece

    def _held_back(self) -> int:
        """Length of the longest text suffix that is a proper prefix of a stop string."""
        best = 0
        for s in self._stops:
            for k in range(min(len(s) - 1, len(self._text)), 0, -1):
                if self._text.endswith(s[:k]):
                    best = max(best, k)
                    break
        return best

    def mark_token(self, n_past: int) -> None:
        self._token_ends.append((n_past, len(self._text)))

    def tokens_after_stop(self, n_past: int) -> int:
        """How many evaluated tokens lie (even partly) beyond the stop string's start."""
        if self._stop_at is None:
            return 0
        keep = next((p for p, end in reversed(self._token_ends) if end <= self._stop_at), None)
        first = self._token_ends[0][0] - 1 if self._token_ends else n_past
        return n_past - (keep if keep is not None else first)

    def finish(self) -> str:
        self._text += self._decoder.decode(b"", final=True)
        end = self._stop_at if self._stop_at is not None else len(self._text)
        piece = self._text[self._emitted : end]
        self._emitted = end
        return piece
