"""Memory benchmark: are the facts the user told still known, in the replies the user hears,
after the turns that told them are gone?

One persistent `Conversation` per (n_ctx, seed, memory on/off): 8 facts stated in the first 10
turns, then the long-conversation script's lines (`--turns`, ≥ 100), then one question per fact,
the persona's name and a word to repeat. Every reply is sampled with the default sampler and
default settings (what the user hears), and a check passes when the reply contains the expected
word. Memory off is the baseline, run in lockstep with memory on in the same process (each line
said to both, one after the other): the time ratio holds on a machine whose load changes.

Reported per (n_ctx, memory): recall of the facts (share over seeds), the persona's name and the
repeated word (seeds passed), mean time per scripted turn (ratio on/off), with its time to the
first token and tokens generated (replies of different lengths cost differently), shifts, and the
template share / on-topic scores of replies 21+ (bench.longchat.scores).

Targets (issue #34), memory on, both n_ctx: facts ≥ 0.8, name 4/4, repeat 4/4; per-turn time
≤ 1.05× memory off; template share and on-topic as bench.longchat's.

Run: .venv/bin/python -m bench.memory [--seeds 1,2,3,4] [--ctx 512,4096] [--turns 100] [--model NAME|FILE]
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

from app.brain.conversation import Conversation, LlmConfig
from app.brain.persona import PINNED_TIME, Persona
from app.brain.sampling import SamplingConfig
from bench.common import emit, model_path
from bench.longchat import MAX_TOKENS
from tests.support.longchat_script import LINES
from tests.support.topic_scores import FIRST_SCORED, scores

# (statement, question, expected word in the reply)
FACTS = [
    ("My name is Robin.", "What is my name?", "robin"),
    ("I live in Porto.", "Where do I live?", "porto"),
    ("My dog is called Rex.", "What is my dog called?", "rex"),
    ("I work as a nurse.", "What is my job?", "nurse"),
    ("My sister is called Maria.", "What is my sister called?", "maria"),
    ("I like green tea.", "Which drink do I like?", "tea"),
    ("My birthday is on the 4th of May.", "When is my birthday?", "may"),
    ("Remember that the code is 4512.", "What is the code I asked you to remember?", "4512"),
]
NAME = ("What is your name?", "aria")
REPEAT = ("Please repeat this word exactly: pineapple", "pineapple")
OPENING = ["Hello!", "How are you today?"]  # small talk between the facts (10 turns in all)


def opening() -> list[str]:
    """The first 10 turns: the 8 facts with small talk after the 3rd and the 6th."""
    stated = [f[0] for f in FACTS]
    return [*stated[:3], OPENING[0], *stated[3:6], OPENING[1], *stated[6:]]


MODES = ("on", "off")


def run_pair(n_ctx: int, seed: int, turns: int, model: Path) -> dict[str, dict]:
    """Memory on and off for one (n_ctx, seed), in lockstep: each scripted line is said to both
    conversations one after the other (which goes first alternates), so a change in the machine's
    load over the run weighs on both alike and the time ratio stays fair on a shared machine."""
    convs = {
        mode: Conversation(
            LlmConfig(
                model,
                n_ctx=n_ctx,
                max_tokens=MAX_TOKENS,
                sampling=SamplingConfig(seed=seed),
                memory=mode == "on",
            ),
            Persona(now=PINNED_TIME),
        )
        for mode in MODES
    }
    try:
        for line in opening():
            for conv in convs.values():
                conv.say(line)
        script = (LINES * (turns // len(LINES) + 1))[:turns]
        replies: dict[str, list[str]] = {mode: [] for mode in MODES}
        totals = {mode: {"ms": 0.0, "gen_tokens": 0, "first_token_ms": 0.0} for mode in MODES}
        for i, line in enumerate(script):
            for mode in MODES if i % 2 == 0 else MODES[::-1]:
                t0 = time.perf_counter()
                replies[mode].append(convs[mode].say(line))
                stats = convs[mode].last_stats
                assert stats is not None  # set by every finished turn
                total = totals[mode]
                total["ms"] += (time.perf_counter() - t0) * 1000
                total["gen_tokens"] += stats.gen_tokens
                total["first_token_ms"] += stats.t_first_token_ms
        return {
            mode: _checks(conv, totals[mode], len(script), script, replies[mode])
            for mode, conv in convs.items()
        }
    finally:
        for conv in convs.values():
            conv.close()


def _checks(conv: Conversation, total: dict, n: int, script: list[str], replies: list[str]) -> dict:
    """The questions after the script, and the script's per-turn numbers and scores."""
    facts = {word: word in conv.say(question).lower() for _stmt, question, word in FACTS}
    name, repeat = conv.say(NAME[0]), conv.say(REPEAT[0])
    return {
        "facts": facts,
        "name": NAME[1] in name.lower(),
        "repeat": REPEAT[1] in repeat.lower(),
        "heard": {"name": name, "repeat": repeat},
        "per_turn_ms": round(total["ms"] / n, 1),
        "first_token_ms": round(total["first_token_ms"] / n, 1),
        "gen_tokens": round(total["gen_tokens"] / n, 1),
        "shifts": conv.shifts,
        **scores(script[FIRST_SCORED:], replies[FIRST_SCORED:]),
    }


def summarize(runs: list[dict]) -> dict:
    n = len(runs)
    facts = [ok for r in runs for ok in r["facts"].values()]
    return {
        "facts": round(sum(facts) / len(facts), 3),
        "name": f"{sum(r['name'] for r in runs)}/{n}",
        "repeat": f"{sum(r['repeat'] for r in runs)}/{n}",
        "per_turn_ms": round(sum(r["per_turn_ms"] for r in runs) / n, 1),
        "first_token_ms": round(sum(r["first_token_ms"] for r in runs) / n, 1),
        "gen_tokens": round(sum(r["gen_tokens"] for r in runs) / n, 1),
        "shifts": [r["shifts"] for r in runs],
        "template_share_max": max(r["template_share"] for r in runs),
        "on_topic_min": min(r["on_topic"] for r in runs),
        "missed": sorted({w for r in runs for w, ok in r["facts"].items() if not ok}),
        "heard": [r["heard"] for r in runs],  # the replies to the name and repeat checks
    }


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--seeds", default="1,2,3,4")
    p.add_argument("--ctx", default="512,4096")
    p.add_argument("--turns", type=int, default=100)
    p.add_argument("--model", help="catalog name or GGUF file (default: the built-in model)")
    p.add_argument("--name", default="memory", help="the result's name (bench/results/NAME.json)")
    args = p.parse_args()
    seeds = [int(s) for s in args.seeds.split(",")]
    result: dict = {"turns": args.turns, "seeds": seeds, "model": args.model or "built-in", "by_ctx": {}}
    for n_ctx in (int(c) for c in args.ctx.split(",")):
        runs: dict[str, list[dict]] = {mode: [] for mode in MODES}
        for seed in seeds:
            for mode, result_of_mode in run_pair(n_ctx, seed, args.turns, model_path(args.model)).items():
                runs[mode].append(result_of_mode)
        on, off = summarize(runs["on"]), summarize(runs["off"])
        result["by_ctx"][str(n_ctx)] = {
            "on": on,
            "off": off,
            "time_ratio": round(on["per_turn_ms"] / off["per_turn_ms"], 3),
        }
    emit(args.name, result)


if __name__ == "__main__":
    main()
