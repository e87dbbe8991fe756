"""Checkpoints of a recurrent memory, so a turn can be taken back on Mamba, RWKV and hybrids.

A KV cache forgets the end of a sequence with `llama_memory_seq_rm(p0, -1)`. A recurrent state
(Mamba, RWKV; the recurrent layers of hybrids such as LFM2, granite-4 or Jamba) is one running
summary of every token so far: it cannot forget its last tokens, and llama.cpp says so
(`seq_rm` returns false unless the context keeps per-token snapshots). Taking a turn back —
a withdrawn tentative turn, a Retry, a reply cut by barge-in, a stop string — would then leave
tokens in the state that the ledger says are gone.

So where the memory is recurrent, the context keeps the recurrent part of the state
(`LLAMA_STATE_SEQ_FLAGS_PARTIAL_ONLY`: a few hundred KB, not the attention layers' cache) at the
start of each of the last few turns. Going back to position p restores the newest checkpoint at
or before p and evaluates the tokens from there to p again: a turn's tokens, not the
conversation. A shift moves every position, so it drops the checkpoints; going back past the
newest shift re-evaluates the context from the start (rare: a shift inside the turn being taken
back).

A shift itself needs nothing here: removing the middle of a sequence is a no-op for a recurrent
state (its summary keeps what the dropped turns said, fading as such models do), and the
attention layers of a hybrid drop those positions as any KV cache does.

Owned by the context's thread, like the KvContext that holds it.
"""

from __future__ import annotations

import ctypes
import logging

import llama_cpp

log = logging.getLogger(__name__)

PARTIAL = llama_cpp.LLAMA_STATE_SEQ_FLAGS_PARTIAL_ONLY
KEEP = 4  # checkpoints kept: the current turn's start and a few before it


def is_recurrent(model: llama_cpp.llama_model_p) -> bool:
    """The model's memory has a recurrent part (pure recurrent or hybrid)."""
    return bool(llama_cpp.llama_model_is_recurrent(model) or llama_cpp.llama_model_is_hybrid(model))


class StateCheckpoints:
    """The recurrent state at a few positions of sequence 0 (see the module docstring)."""

    def __init__(self, ctx: llama_cpp.llama_context_p):
        self._ctx = ctx
        self._saved: dict[int, ctypes.Array[ctypes.c_uint8]] = {}
        self._base = -1  # the system prompt's end: kept through shifts (they move only what follows)

    def take(self, pos: int, base: bool = False) -> None:
        """Keep the state as it is with `pos` tokens evaluated (`base`: the system prompt's end)."""
        size = llama_cpp.llama_state_seq_get_size_ext(self._ctx, 0, PARTIAL)
        buf = (ctypes.c_uint8 * size)()
        llama_cpp.llama_state_seq_get_data_ext(self._ctx, buf, size, 0, PARTIAL)
        self._saved[pos] = buf
        self._base = pos if base else self._base
        for old in [p for p in sorted(self._saved)[:-KEEP] if p != self._base]:
            del self._saved[old]

    def clear(self) -> None:
        """Forget the checkpoints after the system prompt (their positions moved); the cache
        cleared: `restart_context` takes a new base."""
        self._saved = {p: b for p, b in self._saved.items() if p == self._base}

    def restore(self, end: int) -> int:
        """Put the state back to the newest checkpoint at or before `end`; returns its position
        (0: none, the caller starts from an empty memory). The caller removes the attention
        layers' positions from there and evaluates the tokens up to `end` again."""
        for pos in [p for p in self._saved if p > end]:
            del self._saved[pos]
        if not self._saved:
            return 0
        pos = max(self._saved)
        buf = self._saved[pos]
        if not llama_cpp.llama_state_seq_set_data_ext(self._ctx, buf, len(buf), 0, PARTIAL):
            log.warning("a recurrent state checkpoint did not load; evaluating from the start")
            return 0
        return pos
