"""Token ledger of the persistent context and the whole-turn discard policy.

The context holds: [system prompt: n_keep tokens][pinned note][turn 1]...[current turn]. A turn
is the user segment, the reply and its closing tokens: discarding part of a turn would leave the
chat template broken, so the policy drops whole turns, oldest first. Only when a single turn is
larger than all the space does it fall back to dropping the head of that turn.

Each turn also records where its reply starts (`replies`: offset within the turn, -1 while the
reply has not begun), so the model's own earlier replies can be found in the cache (the sampler
reads them, see `Conversation`), how many of its first tokens are the memory note written at
its head (`notes`, 0 for most turns; memory.py), and the recall note it holds (`recalls`: its
length, the facts its question asked about, recall.py; `recall_at`: where in the turn it
starts, right after the user's closed message, before the assistant header). Only a full note
counts for `note_in_cache`: a recall note holds a few facts, not everything a shift drops.

A shift keeps the newest memory note (`shift`): when the turns it drops hold the newest one, the
note's tokens stay where they are and the rest of its turn goes, so the note ends up right after
the system prompt (`pinned`, the same approximation the shift makes for every surviving token);
an older note (the pinned one too) goes with its turn. So a note is evaluated once, not again
after every shift.

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
    recalls: list[int] = field(default_factory=list)  # per turn: recall-note tokens in it
    pinned: int = 0  # memory-note tokens kept right after the system prompt, before turn 1
    recall_at: list[int] = field(default_factory=list)  # per turn: offset of its recall note

    def __post_init__(self) -> None:
        if not self.replies:
            self.replies = [-1] * len(self.turns)
        if not self.notes:
            self.notes = [0] * len(self.turns)
        if not self.recalls:
            self.recalls = [0] * len(self.turns)
        if not self.recall_at:  # a recall note once came right after the turn's memory note
            self.recall_at = list(self.notes)
        columns = (self.replies, self.notes, self.recalls, self.recall_at)
        if any(len(column) != len(self.turns) for column in columns):
            raise ValueError("ledger: one reply offset, note size and recall note per turn")
        if any(k < 0 or k > n or r < 0 or (r and not k <= a <= n - r) for k, r, a, n in self.notes_by_turn()):
            raise ValueError("ledger: a memory or recall note outside its turn")
        if self.pinned < 0:
            raise ValueError("ledger: negative pinned note")

    def notes_by_turn(self) -> list[tuple[int, int, int, int]]:
        """Per turn: (memory-note length, recall-note length, recall-note offset, turn length)."""
        return list(zip(self.notes, self.recalls, self.recall_at, self.turns, strict=True))

    @property
    def note_in_cache(self) -> bool:
        """A memory note is in the cache (pinned, or at the head of a turn)."""
        return self.pinned > 0 or any(self.notes)

    @property
    def head(self) -> int:
        """Where the first turn starts: after the system prompt and the pinned note."""
        return self.n_keep + self.pinned

    @property
    def n_past(self) -> int:
        return self.head + sum(self.turns)

    def begin_turn(self) -> None:
        self.turns.append(0)
        self.replies.append(-1)
        self.notes.append(0)
        self.recalls.append(0)
        self.recall_at.append(0)

    def mark_reply(self, offset: int | None = None) -> None:
        """The current turn's reply starts at `offset` within the turn (default: here)."""
        self.replies[-1] = self.turns[-1] if offset is None else offset

    def pop_turn(self) -> int:
        """Forget the current (last) turn; returns its token count."""
        self.replies.pop()
        self.notes.pop()
        self.recalls.pop()
        self.recall_at.pop()
        return self.turns.pop()

    def clear_turns(self) -> None:
        self.pinned = 0
        self.turns.clear()
        self.replies.clear()
        self.notes.clear()
        self.recalls.clear()
        self.recall_at.clear()

    def reply_spans(self, n_close: int) -> list[tuple[int, int]]:
        """Absolute [start, end) positions of every finished reply in the cache, oldest first,
        without the `n_close` end-of-turn tokens that close each turn."""
        spans, start = [], self.head
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
        """How many tokens (right after `head`) to discard so `n_new` more fit; 0 if they fit.

        Frees at least `share` of the non-kept space (so shifts are rare) by dropping whole
        turns older than the current one; falls back to the current turn's head only when the
        older turns are not enough. Raises ValueError if `n_new` can never fit.
        """
        overflow = self.n_past + n_new - n_ctx
        if overflow <= 0:
            return 0
        if n_new > n_ctx - self.head:
            raise ValueError(f"{n_new} new tokens cannot fit in a context of {n_ctx} (keep {self.head})")
        target = max(overflow, int(share * (n_ctx - self.head)))
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

    def shift(self, n_discard: int) -> tuple[list[tuple[int, int]], int]:
        """Drop `n_discard` tokens after `head` (`apply_discard`), keeping the newest memory note
        (module docstring). Returns the cache spans to cut, (start, length), the later span
        first so that cutting one does not move the other, and how many whole turns went."""
        whole, cut_head = self._whole_turns(n_discard)
        start, length = self.n_keep, 0  # the note kept: none
        if not any(self.notes[whole + cut_head :]):  # no newer note survives: keep the newest
            start, length = self.newest_note(whole)
        end = self.head + n_discard
        cuts = [(start + length, end - start - length), (self.n_keep, start - self.n_keep)]
        dropped = self.apply_discard(n_discard)
        self.pinned = length
        return [(s, n) for s, n in cuts if n > 0], dropped

    def newest_note(self, n_turns: int | None = None) -> tuple[int, int]:
        """(start, length) of the newest memory note among the pinned one and the first
        `n_turns` turns (default: all); length 0 when there is none. A note not evaluated yet
        counts (its turn is then shorter than the note)."""
        start, newest = self.head, (self.n_keep, self.pinned)
        for n, k in zip(self.turns[:n_turns], self.notes[:n_turns], strict=True):
            if k:
                newest = (start, k)
            start += n
        return newest

    def _whole_turns(self, n_discard: int) -> tuple[int, int]:
        """How many whole turns a discard of `n_discard` drops (never the last one), and 1 if
        it also cuts the head of the next one (else 0)."""
        left, whole = n_discard, 0
        while left and whole < len(self.turns) - 1 and self.turns[whole] <= left:
            left -= self.turns[whole]
            whole += 1
        return whole, int(left > 0)

    def apply_discard(self, n_discard: int) -> int:
        """Drop `n_discard` tokens after `head` from the ledger (whole turns, then a head);
        returns how many whole turns were dropped."""
        if n_discard and not self.turns:
            raise ValueError("discard larger than the ledger")
        dropped, cut_head = self._whole_turns(n_discard)
        left = n_discard - sum(self.turns[:dropped])
        for column in (self.turns, self.replies, self.notes, self.recalls, self.recall_at):
            del column[:dropped]
        if cut_head:
            self.turns[0] -= left
            if self.replies[0] >= 0:
                self.replies[0] = max(0, self.replies[0] - left)
            self.notes[0] = 0  # a note cut at its head says nothing whole
            if self.recalls[0] and self.recall_at[0] >= left:  # a recall note after the cut stays
                self.recall_at[0] -= left
            else:
                self.recalls[0] = self.recall_at[0] = 0
        return dropped
