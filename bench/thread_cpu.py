"""CPU time per thread name of this process, from /proc (Linux): what each stage costs.

The app names its threads for the OS (app/system/thread_names.py), and the native workers a
thread starts carry its name (whisper's OpenMP team: `assistant-stt`; ggml's: `assistant-llm`),
so the time of a name is the time of its stage. Threads the app does not name (the main
thread, onnxruntime's, the bench's own) count under the process's name. Threads that ended
between two readings count under ENDED (their name then shows less than nothing: their time
moved); llama.cpp built without OpenMP starts its ggml workers for each decode and joins them,
so ENDED is mostly the llm thread's second core. Clock ticks: 10 ms resolution.
"""

from __future__ import annotations

import os
from pathlib import Path

ENDED = "ended"


def _ticks(stat: str) -> tuple[str, int]:
    """(comm, utime + stime in ticks) of one /proc stat line (the name may hold spaces)."""
    comm = stat[stat.index("(") + 1 : stat.rindex(")")]
    fields = stat[stat.rindex(")") + 2 :].split()
    return comm, int(fields[11]) + int(fields[12])  # stat fields 14 and 15


def cpu_by_thread() -> dict[str, float]:
    """CPU seconds so far per OS thread name, summed over its threads; ENDED: the process's
    total minus its live threads' (the time of threads that have ended)."""
    hz = os.sysconf("SC_CLK_TCK")
    out: dict[str, float] = {}
    for task in Path("/proc/self/task").iterdir():
        try:
            comm, ticks = _ticks((task / "stat").read_text())
        except (OSError, ValueError):  # the thread ended while being read
            continue
        out[comm] = out.get(comm, 0.0) + ticks / hz
    _, total = _ticks(Path("/proc/self/stat").read_text())
    out[ENDED] = max(0.0, total / hz - sum(out.values()))
    return out


def spent(before: dict[str, float], after: dict[str, float]) -> dict[str, float]:
    """CPU seconds per name between two readings (names seen in either)."""
    return {k: after.get(k, 0.0) - before.get(k, 0.0) for k in before.keys() | after.keys()}
