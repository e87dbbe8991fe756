"""Helpers shared by the benchmarks: synthesized speech, WER, percentiles, result output."""

from __future__ import annotations

import json
import os
import platform
import re
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


def words(text: str) -> list[str]:
    text = text.lower().replace("10", "ten")
    return re.findall(r"[a-z']+", text)


def wer(ref: str, hyp: str, tokens: Callable[[str], list[str]] = words) -> tuple[int, int]:
    """(word edits, reference words) by Levenshtein distance over `tokens` of each."""
    r, h = tokens(ref), tokens(hyp)
    d = np.arange(len(h) + 1)
    for i in range(1, len(r) + 1):
        prev, d[0] = d.copy(), i
        for j in range(1, len(h) + 1):
            d[j] = min(prev[j] + 1, d[j - 1] + 1, prev[j - 1] + (r[i - 1] != h[j - 1]))
    return int(d[len(h)]), len(r)


def pct(values: list[float], q: float) -> float:
    return float(np.percentile(values, q)) if values else float("nan")


def calibrate() -> dict[str, float]:
    """A short CPU calibration (~0.2 s): how long a fixed pure-Python loop and a fixed float32
    matmul take on this machine right now, so numbers from two machines can be told apart."""
    t0 = time.perf_counter()
    total = 0
    for i in range(1_000_000):
        total += i * i
    t1 = time.perf_counter()
    a = np.random.default_rng(0).standard_normal((256, 256)).astype(np.float32)
    for _ in range(20):
        a = (a @ a) / 256
    t2 = time.perf_counter()
    return {"python_loop_ms": round((t1 - t0) * 1000, 1), "matmul_ms": round((t2 - t1) * 1000, 1)}


def machine() -> dict:
    """What machine a result comes from: CPU model and the flags the native code cares about,
    cores, load, and `calibrate()`."""
    info = {"model": platform.processor() or platform.machine(), "flags": []}
    try:
        text = Path("/proc/cpuinfo").read_text()
        info["model"] = re.search(r"model name\s*:\s*(.+)", text).group(1).strip()
        flags = set(re.search(r"flags\s*:\s*(.+)", text).group(1).split())
        info["flags"] = sorted(flags & {"avx", "avx2", "fma", "f16c", "avx512f", "avx512_vnni", "amx_tile"})
    except (OSError, AttributeError):
        pass
    return {
        **info,
        "cores": os.cpu_count(),
        "load_1min": round(os.getloadavg()[0], 2),
        "python": platform.python_version(),
        **calibrate(),
    }


def emit(name: str, result: dict) -> None:
    """Print the machine-readable result line, with the machine it ran on, and keep a copy
    under bench/results/ (docs/benchmarks.md is generated from those: bench/report.py)."""
    result = {**result, "machine": result.get("machine") or machine()}
    out = ROOT / "bench" / "results"
    out.mkdir(exist_ok=True)
    (out / f"{name}.json").write_text(json.dumps(result, indent=1, ensure_ascii=False) + "\n")
    print(json.dumps(result, ensure_ascii=False))


def model_path(name: str | None) -> Path:
    """A language model for a bench: a GGUF file, a catalog name, or None for the built-in one."""
    from app.catalog.catalog import default_model_path, find_entry, models_dir

    if not name:
        return default_model_path("llm")
    path = Path(name)
    return path if path.suffix == ".gguf" and path.is_file() else models_dir() / find_entry(name).file
