"""Start time of the window: the bundle against the venv install (`make run`), same machine, same run.

Each start is a fresh process under a private Xvfb display, with `env -i` (PATH=/usr/bin:/bin,
an empty HOME) and the default models. The app logs "window shown N ms" (its first event-loop
turn after show) and "models loaded N ms", both counted from the kernel's process start time.
Runs alternate bundle / venv. `--cold` first drops the page cache (root only), so the bundle's
and the venv's files come from disk: the first start after login or after unpacking.
Run: .venv/bin/python -m bench.coldstart [--tarball dist/…tar.gz] [--runs 5] [--cold]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import tempfile
from pathlib import Path

from bench.common import ROOT, emit, pct
from tests.support import bundle as B
from tests.support import xvfb

VENV_APP = ROOT / ".venv" / "bin" / "talk-llama"


def _xvfb() -> tuple[subprocess.Popen, str]:
    display = f":{60 + os.getpid() % 19}"
    return xvfb.start(display), display


def drop_caches() -> bool:
    try:
        subprocess.run(["sync"], check=True)
        Path("/proc/sys/vm/drop_caches").write_text("3\n")
        return True
    except OSError:
        return False


def start_once(program: Path, display: str) -> tuple[int, int]:
    """(window shown, models loaded) in ms after the process started."""
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp)
        env = B.isolated_env(home, DISPLAY=display, TALK_LLAMA_MODELS=str(ROOT / "models"))
        proc = subprocess.Popen(
            [*env, str(program)], cwd=home, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
        )
        try:
            shown = int(B.wait_for_log(home, r"window shown (\d+) ms", proc, timeout=120)[1])
            loaded = int(B.wait_for_log(home, r"models loaded (\d+) ms", proc, timeout=120)[1])
        finally:
            proc.terminate()
            proc.wait(30)
    return shown, loaded


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tarball", type=Path, help="a built bundle (default: build one now)")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--cold", action="store_true", help="drop the page cache before each start")
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="coldstart-"))
    tarball = args.tarball or B.build(work / "dist")
    bundle = B.unpack(tarball, work / "unpacked")
    xvfb, display = _xvfb()
    if args.cold and not drop_caches():
        raise SystemExit("--cold needs root (writes /proc/sys/vm/drop_caches)")
    results: dict[str, dict[str, list[int]]] = {k: {"shown": [], "loaded": []} for k in ("bundle", "venv")}
    try:
        for _ in range(args.runs):
            for name, program in (("bundle", bundle.launcher), ("venv", VENV_APP)):
                if args.cold:
                    drop_caches()
                shown, loaded = start_once(program, display)
                results[name]["shown"].append(shown)
                results[name]["loaded"].append(loaded)
                print(f"{name}: window shown {shown} ms, models loaded {loaded} ms", flush=True)
    finally:
        xvfb.terminate()
    size_mb = tarball.stat().st_size / 1e6
    unpacked_mb = sum(
        p.stat().st_size for p in bundle.folder.rglob("*") if p.is_file() and not p.is_symlink()
    )
    out = {
        "cold": args.cold,
        "runs": args.runs,
        "tarball_mb": round(size_mb, 1),
        "unpacked_mb": round(unpacked_mb / 1e6, 1),
    }
    for name, r in results.items():
        out[f"{name}_shown_p50_ms"] = pct(r["shown"], 50)
        out[f"{name}_loaded_p50_ms"] = pct(r["loaded"], 50)
    out["shown_ratio_bundle_vs_venv"] = round(out["bundle_shown_p50_ms"] / out["venv_shown_p50_ms"], 2)
    out["loaded_ratio_bundle_vs_venv"] = round(out["bundle_loaded_p50_ms"] / out["venv_loaded_p50_ms"], 2)
    emit("coldstart-cold" if args.cold else "coldstart", out)


if __name__ == "__main__":
    main()
