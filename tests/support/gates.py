"""A turn gate for measuring the words' end-of-turn probability without answering."""

from __future__ import annotations


class ReadingGate:
    """Reads the words' end-of-turn probability, then withdraws the tentative turn."""

    end_of_turn: float | None = None

    def evaluated(self, end_of_turn: float | None) -> None:
        self.end_of_turn = end_of_turn

    def decide(self, must: bool) -> bool | None:
        return False
