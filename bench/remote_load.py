"""Many desktops, one server: N simulated desktops (threads), each holding its own conversation
with `RemoteConversation`, against one llama.cpp `llama-server` on loopback.

Each desktop sends its turns back to back (no reading time: the worst case for the server),
starting at a different line of the scripted conversation. Per turn: answered or not, the share
of the prompt the server served from its cache (`timings.cache_n` / prompt tokens), time to
first token. Configurations: N desktops on N slots (`-np N`, each slot its own 1024-token
context); and more desktops than slots, with llama-server's host-memory prompt cache
(`--cache-ram`, on by default: a conversation whose slot was taken by another is restored from
RAM) and with it off (`--cache-ram 0`). Bounded: every request has a stall timeout, the server
is stopped at the end. Used by `python -m bench.remote --load` (bench/remote.py).
"""

from __future__ import annotations

import statistics
import threading
import time
from pathlib import Path

from app.brain.brain import BrainError
from app.brain.persona import PINNED_TIME, Persona
from app.brain.records import RemoteConfig
from app.brain.remote import RemoteConversation
from bench.common import pct
from tests.support.longchat_script import LINES
from tests.support.servers import CppServer


def desktop(url: str, index: int, turns: int, out: dict) -> None:
    """One desktop's conversation; its per-turn numbers go into `out` (owned by this thread)."""
    brain = RemoteConversation(
        RemoteConfig(url, max_tokens=24, temperature=0.0, seed=index, stall_timeout_s=120),
        Persona(now=PINNED_TIME),
    )
    shares, ttft, failed = [], [], 0
    for k in range(turns):
        line = LINES[(index * 7 + k) % len(LINES)]
        try:
            list(brain.stream(line))
        except BrainError:
            failed += 1
            continue
        s = brain.last_stats
        assert s is not None
        if k and s.cached_tokens is not None and s.prompt_tokens:  # the first turn has no cache yet
            shares.append(s.cached_tokens / s.prompt_tokens)
        ttft.append(s.t_first_token_ms)
    brain.close()
    out.update(shares=shares, ttft=ttft, failed=failed, answered=len(ttft), trims=brain.shifts)


def run_load(bin_dir: Path, model: Path, desktops: int, slots: int, turns: int, log: Path, extra=()) -> dict:
    """One configuration: `desktops` conversations of `turns` turns on a server with `slots`."""
    server = CppServer(bin_dir, model, log, n_ctx=1024, slots=slots, extra=tuple(extra))
    try:
        results: list[dict] = [{} for _ in range(desktops)]
        threads = [
            threading.Thread(target=desktop, args=(server.url, i, turns, results[i]), daemon=True)
            for i in range(desktops)
        ]
        t0 = time.perf_counter()
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=1800)
        wall = time.perf_counter() - t0
    finally:
        server.stop()
    done = [r for r in results if r]
    shares = [x for r in done for x in r["shares"]]
    ttft = [x for r in done for x in r["ttft"]]
    return {
        "desktops": desktops,
        "slots": slots,
        "flags": list(extra),
        "turns": desktops * turns,
        "answered": sum(r["answered"] for r in done),
        "failed": sum(r["failed"] for r in done) + (desktops - len(done)) * turns,
        "cached_share_mean": round(statistics.fmean(shares), 3) if shares else None,
        "cached_share_p10": round(pct(shares, 10), 3),
        "ttft_p50_ms": round(pct(ttft, 50), 1),
        "ttft_p90_ms": round(pct(ttft, 90), 1),
        "trims": sum(r["trims"] for r in done),
        "wall_s": round(wall, 1),
    }
