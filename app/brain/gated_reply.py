"""A tentative turn's reply read from a server: speculative until its gate decides.

The request goes out at the pause, as a local model evaluates the turn there; its first pieces
may be read and given out (the loop synthesizes the first spoken chunk and holds it) before the
end of speech confirms the turn, as the local brain's are, so a server's reply is heard as soon
after the turn's end as a local one's. `accept` is called once, when the gate confirms the turn
(or at once without a gate); a withdrawn turn leaves no trace: the caller records nothing and the
stream is closed (the server stops generating).

Owned by the brain's thread (the gate's calls may block it, user_turn.TurnGate).
"""

from __future__ import annotations

from collections.abc import Callable, Generator, Iterator

from app.brain.records import TurnStats
from app.brain.user_turn import TurnGate, ask


class GatedReply:
    def __init__(self, gate: TurnGate | None, stats: TurnStats, accept: Callable[[], None]) -> None:
        self.gate, self.stats, self._accept = gate, stats, accept
        self.decided = False
        self.withdrawn = False
        if gate is None:
            self._confirm()

    def pieces(self, source: Generator[str, None, None]) -> Iterator[str]:
        """`source`'s pieces while the turn stands; `source` is closed when it is taken back."""
        for piece in source:
            if not self._go_on():
                source.close()
                return
            yield piece

    def settle(self) -> bool:
        """The reply ended (or failed, or was closed) undecided: wait for the decision (blocks).
        True: the turn stays in the conversation."""
        if not self.decided and not self.withdrawn and self.gate is not None:
            if ask(self.gate, True, self.stats):
                self._confirm()
            else:
                self.withdrawn = True
        return self.decided

    def _go_on(self) -> bool:
        """Before a piece is given out: False when the turn was taken back."""
        if not self.decided and self.gate is not None:
            go = ask(self.gate, False, self.stats)
            if go is False:
                self.withdrawn = True
                return False
            if go:
                self._confirm()
        return True

    def _confirm(self) -> None:
        self.decided = True
        self._accept()
