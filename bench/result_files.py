"""The benchmarks' result files (bench/results/<name>.json, written by bench.common.emit) and the
small helpers the report's rows share."""

from __future__ import annotations

import json

from bench.common import ROOT

RESULTS = ROOT / "bench" / "results"
Row = tuple[str, str, str, str]  # bench, measure, result, target


def load(name: str) -> dict | None:
    path = RESULTS / f"{name}.json"
    return json.loads(path.read_text()) if path.exists() else None


def ok(flag: bool) -> str:
    return "met" if flag else "**missed**"
