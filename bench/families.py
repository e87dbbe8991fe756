"""What a turn costs on each family's memory: a plain turn, a turn that shifts, a turn taken back.

Each family is the tiny random-weight model of its architecture (tests/support/tiny_models.py:
llama, qwen2, qwen3, gemma3 with its sliding window, phi3, and mamba's recurrent state), so the
numbers compare the engine's bookkeeping across memories, not the models. A persistent
conversation at n_ctx 256 (a shift every few turns) answers `--turns` lines, 8 tokens each;
then Retry takes the newest turn back `--retries` times (a recurrent state restores a checkpoint
and evaluates the turn again: app/brain/state_checkpoints.py).

Reported per family: median ms of a turn without a shift, of a turn with one (ratio), and of a
Retry (ratio to llama's, the same run). Run: .venv/bin/python -m bench.families
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from pathlib import Path

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

from bench.common import emit
from tests.support.conversations import make
from tests.support.tiny_models import FAMILIES, tiny_model


def measure(model: Path, turns: int, retries: int) -> dict:
    c = make(model, n_ctx=256, max_tokens=8)
    plain, shifting, back = [], [], []
    try:
        for i in range(turns):
            shifts, t0 = c.shifts, time.perf_counter()
            c.say(f"Tell me one short thing about the number {i}.")
            (shifting if c.shifts > shifts else plain).append((time.perf_counter() - t0) * 1000)
        for _ in range(retries):
            t0 = time.perf_counter()
            text = c.retract_last_turn(reseed=False)
            back.append((time.perf_counter() - t0) * 1000)
            c.say(text or "Hello.")
    finally:
        c.close()
    med = statistics.median
    return {
        "turn_ms": round(med(plain), 1),
        "shift_turn_ms": round(med(shifting), 1) if shifting else None,
        "shift_ratio": round(med(shifting) / med(plain), 2) if shifting else None,
        "shifts": len(shifting),
        "retry_ms": round(med(back), 1),
    }


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--turns", type=int, default=40)
    p.add_argument("--retries", type=int, default=10)
    args = p.parse_args()
    result: dict = {"turns": args.turns, "retries": args.retries, "families": {}}
    with tempfile.TemporaryDirectory() as folder:
        for family in FAMILIES:
            result["families"][family] = measure(tiny_model(family, Path(folder)), args.turns, args.retries)
    base = result["families"]["llama"]["retry_ms"]
    for r in result["families"].values():
        r["retry_vs_llama"] = round(r["retry_ms"] / base, 2)
    emit("families", result)


if __name__ == "__main__":
    main()
