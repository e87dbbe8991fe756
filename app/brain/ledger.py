"""Token ledger of the persistent context and the whole-turn discard policy.

The context holds: [system prompt: n_keep tokens][turn 1][turn 2]...[current turn]. A turn is the
user segment, the reply and its closing tokens: discarding part of a turn would leave the chat
template broken, so the policy drops whole turns, oldest first. Only when a single turn is larger
than all the space does it fall back to dropping the head of that turn.

Each turn also records where its reply starts (`replies`: offset within the turn, -1 while the
reply has not begun), so the model's own earlier replies can be found in the cache (the sampler
reads them, see `Conversation`), how many of its first tokens are the memory note written at
its head (`notes`, 0 for most turns; memory.py), and how many after those are a recall note
(`recalls`: the facts its question asked about; recall.py). Only a full note counts for
`note_in_cache`: a recall note holds a few facts, not everything a shift drops.

Pure bookkeeping, no llama calls; owned by the `Conversation` (single thread).
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Ledger:
    n_keep: int = 0
    turns: list[int] = field(default_factory=list)  # token count per turn, oldest first
    replies: list[int] = field(default_factory=list)  # per turn: offset of its reply, -1 = none yet
    notes: list[int] = field(default_factory=list)  # per turn: memory-note tokens at its head
    recalls: list[int] = field(default_factory=list)  # per turn: recall-note tokens after those

    def __post_init__(self) -> None:
        if not self.replies:
            self.replies = [-1] * len(self.turns)
        if not self.notes:
            self.notes = [0] * len(self.turns)
        if not self.recalls:
            self.recalls = [0] * len(self.turns)
        if not len(self.replies) == len(self.notes) == len(self.recalls) == len(self.turns):
            raise ValueError("ledger: one reply offset, note size and recall size per turn")

    @property
    def note_in_cache(self) -> bool:
        """A memory note sits at the head of a turn still in the cache."""
        return any(self.notes)

    @property
    def n_past(self) -> int:
        return self.n_keep + sum(self.turns)

    def begin_turn(self) -> None:
        self.turns.append(0)
        self.replies.append(-1)
        self.notes.append(0)
        self.recalls.append(0)

    def mark_reply(self, offset: int | None = None) -> None:
        """The current turn's reply starts at `offset` within the turn (default: here)."""
        self.replies[-1] = self.turns[-1] if offset is None else offset

    def pop_turn(self) -> int:
        """Forget the current (last) turn; returns its token count."""
        self.replies.pop()
        self.notes.pop()
        self.recalls.pop()
        return self.turns.pop()

    def clear_turns(self) -> None:
        self.turns.clear()
        self.replies.clear()
        self.notes.clear()
        self.recalls.clear()

    def reply_spans(self, n_close: int) -> list[tuple[int, int]]:
        """Absolute [start, end) positions of every finished reply in the cache, oldest first,
        without the `n_close` end-of-turn tokens that close each turn."""
        spans, start = [], self.n_keep
        for n, at in zip(self.turns, self.replies, strict=True):
            if at >= 0 and n - n_close > at:
                spans.append((start + at, start + n - n_close))
            start += n
        return spans

    def add(self, n: int) -> None:
        """Account `n` tokens appended to the current turn."""
        if not self.turns:
            raise RuntimeError("no turn in progress")
        self.turns[-1] += n

    def remove_tail(self, n: int) -> None:
        """Account `n` tokens rolled back from the end of the current turn."""
        self.turns[-1] -= n

    def plan_discard(self, n_new: int, n_ctx: int, share: float) -> int:
        """How many tokens (right after n_keep) to discard so `n_new` more fit; 0 if they fit.

        Frees at least `share` of the non-kept space (so shifts are rare) by dropping whole
        turns older than the current one; falls back to the current turn's head only when the
        older turns are not enough. Raises ValueError if `n_new` can never fit.
        """
        overflow = self.n_past + n_new - n_ctx
        if overflow <= 0:
            return 0
        if n_new > n_ctx - self.n_keep:
            raise ValueError(f"{n_new} new tokens cannot fit in a context of {n_ctx} (keep {self.n_keep})")
        target = max(overflow, int(share * (n_ctx - self.n_keep)))
        discard = 0
        for n in self.turns[:-1]:
            if discard >= target:
                break
            discard += n
        if discard >= overflow:
            return discard
        # One turn larger than the space: also drop the head of the current turn.
        current = self.turns[-1] if self.turns else 0
        return discard + min(current, max(overflow, target) - discard)

    def apply_discard(self, n_discard: int) -> int:
        """Drop `n_discard` tokens after n_keep from the ledger (whole turns, then a head);
        returns how many whole turns were dropped."""
        left, dropped = n_discard, 0
        while left and self.turns:
            if self.turns[0] <= left and len(self.turns) > 1:
                left -= self.turns.pop(0)
                self.replies.pop(0)
                self.notes.pop(0)
                self.recalls.pop(0)
                dropped += 1
            else:
                self.turns[0] -= left
                if self.replies[0] >= 0:
                    self.replies[0] = max(0, self.replies[0] - left)
                self.notes[0] = self.recalls[0] = 0  # a note cut at its head says nothing whole
                left = 0
        if left:
            raise ValueError("discard larger than the ledger")
        return dropped
