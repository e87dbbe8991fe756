"""Switching conversations: how long opening another saved conversation takes when its llama state
is restored from its session folder (what the sidebar does), against re-evaluating the same
conversation (the baseline, measured in the same run: what a switch costs without a saved state).

A conversation fills the context almost to n_ctx with whole exchanges (evaluated once, no
generation); another holds two exchanges. Each repeat switches from the small one to the full one
as `Responder.open_session` does (save the current, reset, load the saved state), then rebuilds the
full one by evaluating its exchanges again. Default model, n_ctx of the window's default (2048).
Run: .venv/bin/python -m bench.switch [--n-ctx 2048] [--repeats 5]
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

from app.brain import session
from app.brain.conversation import Conversation, LlmConfig
from app.brain.persona import PINNED_TIME, Persona
from app.brain.records import Message
from app.catalog.catalog import default_model_path
from bench.common import emit, pct
from tests.support.phrases import TOPICS


def _exchanges(n: int) -> list[tuple[str, str]]:
    topics = [TOPICS[i % len(TOPICS)] for i in range(n)]
    return [
        (f"Tell me something about {t}.", f"Here is a fact about {t}: it is number {i}.")
        for i, t in enumerate(topics)
    ]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n-ctx", type=int, default=2048)
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args()
    conv = Conversation(LlmConfig(default_model_path("llm"), n_ctx=args.n_ctx), Persona(now=PINNED_TIME))
    work = Path(tempfile.mkdtemp(prefix="bench-switch-"))
    full_dir, small_dir = work / "full", work / "small"
    full: list[tuple[str, str]] = []
    for user, reply in _exchanges(10_000):  # fill to within one exchange of the end, no shift
        if conv.n_past + conv.turn_cost(user, reply) + 8 >= conv.n_ctx:
            break
        conv.append_turn(user, reply)
        full.append((user, reply))
    filled = conv.n_past
    conv.history = [m for u, a in full for m in (Message("user", u), Message("assistant", a))]
    session.save(conv, full_dir)
    conv.reset()
    for user, reply in full[:2]:
        conv.append_turn(user, reply)
    session.save(conv, small_dir)

    restores, rebuilds = [], []
    for _ in range(args.repeats):
        t0 = time.perf_counter()  # as Responder.open_session: save, reset, load
        session.save(conv, small_dir)
        conv.reset()
        result = session.load(conv, full_dir)
        restores.append((time.perf_counter() - t0) * 1000)
        assert result.resumed and conv.n_past >= filled, result
        conv.reset()  # the baseline: the same conversation evaluated again
        t0 = time.perf_counter()
        for user, reply in full:
            conv.append_turn(user, reply)
        rebuilds.append((time.perf_counter() - t0) * 1000)
        conv.reset()
        session.load(conv, small_dir)
    out = {
        "n_ctx": conv.n_ctx,
        "tokens": filled,
        "exchanges": len(full),
        "state_mb": round((full_dir / session.STATE).stat().st_size / 1e6, 1),
        "switch_ms_p50": round(pct(restores, 50), 1),
        "reevaluate_ms_p50": round(pct(rebuilds, 50), 1),
    }
    out["speedup"] = round(out["reevaluate_ms_p50"] / out["switch_ms_p50"], 1)
    conv.close()
    emit("switch", out)


if __name__ == "__main__":
    main()
