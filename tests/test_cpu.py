"""The thread count follows the cores other programs leave free (app/system/cpu.py); the app's
threads carry their names for the OS (app/system/thread_names.py)."""

from __future__ import annotations

import subprocess
import threading
import time
from pathlib import Path

from app.system.cpu import FreeCores, threads_for
from app.system.thread_names import named_thread


def test_another_busy_program_is_counted_and_an_explicit_count_wins() -> None:
    free = FreeCores()
    time.sleep(0.3)
    assert 1 <= free.threads() <= free.cores
    hog = subprocess.Popen(["sh", "-c", "while :; do :; done"])
    try:
        time.sleep(1.0)
        # the busy loop gets at least half a core even when the machine is loaded otherwise
        assert free.others_busy() >= 0.5
        time.sleep(1.0)
        n = free.threads()
        assert 1 <= n <= max(1, free.cores - 1)
        assert threads_for(3, free) == 3  # the user's -t is a hard choice
    finally:
        hog.kill()
        hog.wait()


def test_this_process_own_work_is_not_counted_as_others() -> None:
    free = FreeCores(cores=64)  # room above any real load, so the cap never hides the sum
    time.sleep(0.3)
    free.others_busy()
    before = free._sample()
    end = time.monotonic() + 1.0
    while time.monotonic() < end:  # this process keeps one core busy for a second
        pass
    after = free._sample()
    wall = after[0] - before[0]
    own, machine = (after[2] - before[2]) / wall, (after[1] - before[1]) / wall
    others = free.others_busy()  # over (almost) the same second
    assert own >= 0.5  # the spin was ours and the machine saw it...
    assert others <= machine - 0.5  # ...but it is not counted as another program's


def test_the_apps_threads_carry_their_names_for_the_os() -> None:
    """`top -H` and bench/thread_cpu.py read a stage's CPU by the OS name of its thread."""
    seen: list[str] = []
    ready = threading.Event()

    def work() -> None:
        seen.append(Path(f"/proc/self/task/{threading.get_native_id()}/comm").read_text().strip())
        ready.set()

    t = named_thread(work, "assistant-stt-and-more")
    t.start()
    assert ready.wait(10)
    t.join(10)
    assert t.name == "assistant-stt-and-more" and seen == ["assistant-stt-a"]  # the OS keeps 15 bytes
