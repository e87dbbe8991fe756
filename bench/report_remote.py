"""Report rows for the remote brain's benches: policies against llama-cpp-python's server
(bench.remote), llama.cpp's llama-server: cache reuse and the RPC hop (bench.llama_server),
many desktops on one server (bench.remote --load)."""

from __future__ import annotations

from bench.result_files import Row, load, ok


def server_rows() -> list[Row]:
    out: list[Row] = []
    if r := load("remote"):
        out += remote_rows(r)
    if r := load("llama_server"):
        out += llama_server_rows(r)
    if r := load("remote_load"):
        out += remote_load_rows(r)
    return out


def remote_rows(r: dict) -> list[Row]:
    p = r["policies"]
    out = [
        (
            "remote",
            f"{name}: answered · tokens sent / evaluated by the server per turn · first token p50 / p90",
            f"{m['answered']}/{r['turns']} · {m['sent_mean']} / {m['evaluated_mean']} · "
            f"{m['ttft_p50_ms']} / {m['ttft_p90_ms']} ms",
            "",
        )
        for name, m in p.items()
    ]
    out.append(
        (
            "remote",
            "one-message sliding window / ours: server evaluation · first token p50",
            f"{r['evaluated_sliding_over_ours']}× · {r['ttft_p50_sliding_over_ours']}×",
            f"ours answers every turn ({ok(p['ours']['answered'] == r['turns'])})",
        )
    )
    return out


def llama_server_rows(r: dict) -> list[Row]:
    on, off = r["reuse"]["reuse_64"], r["reuse"]["reuse_off"]
    rpc = r["rpc"]
    one, two = rpc["rpc_1_worker"], rpc["rpc_2_workers"]
    return [
        (
            "llama_server",
            "tokens evaluated per turn, --cache-reuse 64 vs off: all turns · the turns after a trim",
            f"{on['evaluated_mean']} vs {off['evaluated_mean']} · {on['evaluated_after_trim']} vs "
            f"{off['evaluated_after_trim']}",
            f"off / on after a trim: {r['reuse']['after_trim_off_over_on']}×",
        ),
        (
            "llama_server",
            "generation: local · 1 RPC worker · 2 workers (loopback); the hop per token",
            f"{rpc['local']['tok_s']} · {one['tok_s']} · {two['tok_s']} tok/s; "
            f"{one['hop_ms_per_token']} / {two['hop_ms_per_token']} ms",
            "reported",
        ),
    ]


def remote_load_rows(r: dict) -> list[Row]:
    out: list[Row] = []
    for run in r["runs"]:
        flags = f", {' '.join(run['flags'])}" if run["flags"] else ""
        out.append(
            (
                "remote_load",
                f"{run['desktops']} desktops on {run['slots']} slots{flags}: answered · prompt from cache "
                "mean / p10 · first token p50 / p90",
                f"{run['answered']}/{run['turns']} · {run['cached_share_mean']} / "
                f"{run['cached_share_p10']} · "
                f"{run['ttft_p50_ms']} / {run['ttft_p90_ms']} ms",
                f"all answered ({ok(run['answered'] == run['turns'])})",
            )
        )
    return out
