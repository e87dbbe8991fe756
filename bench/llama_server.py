"""llama.cpp's own `llama-server` behind the remote brain: what `--cache-reuse` saves after a
trim, and what the RPC engine's network hop costs per token. Baselines are measured in the
same run (these machines are shared and noisy: compare the ratios).

- `reuse`: the scripted conversation (60 turns, n_ctx 1024, so it is trimmed several times)
  with `--cache-reuse 64` and with it off. Per turn, tokens the server evaluated
  (prompt − `timings.cache_n`), over all turns and over the turns right after a trim (when the
  request's head moved: the kept exchanges are now at other positions than in the cache).
- `rpc`: the same 12 turns with the model on this process, on one `ggml-rpc-server` worker and
  split over two (all layers offloaded, loopback): generation tokens/s and the hop's cost per
  token ((1 / rpc tok/s − 1 / local tok/s), in ms); first token p50.

Needs the binaries of packaging/build_llama_server.sh.
Run: .venv/bin/python -m bench.llama_server
"""

from __future__ import annotations

import statistics
import tempfile
from pathlib import Path

from app.brain.persona import PINNED_TIME, Persona
from app.brain.records import RemoteConfig
from app.brain.remote import RemoteConversation
from app.catalog.catalog import default_model_path
from bench.common import emit
from tests.support.longchat_script import LINES
from tests.support.servers import CppServer, RpcWorker, llama_cpp_bin


def conversation(url: str, lines: list[str], max_tokens: int) -> list[dict]:
    """Per turn: prompt, cached, evaluated, generated tokens, generation and first-token ms."""
    brain = RemoteConversation(
        RemoteConfig(url, max_tokens=max_tokens, temperature=0.0, seed=1), Persona(now=PINNED_TIME)
    )
    out = []
    for line in lines:
        list(brain.stream(line))
        s = brain.last_stats
        assert s is not None and s.cached_tokens is not None
        out.append(
            {
                "prompt": s.prompt_tokens,
                "cached": s.cached_tokens,
                "evaluated": s.prompt_tokens - s.cached_tokens,
                "gen": s.gen_tokens,
                "gen_ms": s.t_gen_ms,
                "ttft_ms": s.t_first_token_ms,
                "trimmed": bool(s.shifts),
            }
        )
    brain.close()
    return out


def reuse(bin_dir: Path, model: Path, tmp: Path, turns: int = 60) -> dict:
    result = {}
    for name, n in (("reuse_64", 64), ("reuse_off", 0)):
        server = CppServer(bin_dir, model, tmp / f"{name}.log", n_ctx=1024, cache_reuse=n)
        try:
            per_turn = conversation(server.url, LINES[:turns], 48)
        finally:
            server.stop()
        trimmed = [t["evaluated"] for t in per_turn if t["trimmed"]]
        result[name] = {
            "evaluated_mean": round(statistics.fmean(t["evaluated"] for t in per_turn), 1),
            "evaluated_after_trim": trimmed,
            "prompt_after_trim": [t["prompt"] for t in per_turn if t["trimmed"]],
            "ttft_p50_ms": round(statistics.median(t["ttft_ms"] for t in per_turn), 1),
        }
    on, off = result["reuse_64"], result["reuse_off"]
    result["after_trim_off_over_on"] = round(
        sum(off["evaluated_after_trim"]) / max(1, sum(on["evaluated_after_trim"])), 2
    )
    return result


def rpc(bin_dir: Path, model: Path, tmp: Path, turns: int = 12) -> dict:
    result = {}
    for name, n_workers in (("local", 0), ("rpc_1_worker", 1), ("rpc_2_workers", 2)):
        workers = [RpcWorker(bin_dir, tmp / f"{name}-w{i}.log", threads=2) for i in range(n_workers)]
        try:
            server = CppServer(
                bin_dir, model, tmp / f"{name}.log", n_ctx=2048, rpc=[w.address for w in workers]
            )
            try:
                per_turn = conversation(server.url, LINES[:turns], 64)
            finally:
                server.stop()
        finally:
            for w in workers:
                w.stop()
        gen = sum(t["gen"] for t in per_turn)
        ms = sum(t["gen_ms"] for t in per_turn)
        result[name] = {
            "tok_s": round(gen / (ms / 1000), 1),
            "ttft_p50_ms": round(statistics.median(t["ttft_ms"] for t in per_turn), 1),
        }
    local = result["local"]["tok_s"]
    for name in ("rpc_1_worker", "rpc_2_workers"):
        r = result[name]
        r["hop_ms_per_token"] = round(1000 / r["tok_s"] - 1000 / local, 2)
        r["speed_vs_local"] = round(r["tok_s"] / local, 2)
    return result


def main() -> None:
    bin_dir = llama_cpp_bin()
    if bin_dir is None:
        raise SystemExit("llama-server is not built: run packaging/build_llama_server.sh .venv/bin/python")
    model = default_model_path("llm")
    with tempfile.TemporaryDirectory() as tmp:
        emit(
            "llama_server", {"reuse": reuse(bin_dir, model, Path(tmp)), "rpc": rpc(bin_dir, model, Path(tmp))}
        )


if __name__ == "__main__":
    main()
