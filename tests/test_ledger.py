"""The ledger's shift (pure bookkeeping, no model): for any ledger and any discard the policy
plans, the cache spans to cut and the ledger after them agree, and the newest memory note is
the one kept (issue #34: a note is evaluated once, not after every shift)."""

from __future__ import annotations

import copy

from hypothesis import given
from hypothesis import strategies as st

from app.brain.ledger import Ledger
from tests.support.fuzz import fuzz_settings

PROFILE = fuzz_settings(200, 2000)


@st.composite
def ledgers(draw: st.DrawFn) -> Ledger:
    """A ledger of 2-8 turns, some opening with a memory note, some holding a recall note
    near their end (before the reply), maybe a pinned note."""
    n = draw(st.integers(2, 8))
    turns = draw(st.lists(st.integers(10, 80), min_size=n, max_size=n))
    notes = [draw(st.sampled_from([0, 0, t // 2])) for t in turns]
    recalls = [draw(st.sampled_from([0, 0, min(4, t - k)])) for t, k in zip(turns, notes, strict=True)]
    recall_at = [t - r - draw(st.integers(0, 2)) if r else 0 for t, r in zip(turns, recalls, strict=True)]
    recall_at = [max(a, k) for a, k in zip(recall_at, notes, strict=True)]
    pinned = draw(st.sampled_from([0, 0, 7]))
    return Ledger(20, turns, [-1] * n, notes, recalls, pinned, recall_at)


def cut_positions(cuts: list[tuple[int, int]]) -> set[int]:
    return {p for start, n in cuts for p in range(start, start + n)}


@PROFILE
@given(ledgers(), st.integers(1, 60), st.integers(1, 200), st.floats(0.1, 0.9))
def test_a_shift_keeps_only_the_newest_note(ledger: Ledger, n_new: int, overflow: int, share: float) -> None:
    n_ctx = ledger.n_past + n_new - overflow  # a large overflow cuts the head of the last turn
    try:
        n_discard = ledger.plan_discard(n_new, n_ctx, share)
    except ValueError:  # cannot fit beside the pinned note: the context unpins first
        return
    before = copy.deepcopy(ledger)
    notes_before = _notes(before)
    cuts, dropped = ledger.shift(n_discard)

    # The spans are cut later first, never overlap, and lie between the system prompt and the end.
    assert [s for s, _ in cuts] == sorted((s for s, _ in cuts), reverse=True)
    removed = cut_positions(cuts)
    assert sum(n for _, n in cuts) == len(removed)
    assert all(before.n_keep <= p < before.n_past for p in removed)
    assert ledger.n_past == before.n_past - len(removed) < before.n_past  # the context plans again
    assert len(ledger.turns) == len(before.turns) - dropped

    # The newest note stays (unless its turn lost only its head: one turn larger than the
    # space); a note outside the turns is kept only when no turn left holds one.
    cut = head_cut(before, n_discard)
    kept = [(s, n) for s, n in notes_before if not (cut > 0 and s == before.head + n_discard - cut)]
    if kept:
        start, length = kept[-1]
        assert not removed & set(range(start, start + length))
    if ledger.pinned:
        assert not any(ledger.notes) and ledger.pinned == kept[-1][1]

    # Every recall note the ledger still counts is the same tokens as before, moved down by
    # what was cut ahead of it; the ledger after the shift is a valid one.
    def moved(p: int) -> int:
        return p - sum(1 for q in removed if q < p)

    before_recalls = {(moved(s), n) for s, n in _recalls(before) if not removed & set(range(s, s + n))}
    assert set(_recalls(ledger)) == before_recalls
    copy.deepcopy(ledger).__post_init__()


def head_cut(ledger: Ledger, n_discard: int) -> int:
    """How many tokens of the first surviving turn a discard of `n_discard` cuts."""
    left = n_discard
    for n in ledger.turns[:-1]:
        if n > left:
            break
        left -= n
    return left


def _notes(ledger: Ledger) -> list[tuple[int, int]]:
    """(start, length) of every memory note in the cache, oldest first."""
    out = [(ledger.n_keep, ledger.pinned)] if ledger.pinned else []
    start = ledger.head
    for n, k in zip(ledger.turns, ledger.notes, strict=True):
        if k:
            out.append((start, k))
        start += n
    return out


def _recalls(ledger: Ledger) -> list[tuple[int, int]]:
    """(start, length) of every recall note in the cache."""
    out, start = [], ledger.head
    for n, r, at in zip(ledger.turns, ledger.recalls, ledger.recall_at, strict=True):
        if r:
            out.append((start + at, r))
        start += n
    return out
