"""One user turn as the persistent context takes it: its tokens, where the user's words end, how
likely the model finds it that they are a finished turn, and the gate of a tentative turn.

End of turn from the words: after the user's last word the chat template closes the
turn with its end-of-turn mark (`<|im_end|>` in ChatML, `<|eot_id|>` in Llama 3, ...). The model's
probability for that mark, plus for a sentence-ending `.`, `?` or `!`, right after the last
word is a language-aware "has the user finished?" signal, read from the evaluation of the turn
the conversation does anyway (no second model). It is read *before* trailing punctuation:
whisper ends almost every segment with a period, even "Tell me about." at a pause, and after a
period even a trailing-off text looks finished to a small model.

Pure functions of tokens and logits plus the `TurnGate` protocol; the Conversation calls them.
"""

from __future__ import annotations

import logging
import string
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

import llama_cpp
import numpy as np

from app.brain.chat_format import ChatFormat, Part
from app.brain.records import TurnStats

log = logging.getLogger(__name__)
PUNCTUATION = set(string.punctuation) | {"…", "¿", "¡", "。", "？", "！"}
TERMINAL = (".", "?", "!")


class TurnGate(Protocol):
    """A tentative turn's confirmation, as the brain asks for it (on its owner thread)."""

    def evaluated(self, end_of_turn: float | None) -> None:
        """The user turn is in the context; `end_of_turn` is the model's probability that the
        words are a finished turn (None: unknown, e.g. a server). Must not block."""

    def decide(self, must: bool) -> bool | None:
        """Before each reply token while undecided: True goes on (the turn is confirmed), False
        takes the turn back without a trace, None keeps generating speculatively (the pieces
        are yielded; the caller shows and plays nothing yet). With `must` (the reply ended or the
        caller asked for no more) it blocks until decided."""


def ask(gate: TurnGate | None, must: bool, stats: TurnStats) -> bool | None:
    """The gate's decision (no gate: go on); the time it blocks is added to `stats.t_wait_ms`."""
    if gate is None:
        return True
    t = time.perf_counter()
    go = gate.decide(must)
    stats.t_wait_ms += (time.perf_counter() - t) * 1000
    return go


class ConfirmAtPrompt:
    """The simplest gate: `decision()` is asked once, right after the prompt (it may block):
    a tentative turn without speculation (the tests use it; the loop uses turn_gate.py)."""

    def __init__(self, decision: Callable[[], object]) -> None:
        self._decision = decision

    def evaluated(self, end_of_turn: float | None) -> None:
        pass

    def decide(self, must: bool) -> bool | None:
        return bool(self._decision())


@dataclass(frozen=True)
class UserTurn:
    tokens: list[int]
    cut: int  # content tokens dropped from the head of a monologue too long for the context
    words_end: int  # index in `tokens` right after the last word (punctuation and closing follow)
    end_token: int | None  # the template's first token after the words: its end-of-turn mark


def build_user_turn(text: str, fmt: ChatFormat, llama: llama_cpp.Llama, limit: int) -> UserTurn:
    """Tokens of the user segment (scaffolding with special tokens, the text without); a
    monologue larger than `limit` tokens loses its head, the scaffolding is always whole."""
    turn = _segment(text, fmt, llama)
    if len(turn.tokens) <= limit:
        return turn
    content = llama.tokenize(text.encode("utf-8"), add_bos=False, special=False)
    budget = limit - (len(turn.tokens) - len(content)) - 4  # room for the scaffolding and "…"
    while budget > 0:
        kept = llama.detokenize(content[-budget:]).decode("utf-8", errors="ignore")
        turn = _segment("…" + kept, fmt, llama)
        if len(turn.tokens) <= limit:
            cut = len(content) - budget
            log.warning("user turn of %d tokens: its first %d were dropped", len(content), cut)
            return UserTurn(turn.tokens, cut, turn.words_end, turn.end_token)
        budget -= len(turn.tokens) - limit
    raise ValueError("the context is too small for any user turn")


def _segment(text: str, fmt: ChatFormat, llama: llama_cpp.Llama) -> UserTurn:
    parts = fmt.user(text)
    pieces = [llama.tokenize(p.text.encode("utf-8"), add_bos=False, special=p.special) for p in parts]
    tokens = [t for piece in pieces for t in piece]
    content = next((i for i, p in enumerate(parts) if p == Part(text, False)), None)
    if content is None or not text.strip():
        return UserTurn(tokens, 0, len(tokens), None)
    words_end = sum(len(piece) for piece in pieces[: content + 1])
    start = words_end - len(pieces[content])
    while words_end > start and _is_punctuation(llama, tokens[words_end - 1]):
        words_end -= 1
    after = [t for piece in pieces[content + 1 :] for t in piece]
    return UserTurn(tokens, 0, words_end, after[0] if after and words_end > start else None)


def _is_punctuation(llama: llama_cpp.Llama, token: int) -> bool:
    text = llama.detokenize([token]).decode("utf-8", errors="ignore").strip()
    return bool(text) and all(ch in PUNCTUATION for ch in text)


def terminal_tokens(llama: llama_cpp.Llama) -> list[int]:
    """Single tokens for the sentence-ending marks (those the vocabulary has)."""
    out = []
    for mark in TERMINAL:
        ids = llama.tokenize(mark.encode(), add_bos=False, special=False)
        if len(ids) == 1:
            out.append(ids[0])
    return out


def next_token_probs(llama: llama_cpp.Llama) -> np.ndarray:
    """The model's distribution over the token after the last position it evaluated."""
    raw = llama_cpp.llama_get_logits_ith(llama.ctx, -1)
    logits = np.ctypeslib.as_array(raw, shape=(llama.n_vocab(),))
    probs: np.ndarray = np.exp(logits - logits.max())
    probs /= probs.sum()
    return probs


def end_of_turn_prob(probs: np.ndarray, end_token: int, terminal: list[int]) -> float:
    """P(end-of-turn mark) + P(sentence-ending mark) from one position's distribution."""
    return float(probs[end_token] + sum(probs[t] for t in terminal))
