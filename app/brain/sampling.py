"""Choosing each reply token: llama.cpp's native sampler chain, fed with the conversation.

A small chat model left alone copies its own recent replies: after ~20 turns most answers become
one sentence with the topic word swapped in ("The word for Aria is bicycle."). Resetting the
sampler at every turn hides that from the repetition penalties, which then only see the reply in
progress. So at the start of each turn the chain is reset and then fed the model's **own earlier
replies that are still in the context** (all of them by default: what the model can copy from
is what the sampler must see; or the newest `history_tokens`; never the user's
words, which a good answer repeats, nor the template's scaffolding or end-of-turn tokens, whose
penalty would make replies run on). The samplers then judge each new token against what the
model has already said:

- DRY ("don't repeat yourself", llama.cpp's `llama_sampler_init_dry`): a token that would extend
  a sequence already said (longer than `dry_allowed_length` tokens) loses
  `dry_multiplier * dry_base ** (length - allowed)` from its logit. Sequence breakers (newline,
  colon, quote, asterisk) end a match, so formatting is never penalised. This is what breaks a
  reply template while leaving single words free: a topic word may recur, a 4-word frame may not.
- penalties (`llama_sampler_init_penalties`): the classic repeat penalty over the last
  `repeat_last_n` tokens seen (history tail + this reply), plus optional frequency/presence.
- then top-k, top-p, temperature and a seeded draw (or greedy when temperature is 0).

Because the history is rebuilt from the cache at every turn, the sampler's state is a function
of the context alone: cancel, a withdrawn tentative turn, a resumed session or a reset give the
same next reply as a conversation that reached the same context directly. A Retry asks for
another reply from the same context: `start_turn(..., variant=n)` draws with seed + n.

Threading: owned by the Conversation's thread, like the llama context it samples from.
"""

from __future__ import annotations

import ctypes
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # llama_cpp is imported when a Sampler is made: the CLI reads SamplingConfig's
    import llama_cpp  # defaults for its flags and must start without loading the library.

# llama.cpp's defaults are "\n", ":", '"', "*" (for chat formatting and role play). Replies here
# are spoken plain text, so only a line break ends a match: with ":" as a breaker the default
# model was seen looping "The answer: The answer: The answer: ..." untouched by DRY.
DRY_BREAKERS = ("\n",)


@dataclass
class SamplingConfig:
    """Sampler settings. Defaults: talk-llama's top-k/top-p/temperature; the conversation-aware
    parts were chosen with `bench/longchat.py` (docs/conversation.md, "Long conversations")."""

    seed: int = 0
    temperature: float = 0.30
    top_k: int = 5
    top_p: float = 0.80
    repeat_penalty: float = 1.10
    repeat_last_n: int = 64
    frequency_penalty: float = 0.0
    presence_penalty: float = 0.0
    dry_multiplier: float = 3.0  # 0 = DRY off
    dry_base: float = 1.75
    dry_allowed_length: int = 2
    dry_breakers: tuple[str, ...] = DRY_BREAKERS  # a match never spans one of these
    # How much of the model's own earlier replies (still in the context) the samplers see:
    # -1 = all of them, 0 = only the reply being generated, N = the newest N tokens.
    history_tokens: int = -1


class Sampler:
    """The native chain for one model. `start_turn(history)` before each reply, then `sample()`
    per token (the chosen token is accepted into the chain's history by llama.cpp itself)."""

    def __init__(
        self, config: SamplingConfig, vocab: llama_cpp.llama_vocab_p, n_vocab: int, n_ctx: int
    ) -> None:
        import llama_cpp

        self._lib = llama_cpp
        self.config = config
        self._vocab, self._n_vocab, self._n_ctx = vocab, n_vocab, n_ctx
        self._chain: llama_cpp.llama_sampler_p | None = None
        self._variant = 0
        self._chain = self._build(config.seed)

    def _build(self, seed: int) -> llama_cpp.llama_sampler_p:
        llama_cpp, c, vocab = self._lib, self.config, self._vocab
        chain = llama_cpp.llama_sampler_chain_init(llama_cpp.llama_sampler_chain_default_params())
        add = llama_cpp.llama_sampler_chain_add
        if c.dry_multiplier > 0:
            breakers = (ctypes.c_char_p * len(c.dry_breakers))(*(b.encode() for b in c.dry_breakers))
            # Window: everything the chain is fed in one turn, which all sits in the context.
            window = self._n_ctx
            add(
                chain,
                llama_cpp.llama_sampler_init_dry(
                    vocab, c.dry_multiplier, c.dry_base, c.dry_allowed_length, window, breakers, len(breakers)
                ),
            )
        # llama-cpp-python 0.3.36's binding takes n_vocab first (its C header does too).
        add(
            chain,
            llama_cpp.llama_sampler_init_penalties(
                self._n_vocab, c.repeat_last_n, c.repeat_penalty, c.frequency_penalty, c.presence_penalty
            ),
        )
        if c.temperature <= 0:
            add(chain, llama_cpp.llama_sampler_init_greedy())
        else:
            add(chain, llama_cpp.llama_sampler_init_top_k(c.top_k))
            add(chain, llama_cpp.llama_sampler_init_top_p(c.top_p, 1))
            add(chain, llama_cpp.llama_sampler_init_temp(c.temperature))
            add(chain, llama_cpp.llama_sampler_init_dist(seed & 0xFFFFFFFF))
        return chain  # type: ignore[no-any-return]  # a ctypes pointer (the bindings return Any)

    def start_turn(self, history: Sequence[int], variant: int = 0) -> None:
        """Forget the last reply (and restart the seeded draw), then read `history`: the model's
        earlier replies, oldest first; only the newest `history_tokens` are used (-1: all).
        `variant` > 0 (a Retry) draws with another seed; greedy sampling has only one reply."""
        if variant != self._variant:  # the seed is fixed when the chain is made (~µs to rebuild)
            self.close()
            self._chain = self._build(self.config.seed + variant)
            self._variant = variant
        self._lib.llama_sampler_reset(self._chain)
        n = self.config.history_tokens
        if n >= 0:
            history = history[max(len(history) - n, 0) :] if n else ()
        for tok in history:
            self._lib.llama_sampler_accept(self._chain, int(tok))

    def accept(self, token: int) -> None:
        """A reply token chosen without sampling (a forced one): the penalties see it too."""
        self._lib.llama_sampler_accept(self._chain, int(token))

    def sample(self, ctx: llama_cpp.llama_context_p) -> int:
        """The next token from the last evaluated position's logits."""
        return int(self._lib.llama_sampler_sample(self._chain, ctx, -1))

    def close(self) -> None:
        if self._chain is not None:
            self._lib.llama_sampler_free(self._chain)
            self._chain = None
