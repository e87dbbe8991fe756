"""The gate of a tentative turn (hands-free, started at a pause): the brain's `TurnGate`.

1. `evaluated(p)`: the turn's prompt is in the context; `p` is the model's probability that the
   words are a finished turn (None from a server). It goes to `on_end_of_turn`, which sets the
   silence that ends this utterance (turn_end.py).
2. `decide(must)`: while the end of speech is not known, the brain may generate the reply's
   first words; the Responder queues the first spoken chunk *held* (synthesized, not played)
   and sets `ready`. Then the gate blocks until the end of speech confirms the turn or more
   speech (barge-in, shutdown) withdraws it. Confirmed: `on_confirm` shows the turn and lets the
   held pieces out, so the first sound follows the confirmation within a few ms. Withdrawn:
   `on_withdraw` discards them; nothing was shown or played, and the brain takes the turn back.

Threads: the llm thread calls both methods; the decision itself is made on the stt thread
(`Turn.confirm` / `Turn.withdraw`).
"""

from __future__ import annotations

import time
from collections.abc import Callable

from app.loop.turn import Turn

MAX_SPECULATIVE_TOKENS = 32  # generate at most this much of a reply before its turn is certain


class SpeculativeStart:
    def __init__(
        self,
        turn: Turn,
        on_end_of_turn: Callable[[Turn], None],
        on_confirm: Callable[[], None],
        on_withdraw: Callable[[], None],
        max_tokens: int = MAX_SPECULATIVE_TOKENS,
    ) -> None:
        self.turn = turn
        self._on_end_of_turn = on_end_of_turn
        self._on_confirm = on_confirm
        self._on_withdraw = on_withdraw
        self.max_tokens = max_tokens
        self.ready = False  # the first spoken chunk is queued (held): speculate no further
        self.confirmed: bool | None = None
        self._asked = 0

    @property
    def undecided(self) -> bool:
        return self.confirmed is None

    def evaluated(self, end_of_turn: float | None) -> None:
        self.turn.end_of_turn = end_of_turn
        self.turn.stamps["end_of_turn"] = time.perf_counter()
        self._on_end_of_turn(self.turn)

    def decide(self, must: bool) -> bool | None:
        self._asked += 1
        pending = self.turn.pending
        assert pending is not None
        if pending.value is None and not must and not self.ready and self._asked <= self.max_tokens:
            return None
        go = pending.wait() and not self.turn.cancel.is_set()
        self.confirmed = go
        (self._on_confirm if go else self._on_withdraw)()
        return go
