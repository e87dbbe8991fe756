"""Long-conversation benchmark: does the assistant stay on topic and varied after 100+ turns?

The scripted conversation (`longchat_script.py`, 124 user turns) is played into one persistent
`Conversation` at n_ctx 512 (the KV cache shifts many times) and 4096 (no shift), and, as the
baseline in the same run, each line in a fresh conversation (`reset()` between lines, so the
model never sees its earlier replies). Every sampler configuration named with `--configs` runs
all three, for every seed; the persona's clock is pinned, so a (config, seed) pair repeats.

Reported for replies 21+ (per seed, then min/max over seeds):
- template share: share of replies containing the conversation's most common 4-word sequence;
- on-topic: share of replies that use a content word of their question;
- distinct-2: distinct word pairs / all word pairs over those replies;
- tokens/s: generated tokens / generation time (whole run; mostly a measure of how full the
  context was), and the sampler's own cost per token for `today` and the config under test,
  timed on the context the conversation ended with (`sampler_cost`);
- recall (after the last turn, by next-token choice, no sampling): the persona's name, facts
  the user stated in the last turns, a word the user asks to be repeated.

Targets (issue #11), default config, every seed, both n_ctx: template share <= 2x fresh and
<= 0.20; on-topic >= 0.9x fresh; generation speed >= 0.95x the `today` sampler (reset each turn,
no DRY), i.e. eval + sampler time per token; every recall check passes.

Run: .venv/bin/python -m bench.longchat [--configs default,today] [--seeds 1,2,3,4]
     [--ctx 512,4096] [--threads 2] [--turns 124]
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import time

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

from app.brain.conversation import Conversation, LlmConfig
from app.brain.persona import PINNED_TIME, Persona
from app.brain.sampling import Sampler, SamplingConfig
from bench.common import ROOT, emit, model_path
from tests.support.longchat_script import LINES, RECALL
from tests.support.topic_scores import scores

RESULTS = ROOT / "bench" / "results"
MAX_TOKENS = 64  # spoken replies are one or two sentences; a cap keeps the run bounded

# Sampler configurations compared (docs/benchmarks.md). `today`: reset each turn, no DRY, the
# repeat penalty over this reply only (the baseline the default is measured against).
CONFIGS: dict[str, dict] = {
    "default": {},
    "today": {"history_tokens": 0, "dry_multiplier": 0.0},
    "penalty-history": {"dry_multiplier": 0.0},
    "dry-no-history": {"history_tokens": 0},
    "dry-256": {"history_tokens": 256},
    "dry-1024": {"history_tokens": 1024},
    "dry-all-history": {"history_tokens": 1 << 20},
    "dry-3-all-history": {"dry_multiplier": 3.0, "history_tokens": 1 << 20},
    "dry-0.8-llama-breakers": {"dry_multiplier": 0.8, "dry_breakers": ("\n", ":", '"', "*")},
    "dry-llama-breakers": {"dry_breakers": ("\n", ":", '"', "*")},
    "dry-3": {"dry_multiplier": 3.0},
    "dry-allow3": {"dry_allowed_length": 3},
    "dry+presence": {"presence_penalty": 0.5},
    "dry-norepeat": {"repeat_penalty": 1.0},
}


def recall(conv: Conversation) -> dict[str, bool]:
    """Each check passes when the target word's first token is among the 3 likeliest next ones."""
    out = {}
    for question, prefix, target in RECALL:
        spaced = not prefix.endswith('"')
        first = conv.llama.tokenize(((" " if spaced else "") + target).encode(), add_bos=False, special=False)
        want = conv.llama.detokenize(first[:1]).decode("utf-8", "replace").strip().lower()
        top = [t.strip().lower() for t, _p in conv.probe(question, prefix, k=3)]
        out[target] = want in top
    return out


def sampler_cost(conv: Conversation, n: int = 200) -> dict[str, float]:
    """ms per generated token spent in the sampler (reading the history once, then `n` draws
    from the same logits), for `today` and this conversation's sampler, on the context the
    conversation ended with. Generation speed is eval + sampler; the eval part is the same for
    both, and comparing whole runs would mostly compare how full each run's context was."""
    out = {}
    for name, sampling in (("today", SamplingConfig(**CONFIGS["today"])), ("this", conv.config.sampling)):
        sampler = Sampler(sampling, conv._vocab, conv.llama.n_vocab(), conv.n_ctx)
        t0 = time.perf_counter()
        sampler.start_turn(conv.own_replies())
        for _ in range(n):
            sampler.sample(conv.llama.ctx)
        out[name] = round((time.perf_counter() - t0) * 1000 / n, 4)
        sampler.close()
    return out


def make(n_ctx: int, sampling: SamplingConfig, threads: int, model: str | None = None) -> Conversation:
    """`model`: a catalog name or GGUF file (None: the built-in model)."""
    cfg = LlmConfig(model_path(model), n_ctx=n_ctx, n_threads=threads, max_tokens=MAX_TOKENS)
    cfg.sampling = sampling
    return Conversation(cfg, Persona(now=PINNED_TIME))


def run_mode(
    mode: str, lines: list[str], sampling: SamplingConfig, threads: int, model: str | None = None
) -> dict:
    """One conversation (`ctx512`, `ctx4096`) or the fresh baseline (`fresh`)."""
    fresh = mode == "fresh"
    conv = make(1024 if fresh else int(mode.removeprefix("ctx")), sampling, threads, model)
    replies, gen_tokens, gen_s = [], 0, 0.0
    t0 = time.perf_counter()
    for line in lines:
        if fresh:
            conv.reset()
        replies.append(conv.say(line))
        gen_tokens += conv.last_stats.gen_tokens
        gen_s += conv.last_stats.t_gen_ms / 1000
    if fresh:  # the facts the recall checks ask about, each in a fresh conversation too
        checks = {}
        for *_, target in RECALL:
            conv.reset()
            for line in lines:
                if target in line:
                    conv.say(line)
            checks |= {k: v for k, v in recall(conv).items() if k == target}
    else:
        checks = recall(conv)
    sampler_ms = None if fresh else sampler_cost(conv)
    result = {
        **scores(lines, replies),
        "tokens_per_s": round(gen_tokens / gen_s, 1),
        "gen_tokens": gen_tokens,
        "shifts": conv.shifts,
        "recall": checks,
        "sampler_ms_per_token": sampler_ms,
        "seconds": round(time.perf_counter() - t0, 1),
        "replies": replies,  # kept in bench/results/<name>-replies.json, not in the printed line
    }
    conv.close()
    return result


def summarize(per_seed: dict[int, dict]) -> dict:
    def span(key: str) -> list[float]:
        values = [r[key] for r in per_seed.values()]
        return [min(values), max(values)]

    return {
        "template_share": span("template_share"),
        "on_topic": span("on_topic"),
        "distinct2": span("distinct2"),
        "tokens_per_s": span("tokens_per_s"),
        "recall_passed": sum(all(r["recall"].values()) for r in per_seed.values()),
        "seeds": len(per_seed),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--configs", default="default,today")
    ap.add_argument("--seeds", default="1,2,3,4")
    ap.add_argument("--ctx", default="512,4096")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--turns", type=int, default=len(LINES))
    ap.add_argument("--name", default="longchat", help="result file name under bench/results/")
    ap.add_argument("--model", help="catalog name or GGUF file (default: the built-in model)")
    args = ap.parse_args()
    RESULTS.mkdir(exist_ok=True)
    lines = LINES[: args.turns]
    modes = [f"ctx{n}" for n in args.ctx.split(",")] + ["fresh"]
    seeds = [int(s) for s in args.seeds.split(",")]
    result: dict = {"bench": "longchat", "turns": len(lines), "max_tokens": MAX_TOKENS, "configs": {}}
    result["model"] = args.model or "built-in"
    names = args.configs.split(",")
    runs: dict[str, dict[str, dict[int, dict]]] = {n: {m: {} for m in modes} for n in names}
    for seed in seeds:  # configs interleaved per seed: they share the machine's load over time
        for name in names:
            fields = {**dataclasses.asdict(SamplingConfig()), **CONFIGS[name], "seed": seed}
            for mode in modes:
                sampling = SamplingConfig(**fields)
                r = runs[name][mode][seed] = run_mode(mode, lines, sampling, args.threads, args.model)
                print(
                    f"# {name} seed {seed} {mode}: template {r['template_share']} ({r['template']!r}) "
                    f"on-topic {r['on_topic']} distinct2 {r['distinct2']} {r['tokens_per_s']} tok/s "
                    f"shifts {r['shifts']} recall {r['recall']} ({r['seconds']} s)",
                    flush=True,
                )
    for name in names:
        result["configs"][name] = {
            "sampling": CONFIGS[name],
            "summary": {m: summarize(runs[name][m]) for m in modes},
            "runs": runs[name],
        }
    (RESULTS / f"{args.name}-replies.json").write_text(json.dumps(result, indent=1, ensure_ascii=False))
    for config in result["configs"].values():
        for per_seed in config["runs"].values():
            for run in per_seed.values():
                run.pop("replies")
    emit(args.name, result)


if __name__ == "__main__":
    main()
