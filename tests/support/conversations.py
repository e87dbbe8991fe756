"""Helpers for tests of the local conversation engine: a greedy Conversation, and checks that
its cache, ledger and llama-cpp-python's bookkeeping agree."""

from __future__ import annotations

from pathlib import Path

from app.brain.conversation import Conversation, LlmConfig
from app.brain.persona import PINNED_TIME, Persona
from app.brain.sampling import SamplingConfig


def make(model: Path, **kw) -> Conversation:
    cfg = LlmConfig(
        model, sampling=SamplingConfig(seed=7, temperature=0), max_tokens=kw.pop("max_tokens", 40), **kw
    )
    return Conversation(cfg, Persona("Sam", "Max", now=PINNED_TIME))


def whole_turns(c: Conversation) -> int:
    """Turns in the context, not counting the primed head of the next one."""
    return len(c.ledger.turns) - (1 if c.primed_tokens else 0)


def assert_consistent(c: Conversation) -> None:
    """Cache, ledger and llama-cpp-python's bookkeeping agree, positions contiguous from 0."""
    assert c.cache_pos_min() == 0
    assert c.cache_pos_max() == c.n_past - 1
    assert c.llama.n_tokens == c.n_past == c.ledger.n_past
    assert c.n_past <= c.n_ctx


def assert_reply_opens_with(c: Conversation, shifts: int, question: str, opening: str) -> None:
    """Filler turns until `shifts` shifts have happened, then `question`: its reply opens with
    `opening` (case-insensitive), is stored as said and sits in the cache; the next ordinary turn
    does not open so (what was forced once is not forced again)."""
    while c.shifts < shifts:
        c.say("Tell me one thing about the sea.")
    reply = c.say(question)
    assert reply.lower().startswith(opening.lower()), reply
    assert c.history[-1].role == "assistant" and c.history[-1].text.strip() == reply
    cached = c.llama.detokenize(c.llama.input_ids[: c.n_past].tolist()).decode("utf-8", "replace")
    assert reply in cached, cached[-200:]
    after = c.say("What is two plus two?")
    assert not after.lower().startswith(opening.lower()), after


class EvalCounter:
    """Wraps the real Llama.eval to record how many tokens each call evaluates."""

    def __init__(self, conv: Conversation) -> None:
        self.calls: list[int] = []
        original = conv.llama.eval

        def counted(tokens):
            self.calls.append(len(tokens))
            return original(tokens)

        conv.llama.eval = counted
