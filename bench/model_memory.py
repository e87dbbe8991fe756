"""Memory per model: does the memory note keep the facts without taking the conversation over?

For each model (`--model`, repeatable: a catalog name or a GGUF file; default the built-in one
and the 0.5B instruct model), each fact set and each seed, two persistent conversations at
n_ctx 512 run in lockstep, memory note on and off: the user states 8 facts, asks
`--numbers` short questions ("Tell me one fact about the number 7.") through the context shifts,
then asks about each fact. Every reply is sampled as the user hears it.

Reported per model, note on (off): the share of number questions after the first shift whose
reply is about their number (on-topic: it names the number), replies that speak the note's own
words ("the user", its header), and facts recalled — on the bench's facts (bench/memory.py's,
the ones the memory was built with) and on a held-out set written apart and never tuned on.

Targets (issue #65): on-topic with the note ≥ 0.95× without; the note's words spoken 0; recall
≥ 0.8 on both sets.

Run: .venv/bin/python -m bench.model_memory [--model NAME|FILE ...] [--seeds 1,2] [--numbers 24]
"""

from __future__ import annotations

import argparse
import os
import re
from pathlib import Path

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

from app.brain.conversation import Conversation, LlmConfig
from app.brain.model_aids import Aids
from app.brain.persona import PINNED_TIME, Persona
from app.brain.sampling import SamplingConfig
from bench.common import emit, model_path
from bench.memory import FACTS

# Written apart from the bench's facts and the memory's patterns; never tuned on.
HELD_OUT = [
    ("Hey, I'm Dana, by the way.", "Do you remember my name?", "dana"),
    ("These days I live in Leeds.", "Which city do I live in?", "leeds"),
    ("For a living I bake bread, I'm a baker.", "What do I do for a living?", "baker"),
    ("We have a cat named Miso.", "What's my cat's name?", "miso"),
    ("My brother is called Tomas.", "What is my brother's name?", "tomas"),
    ("I really love hiking.", "What hobby did I mention?", "hiking"),
    ("I was born in Lyon.", "Where was I born?", "lyon"),
    ("Please remember that my locker number is 318.", "What is my locker number?", "318"),
]
SETS = {"bench": FACTS, "held-out": HELD_OUT}
_UNITS = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine"]
_TEENS = ["ten", "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen"]
NUMBER_WORDS = [*_UNITS, *_TEENS, "eighteen", "nineteen", "twenty", *(f"twenty-{w}" for w in _UNITS[1:])]
NOTE_WORDS = re.compile(r"\bthe user\b|facts about the user|never read it out|what the user has told", re.I)
MODES = ("on", "off")
DEFAULT_MODELS = ("smollm2-135m", "qwen2.5-coder-0.5b")


def about(n: int, reply: str) -> bool:
    """The reply names the number `n` (digits or words)."""
    return bool(re.search(rf"\b{n}\b|\b{NUMBER_WORDS[n]}\b", reply, re.I))


def run(model: Path, facts: list[tuple[str, str, str]], seed: int, numbers: int, aids: Aids | None) -> dict:
    convs = {
        mode: Conversation(
            LlmConfig(
                model,
                n_ctx=512,
                max_tokens=40,
                sampling=SamplingConfig(seed=seed),
                memory=mode == "on",
                aids=aids,
            ),
            Persona(now=PINNED_TIME),
        )
        for mode in MODES
    }
    out = {mode: {"after_shift": 0, "on_topic": 0, "note_spoken": [], "recalled": {}} for mode in MODES}
    try:
        lines = [f[0] for f in facts] + [
            f"Tell me one fact about the number {n}." for n in range(1, numbers + 1)
        ]
        for i, line in enumerate(lines):
            for mode in MODES if i % 2 == 0 else MODES[::-1]:
                reply = convs[mode].say(line)
                o = out[mode]
                if NOTE_WORDS.search(reply):
                    o["note_spoken"].append(reply[:100])
                n = i - len(facts) + 1
                if n >= 1 and convs[mode].shifts:
                    o["after_shift"] += 1
                    o["on_topic"] += about(n, reply)
        for mode, conv in convs.items():
            for _stmt, question, word in facts:
                reply = conv.say(question)
                out[mode]["recalled"][word] = word in reply.lower()
                if NOTE_WORDS.search(reply):
                    out[mode]["note_spoken"].append(reply[:100])
            out[mode]["shifts"] = conv.shifts
    finally:
        for conv in convs.values():
            conv.close()
    return out


def summarize(runs: list[dict]) -> dict:
    after = sum(r["after_shift"] for r in runs)
    recalled = [ok for r in runs for ok in r["recalled"].values()]
    return {
        "on_topic": round(sum(r["on_topic"] for r in runs) / max(after, 1), 3),
        "after_shift": after,
        "note_spoken": sum(len(r["note_spoken"]) for r in runs),
        "spoken": [s for r in runs for s in r["note_spoken"]][:6],
        "recall": round(sum(recalled) / len(recalled), 3),
        "missed": sorted({w for r in runs for w, ok in r["recalled"].items() if not ok}),
        "shifts": [r["shifts"] for r in runs],
    }


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--model", action="append", help="catalog name or GGUF file (repeatable)")
    p.add_argument("--seeds", default="1,2")
    p.add_argument("--numbers", type=int, default=24)
    p.add_argument("--aids", help="aids to use instead of the model's, e.g. recall_note=0,own_replies_dry=1")
    p.add_argument("--name", default="model_memory", help="the result's name (bench/results/NAME.json)")
    args = p.parse_args()
    aids = None
    if args.aids:
        aids = Aids(**{k: v == "1" for k, v in (kv.split("=") for kv in args.aids.split(","))})
    seeds = [int(s) for s in args.seeds.split(",")]
    result: dict = {"seeds": seeds, "numbers": args.numbers, "n_ctx": 512, "aids": args.aids, "models": {}}
    for name in args.model or DEFAULT_MODELS:
        by_set = {}
        for set_name, facts in SETS.items():
            runs: dict[str, list[dict]] = {mode: [] for mode in MODES}
            for seed in seeds:
                for mode, r in run(model_path(name), facts, seed, args.numbers, aids).items():
                    runs[mode].append(r)
            by_set[set_name] = {mode: summarize(runs[mode]) for mode in MODES}
        result["models"][name] = by_set
    emit(args.name, result)


if __name__ == "__main__":
    main()
