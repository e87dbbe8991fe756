"""The thread count follows the cores other programs leave free (app/system/cpu.py) and gives
one up while the app's own side work holds a core; the app's threads carry their names for the
OS (app/system/thread_names.py)."""

from __future__ import annotations

import subprocess
import threading
import time
from pathlib import Path

import llama_cpp

from app.brain.conversation import Conversation, LlmConfig
from app.brain.persona import PINNED_TIME, Persona
from app.system.cpu import FreeCores, core_taken, cores_taken, threads_for
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


def test_side_work_holding_a_core_is_counted_from_any_thread() -> None:
    assert cores_taken() == 0
    inside = threading.Event()
    leave = threading.Event()

    def side() -> None:
        with core_taken():
            inside.set()
            leave.wait(10)

    t = threading.Thread(target=side)
    t.start()
    assert inside.wait(10)
    with core_taken():
        assert cores_taken() == 2
    leave.set()
    t.join(10)
    assert cores_taken() == 0
    try:
        with core_taken():
            raise RuntimeError("the side work failed")
    except RuntimeError:
        pass
    assert cores_taken() == 0  # a failure gives the core back


def test_the_language_model_gives_up_a_thread_while_side_work_holds_a_core(llm_model: Path) -> None:
    """Real model: evaluations made while the turn model holds a core compute with one thread
    fewer (never fewer than one), and with the turn's count again after; an explicit count
    stands."""
    c = Conversation(LlmConfig(llm_model, n_ctx=512, max_tokens=4), Persona(now=PINNED_TIME))
    try:
        c.say("Hello.")
        turn_threads = c.threads
        assert llama_cpp.llama_n_threads(c.llama.ctx) == turn_threads
        with core_taken():
            c._eval([c.llama.token_bos()])
            assert llama_cpp.llama_n_threads(c.llama.ctx) == max(1, turn_threads - 1)
        c._eval([c.llama.token_bos()])
        assert llama_cpp.llama_n_threads(c.llama.ctx) == turn_threads
    finally:
        c.close()
    fixed = Conversation(LlmConfig(llm_model, n_ctx=512, max_tokens=4, n_threads=2), Persona(now=PINNED_TIME))
    try:
        with core_taken():
            fixed.say("Hello.")
            assert llama_cpp.llama_n_threads(fixed.llama.ctx) == 2
    finally:
        fixed.close()


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
