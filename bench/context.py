"""Context benchmark: the persistent, whole-turn-shifting engine vs a typical llama-cpp-python app.

Same model, same scripted turns, same run, n_ctx 512:
- engine: `Conversation.stream` (only the new turn is evaluated; KV shift when full);
- baseline: a message list passed to `create_chat_completion`, history truncated from the front to
  fit (llama-cpp-python reuses the common prefix, so it only re-evaluates once truncation starts:
  from then on every turn re-evaluates the whole window).
Engine and baseline turns are interleaved (same load on both). The engine's prompt cost is its
timed user-segment evaluation; the baseline's comes from llama.cpp's perf counters.
Also: session resume vs re-evaluating the same history; generation speed vs
`create_completion(stream=True)` on the same prompt; the cost of a shift
(KL divergence and top-1 agreement of the next-token distribution vs a fresh evaluation of the same
surviving tokens), and RSS after many short turns.

Targets: engine turn-200/turn-2 prompt-time ratio <= 1.3; baseline >= 5x slower than the engine
at turn 200; engine generation >= 0.95x of create_completion; RSS(1000 turns) within 5% of RSS(50).
Run: .venv/bin/python -m bench.context [--turns 200] [--rss-turns 1000]
"""

from __future__ import annotations

import argparse
import os
import time

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import llama_cpp
import numpy as np
import psutil

from app.brain.conversation import Conversation, LlmConfig
from app.brain.persona import PINNED_TIME, Persona
from app.brain.sampling import SamplingConfig
from app.catalog.catalog import default_model_path
from bench.common import emit
from tests.support.phrases import TOPICS

N_CTX = 512
MAX_TOKENS = 16


PERSONA = Persona(now=PINNED_TIME)  # the prompt carries the time; pinned, runs repeat token for token


def conversation(n_ctx: int = N_CTX, max_tokens: int = MAX_TOKENS) -> Conversation:
    """A greedy engine on the default model with the pinned persona."""
    cfg = LlmConfig(
        default_model_path("llm"), n_ctx=n_ctx, sampling=SamplingConfig(temperature=0), max_tokens=max_tokens
    )
    return Conversation(cfg, PERSONA)


def question(i: int) -> str:
    return f"Give me one short fact about {TOPICS[i % len(TOPICS)]}, please."


def perf(ctx) -> tuple[int, float]:
    p = llama_cpp.llama_perf_context(ctx)
    return int(p.n_p_eval), float(p.t_p_eval_ms)


class EngineSide:
    """The persistent, shifting engine."""

    def __init__(self) -> None:
        self.conv = conversation()

    def turn(self, i: int) -> tuple[int, float]:
        self.conv.say(question(i))
        s = self.conv.last_stats
        return s.prompt_tokens, s.t_prompt_ms

    def close(self) -> None:
        self.conv.close()


class BaselineSide:
    """What a typical llama-cpp-python app does: a message list, create_chat_completion, and the
    oldest exchanges dropped from the front when the prompt would not fit."""

    def __init__(self, system: str) -> None:
        self.llm = llama_cpp.Llama(str(default_model_path("llm")), n_ctx=N_CTX, verbose=False, seed=0)
        self.messages = [{"role": "system", "content": system}]

    def turn(self, i: int) -> tuple[int, float]:
        llm, messages = self.llm, self.messages
        messages.append({"role": "user", "content": question(i)})
        while True:
            prompt = llm.tokenize(_render(llm, messages).encode(), add_bos=False, special=True)
            if len(prompt) + MAX_TOKENS < N_CTX or len(messages) <= 2:
                break
            del messages[1:3]
        llama_cpp.llama_perf_context_reset(llm.ctx)
        out = llm.create_chat_completion(messages, max_tokens=MAX_TOKENS, temperature=0)
        messages.append({"role": "assistant", "content": out["choices"][0]["message"]["content"]})
        return perf(llm.ctx)

    def close(self) -> None:
        self.llm.close()


def _render(llm: llama_cpp.Llama, messages: list[dict]) -> str:
    from llama_cpp.llama_chat_format import Jinja2ChatFormatter

    fmt = Jinja2ChatFormatter(
        llm.metadata["tokenizer.chat_template"], eos_token="", bos_token="", add_generation_prompt=True
    )
    return fmt(messages=messages).prompt


def generation_speed(n_tokens: int = 96) -> dict:
    """Tokens/s of the engine's native sampler loop vs create_completion(stream=True), both from
    the first streamed piece to the last (prompt and closing excluded on both sides)."""
    prompt = "Tell me a long story about a lighthouse keeper and a storm."
    conv = conversation(max_tokens=n_tokens)
    llm = llama_cpp.Llama(str(default_model_path("llm")), n_ctx=N_CTX, verbose=False, seed=0)
    eng, base = [], []
    for _ in range(7):  # alternating runs; medians (the machine is shared and noisy)
        conv.reset()
        stamps = [time.perf_counter() for _piece in conv.stream(prompt)]  # one piece per token here
        assert len(stamps) > 1
        eng.append((len(stamps) - 1) / (stamps[-1] - stamps[0]))  # measured as the baseline is
        text = _render(
            llm, [{"role": "system", "content": conv.system_prompt}, {"role": "user", "content": prompt}]
        )
        llm.reset()
        n, first = 0, None
        for _chunk in llm.create_completion(text, max_tokens=n_tokens, temperature=0, stream=True):
            n += 1
            first = first or time.perf_counter()
        base.append((n - 1) / (time.perf_counter() - first) if n > 1 else 0.0)
    conv.close()
    llm.close()
    return {
        "engine_tok_s": round(float(np.median(eng)), 1),
        "create_completion_tok_s": round(float(np.median(base)), 1),
        "ratio": round(float(np.median(eng) / np.median(base)), 3),
    }


def shift_cost(shifts_wanted: int = 6) -> dict:
    """Next-token distribution after a shift vs a fresh evaluation of the same surviving tokens."""
    conv = conversation()
    fresh = llama_cpp.Llama(str(default_model_path("llm")), n_ctx=N_CTX, verbose=False)
    kls, agree = [], []
    i = 0
    while len(kls) < shifts_wanted and i < 400:
        before = conv.shifts
        conv.say(question(i))
        i += 1
        if conv.shifts == before:
            continue
        conv.unprime()  # the probe is a whole user segment; the next say() primes again
        ids = conv.llama.input_ids[: conv.n_past].tolist()
        probe = conv._tokenize(conv.format.user("What did we talk about?"))
        conv.ledger.begin_turn()
        conv._eval(probe)
        shifted = _probs(conv.llama)
        fresh.reset()
        llama_cpp.llama_memory_clear(llama_cpp.llama_get_memory(fresh.ctx), True)
        fresh.eval(ids + probe)
        reference = _probs(fresh)
        kls.append(float(np.sum(reference * (np.log(reference + 1e-12) - np.log(shifted + 1e-12)))))
        agree.append(int(reference.argmax() == shifted.argmax()))
        conv._rollback(len(probe))
        conv.ledger.pop_turn()
    conv.close()
    fresh.close()
    return {
        "shifts_measured": len(kls),
        "kl_mean": round(float(np.mean(kls)), 4),
        "kl_max": round(float(np.max(kls)), 4),
        "top1_agreement": round(float(np.mean(agree)), 3),
    }


def _probs(llm: llama_cpp.Llama) -> np.ndarray:
    n_vocab = llm.n_vocab()
    logits = np.ctypeslib.as_array(llama_cpp.llama_get_logits_ith(llm.ctx, -1), shape=(n_vocab,)).astype(
        np.float64
    )
    e = np.exp(logits - logits.max())
    return e / e.sum()


def resume_vs_replay(turns: int = 20) -> dict:
    """Restart cost: loading a saved session (no evaluation) vs re-evaluating the same history."""
    import tempfile
    from pathlib import Path

    from app.brain import session

    conv = conversation(n_ctx=2048)
    for i in range(turns):
        conv.say(question(i))
    with tempfile.TemporaryDirectory() as d:
        session.save(conv, Path(d))
        history, n_past = list(conv.history), conv.n_past
        conv.close()
        fresh = conversation(n_ctx=2048)
        t0 = time.perf_counter()
        res = session.load(fresh, Path(d))
        t_resume = time.perf_counter() - t0
        assert res.resumed
        fresh.close()
        other = conversation(n_ctx=2048)
        t0 = time.perf_counter()
        replayed = session.replay(other, history)
        t_replay = time.perf_counter() - t0
        other.close()
    return {
        "turns": turns,
        "n_past": n_past,
        "resume_ms": round(t_resume * 1000, 1),
        "replay_ms": round(t_replay * 1000, 1),
        "replayed_turns": replayed,
        "replay_over_resume": round(t_replay / t_resume, 1),
    }


def rss_growth(turns: int) -> dict:
    conv = conversation(max_tokens=4)
    proc = psutil.Process()
    rss = {}
    for i in range(1, turns + 1):
        conv.say(question(i))
        if i in (50, turns):
            rss[i] = proc.memory_info().rss
    conv.close()
    return {
        "rss_mb_50": round(rss[50] / 2**20, 1),
        f"rss_mb_{turns}": round(rss[turns] / 2**20, 1),
        "growth_pct": round(100 * (rss[turns] / rss[50] - 1), 2),
    }


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--turns", type=int, default=200)
    ap.add_argument("--rss-turns", type=int, default=1000)
    args = ap.parse_args()
    engine, baseline = EngineSide(), BaselineSide(PERSONA.render())
    eng, base = [], []
    for i in range(args.turns):  # interleaved, so machine load hits both sides alike
        eng.append(engine.turn(i))
        base.append(baseline.turn(i))
    engine.close()
    baseline.close()
    last = slice(args.turns - 10, args.turns)  # turn-200 figures: mean of the last 10 turns (noise)
    eng_last = float(np.mean([ms for _, ms in eng[last]]))
    base_last = float(np.mean([ms for _, ms in base[last]]))
    eng_t2 = float(np.mean([ms for _, ms in eng[1:4]]))
    result = {
        "turns": args.turns,
        "n_ctx": N_CTX,
        "engine_prompt_tokens_turn2": eng[1][0],
        "engine_prompt_tokens_last": eng[-1][0],
        "baseline_prompt_tokens_turn2": base[1][0],
        "baseline_prompt_tokens_last": base[-1][0],
        "engine_prompt_ms_turn2": round(eng_t2, 1),
        "engine_prompt_ms_last": round(eng_last, 1),
        "baseline_prompt_ms_last": round(base_last, 1),
        "engine_last_over_turn2": round(eng_last / eng_t2, 3),
        "baseline_over_engine_last": round(base_last / eng_last, 2),
        "engine_total_prompt_s": round(sum(ms for _, ms in eng) / 1000, 2),
        "baseline_total_prompt_s": round(sum(ms for _, ms in base) / 1000, 2),
        "generation": generation_speed(),
        "shift_cost": shift_cost(),
        "session": resume_vs_replay(),
        "rss": rss_growth(args.rss_turns),
    }
    emit("context", result)


if __name__ == "__main__":
    main()
