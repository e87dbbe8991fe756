"""Record what the echo guard is given in a barge-in bench run, and replay it offline.

`bench/bargein.py --record DIR` attaches an `EchoRecorder` to each microphone's guard: every
block it passed ungated and every 20 ms frame it judged during playback (the microphone frame
and the played audio around it), each frame's microphone position, and the trials (kind, where
the utterance starts, what the live run decided). `replay(path, config)` runs a fresh
`EchoGuard` with another `EchoConfig` over exactly the same input, in seconds instead of the
live bench's ~4 minutes per microphone, and without its run-to-run spread: configurations are
compared on the same audio. Why not the live bench alone: it plays new audio each time, and one
trial's noise decides more than most settings do.

What the replay cannot know: after the live guard decided a barge-in the speaker stopped, so
the rest of that trial has no echo in it; a replayed configuration that decides later sees that
quieter audio; and the played audio is kept as the live guard read it, moved by its delay
tracking (echo_path), so a replayed guard's own tracking moves nothing. `decision_ms` is
measured to the end of the deciding frame (the live bench: to the end of its 40 ms block), so
it reads up to a frame earlier.

Run: .venv/bin/python -m bench.echo_replay DIR [--set name=value ...]
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from dataclasses import fields, replace
from pathlib import Path

import numpy as np

from app.ears.echo import EchoConfig, EchoGuard
from app.ears.vad import FRAME
from bench.common import ROOT  # noqa: F401  (puts the repository on sys.path

BLOCK, JUDGED = 0, 1


class EchoRecorder:
    """Wraps one guard's `mic_block`, `_ungated` and `_judge` (on the instance) to keep their
    input. Threads: the microphone callback thread records; `mark`/`save` are called between
    trials, when the bench is the only one touching the trial list."""

    def __init__(self, guard: EchoGuard, position: Callable[[], int]) -> None:
        self.kinds: list[int] = []
        self.blocks: list[np.ndarray] = []
        self.mics: list[np.ndarray] = []
        self.far_new: list[np.ndarray] = []
        self.far_full: dict[int, np.ndarray] = {}  # frame index -> window (when not contiguous)
        self.positions: list[int] = []  # each judged frame's end, in microphone samples
        self.trials: list[dict] = []
        self._prev: np.ndarray | None = None
        mic_block, ungated, judge = guard.mic_block, guard._ungated, guard._judge

        def record_block(block: np.ndarray, speech_under_way: bool = False):
            before = len(self.mics)
            verdict = mic_block(block, speech_under_way)
            end = position() - len(guard._pending)
            done = len(self.mics) - before
            self.positions.extend(end - FRAME * (done - 1 - j) for j in range(done))
            return verdict

        def record_ungated(block: np.ndarray) -> None:
            self.kinds.append(BLOCK)
            self.blocks.append(block.copy())
            self._prev = None
            ungated(block)

        def record_judge(mic: np.ndarray, far_window: np.ndarray, out: list) -> bool:
            self.kinds.append(JUDGED)
            i = len(self.mics)
            self.mics.append(mic.copy())
            self.far_new.append(far_window[-FRAME:].copy())
            prev = self._prev
            if prev is None or not np.array_equal(prev[FRAME:], far_window[:-FRAME]):
                self.far_full[i] = far_window.copy()
            self._prev = far_window.copy()
            return judge(mic, far_window, out)

        guard.mic_block, guard._ungated, guard._judge = record_block, record_ungated, record_judge

    def begin(self) -> int:
        """Where the next trial starts (an event index)."""
        return len(self.kinds)

    def mark(self, start: int, **trial) -> None:
        """A trial that ran from event `start` to now: kind ("barge" or "reply"), onset
        (microphone position of the utterance's first sound), and what the live run found."""
        self.trials.append({"start": start, "end": len(self.kinds), **trial})

    def save(self, path: Path) -> None:
        full = sorted(self.far_full)
        np.savez_compressed(
            path,
            kinds=np.array(self.kinds, np.int8),
            blocks=np.concatenate(self.blocks) if self.blocks else np.zeros(0, np.float32),
            block_lengths=np.array([len(b) for b in self.blocks], np.int64),
            mics=np.array(self.mics, np.float32).reshape(-1, FRAME),
            far_new=np.array(self.far_new, np.float32).reshape(-1, FRAME),
            full_index=np.array(full, np.int64),
            full=np.array([self.far_full[i] for i in full], np.float32),
            positions=np.array(self.positions, np.int64),
            trials=json.dumps(self.trials),
        )


def replay(path: Path, config: EchoConfig) -> dict:
    """Run a fresh guard with `config` over a recording; per trial: detected, decision_ms (from
    the utterance's first sound to the end of the deciding frame), false barge-ins."""
    d = np.load(path)
    trials = json.loads(str(d["trials"]))
    guard = EchoGuard(config)
    blocks = np.split(d["blocks"], np.cumsum(d["block_lengths"])[:-1]) if len(d["block_lengths"]) else []
    full = dict(zip(d["full_index"].tolist(), d["full"], strict=True))
    mics, far_new, positions = d["mics"], d["far_new"], d["positions"]
    barges: list[tuple[int, int]] = []  # (event index, microphone position)
    b = f = 0
    window: np.ndarray | None = None
    for e, kind in enumerate(d["kinds"]):
        if kind == BLOCK:
            guard._ungated(blocks[b])
            b += 1
            continue
        window = full[f] if f in full else np.concatenate([window[FRAME:], far_new[f]])
        if guard._judge(mics[f], window, []):
            barges.append((e, int(positions[f])))
        f += 1
    out = []
    for t in trials:
        inside = [pos for e, pos in barges if t["start"] <= e < t["end"]]
        r = {**t, "replayed": bool(inside)}
        if inside and t.get("onset") is not None:
            r["replayed_ms"] = round((inside[0] - t["onset"]) / 16, 1)
        r["replayed_barges"] = len(inside)
        out.append(r)
    return summarize(out)


def summarize(trials: list[dict]) -> dict:
    barge = [t for t in trials if t["kind"] == "barge"]
    times = [t["replayed_ms"] for t in barge if "replayed_ms" in t]
    return {
        "detected": sum(t["replayed"] for t in barge),
        "trials": len(barge),
        "decision_p50_ms": round(float(np.percentile(times, 50)), 1) if times else None,
        "decision_p90_ms": round(float(np.percentile(times, 90)), 1) if times else None,
        "false_barges": sum(t["replayed_barges"] for t in trials if t["kind"] == "reply"),
        "missed": [(t["text"], t.get("level_db")) for t in barge if not t["replayed"]],
        "slowest": sorted(
            (t["replayed_ms"], t["text"], t.get("level_db")) for t in barge if "replayed_ms" in t
        )[-3:],
    }


def parse_sets(pairs: list[str]) -> EchoConfig:
    """`name=value` pairs over the default EchoConfig (types from the dataclass)."""
    c = EchoConfig()
    types = {f.name: type(getattr(c, f.name)) for f in fields(c)}
    for pair in pairs:
        name, value = pair.split("=", 1)
        cast = types[name]
        c = replace(c, **{name: (value.lower() in ("1", "true")) if cast is bool else cast(value)})
    return c


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("dir", type=Path, help="the --record directory of bench/bargein.py")
    ap.add_argument("--set", nargs="*", default=[], help="EchoConfig overrides, name=value")
    args = ap.parse_args()
    config = parse_sets(args.set)
    for path in sorted(args.dir.glob("*.npz")):
        print(path.stem, json.dumps(replay(path, config)))


if __name__ == "__main__":
    main()
