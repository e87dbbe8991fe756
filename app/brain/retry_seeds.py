"""How far a reply's seed moves for a Retry, shared by the local and the remote brain.

A new exchange is answered with the configured seed (variant 0: replies repeat run to run with
greedy or seeded sampling); each Retry of the same exchange answers it with the next variant
(1, 2, …), so a Retry says something else, and a Retry of a Retry something else again.

Threads: owned by the brain, on the llm thread.
"""

from __future__ import annotations


class RetrySeeds:
    def __init__(self) -> None:
        self._retries = 0  # Retries of the newest exchange so far
        self._variant = 0  # the next reply's variant

    def retried(self) -> None:
        """The newest exchange was taken back for a Retry: its next reply moves the seed once more."""
        self._retries += 1
        self._variant = self._retries

    def next_variant(self) -> int:
        """Read once per reply: its variant (0: a new exchange, which also ends the count)."""
        variant, self._variant = self._variant, 0
        if not variant:
            self._retries = 0
        return variant

    def reset(self) -> None:
        """A new conversation: the next reply is a new exchange."""
        self._retries = self._variant = 0
