"""Model files and saved model state, fuzzed (#36 point 2): the embedded GGUF and ggml Whisper
models with structure-aware mutations of their headers and tensor tables
(tests/support/mutations.py), each loaded and used by a worker process the way the app loads
them (tests/support/model_probe.py), so a mutation that kills the process with a signal is seen
as such; and a conversation's saved state (session.json, state.bin) mutated and resumed in
process with the real model.

The app must refuse a damaged file with a sentence, or work: never a signal, a hang, or a raw
library exception. Cases per kind: FUZZ_MODEL_CASES (default 30; more for nightly runs). The
counts land in tests/artifacts/fuzz-models.json.
"""

from __future__ import annotations

import json
import os
import queue
import random
import resource
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from app.brain import session
from app.brain.conversation import Conversation
from app.brain.persona import PINNED_TIME, Persona
from app.brain.records import LlmConfig
from app.catalog import ggml_whisper
from app.catalog.gguf_header import header_fields
from tests.conftest import ARTIFACTS, espeak
from tests.support.fuzz import fuzz_settings, mutated_json
from tests.support.mutations import MutableCopy, plan, whisper_fields

CASES = int(os.environ.get("FUZZ_MODEL_CASES", "30"))
CASE_TIMEOUT_S = 120  # a load that takes longer than this is a hang (a good one takes ~1 s)
MEMORY_LIMIT = 6 << 30  # the worker's address space: an absurd allocation fails instead of swapping


class Probe:
    """The model_probe worker; restarted after it dies."""

    def __init__(self, kind: str, *args: str) -> None:
        self.argv = [sys.executable, "-m", "tests.support.model_probe", kind, *args]
        self.proc: subprocess.Popen[str] | None = None
        self.lines: queue.Queue[str] = queue.Queue()

    def _start(self) -> subprocess.Popen[str]:
        def limit() -> None:
            resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))

        env = {**os.environ, "OMP_WAIT_POLICY": "PASSIVE"}
        proc = subprocess.Popen(
            self.argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
            text=True, env=env, preexec_fn=limit,
        )  # fmt: skip
        self.lines = queue.Queue()
        threading.Thread(target=self._read, args=(proc, self.lines), daemon=True).start()
        return proc

    @staticmethod
    def _read(proc: subprocess.Popen[str], lines: queue.Queue[str]) -> None:
        for line in proc.stdout:
            lines.put(line)
        lines.put("")  # the worker is gone

    def _line(self, proc: subprocess.Popen[str]) -> str | None:
        try:
            return self.lines.get(timeout=CASE_TIMEOUT_S)
        except queue.Empty:
            return None

    def run(self, path: Path) -> dict[str, str]:
        """Load `path` in the worker: its JSON answer, or {"signal"/"exit"/"hang": ...}."""
        proc = self.proc = self.proc or self._start()
        proc.stdin.write(f"{path}\n")
        proc.stdin.flush()
        for _ in range(2):  # {"start"}, then the outcome
            line = self._line(proc)
            if line is None:
                proc.kill()
                proc.wait()
                self.proc = None
                return {"hang": f"no answer in {CASE_TIMEOUT_S} s"}
            if not line:
                code = proc.wait()
                self.proc = None
                return {"signal": str(-code)} if code < 0 else {"exit": str(code)}
            answer = json.loads(line)
        return answer

    def close(self) -> None:
        if self.proc is not None:
            self.proc.stdin.close()
            self.proc.wait(60)


def fuzz(kind: str, model: Path, fields, tmp_path: Path, *probe_args: str) -> dict[str, list[str]]:
    """CASES mutated copies of `model`, each through the worker: outcome -> the mutations."""
    copy = MutableCopy(model, tmp_path / f"fuzzed{model.suffix}")  # a name the catalog does not know
    probe = Probe(kind, *probe_args)
    outcomes: dict[str, list[str]] = {}
    try:
        for mutations in plan(fields, copy.original, random.Random(f"{kind}-fuzz"), CASES):
            copy.apply(mutations)
            answer = probe.run(copy.path)
            ((outcome, said),) = answer.items()
            outcomes.setdefault(outcome, []).append(f"{' + '.join(map(str, mutations))}: {said[:160]}")
    finally:
        probe.close()
    report = ARTIFACTS / "fuzz-models.json"
    done = json.loads(report.read_text()) if report.exists() else {}
    done[kind] = {k: len(v) for k, v in outcomes.items()}
    done[f"{kind}, not refused"] = {k: v for k, v in outcomes.items() if k != "refused"}
    report.write_text(json.dumps(done, indent=1))
    return outcomes


def _check(outcomes: dict[str, list[str]], words: str) -> None:
    assert set(outcomes) <= {"ok", "refused"}, {
        k: v for k, v in outcomes.items() if k not in ("ok", "refused")
    }
    for said in outcomes.get("refused", []):
        assert words in said, said  # the app's sentence names what it could not use


def test_damaged_gguf_headers_are_refused_in_a_sentence_or_work(llm_model, tmp_path):
    outcomes = fuzz("llm", llm_model, header_fields(llm_model), tmp_path)
    _check(outcomes, "Language model")
    assert outcomes.get("refused"), "no mutation was refused: the fuzzer does not reach the loader"


def test_damaged_whisper_headers_are_refused_in_a_sentence_or_work(whisper_model, speech_dir, tmp_path):
    clip = espeak("Hello there.", speech_dir / "fuzz-models-hello.wav")
    with open(whisper_model, "rb") as f:
        ggml_whisper.read_preamble(f)  # the embedded model is a file the walker reads
    outcomes = fuzz("whisper", whisper_model, whisper_fields(whisper_model), tmp_path, str(clip))
    _check(outcomes, "Speech model")
    assert outcomes.get("refused"), "no mutation was refused: the fuzzer does not reach the loader"


# ----- a conversation's saved state ----------------------------------------------------------
@pytest.fixture(scope="module")
def saved(tmp_path_factory, llm_model):
    """A conversation of two turns saved to a folder, and a fresh engine to resume it in."""
    cfg = LlmConfig(llm_model, n_ctx=384, max_tokens=12)
    persona = Persona("Sam", "Max", now=PINNED_TIME)
    folder = tmp_path_factory.mktemp("saved")
    conv = Conversation(cfg, persona)
    for text in ("My name is Robin.", "What is my name?"):
        conv.say(text)
    session.save(conv, folder)
    conv.close()
    loader = Conversation(cfg, persona)
    yield folder, loader
    loader.close()


@st.composite
def mutated_state(draw: st.DrawFn, data: bytes) -> bytes:
    """state.bin with its header bytes or a 4-byte integer anywhere overwritten, or cut."""
    data = bytearray(data)
    for _ in range(draw(st.integers(min_value=1, max_value=3))):
        kind = draw(st.sampled_from(["head", "int", "cut"]))
        if kind == "cut":
            data = data[: draw(st.integers(min_value=0, max_value=len(data)))]
        elif len(data) >= 4:
            top = min(len(data), 64) if kind == "head" else len(data)
            at = draw(st.integers(min_value=0, max_value=top - 4)) // 4 * 4
            value = draw(
                st.sampled_from([0, 1, 0xFF, 0xFFFF, 0x7FFFFFFF, 0xFFFFFFFF]) | st.integers(0, 2**32 - 1)
            )
            data[at : at + 4] = value.to_bytes(4, "little")
    return bytes(data)


def _resume_and_go_on(loader: Conversation, folder: Path) -> None:
    """Resume `folder` in `loader`: resumed as saved, or begun again with a sentence saying
    so; either way a consistent engine that answers the next turn."""
    loader.reset()
    result = session.load(loader, folder)
    if not result.resumed:
        assert result.message == "" or result.message.endswith(".")
    for m in loader.history:
        assert m.role in ("user", "assistant") and isinstance(m.text, str)
    before = len(loader.history)
    loader.say("Hello?")
    assert len(loader.history) == before + 2
    assert loader.n_past <= loader.n_ctx and loader.cache_pos_max() == loader.n_past - 1


@fuzz_settings(25, 400)
@given(draw=st.data())
def test_damaged_saved_state_resumes_or_starts_again_with_a_message(saved, tmp_path_factory, draw):
    folder, loader = saved
    case = tmp_path_factory.mktemp("state")
    state = draw.draw(mutated_state((folder / session.STATE).read_bytes()))
    (case / session.STATE).write_bytes(state)
    (case / session.META).write_bytes((folder / session.META).read_bytes())
    _resume_and_go_on(loader, case)
    assert (case / session.STATE).read_bytes() == state  # resuming never rewrites the user's files


@fuzz_settings(40, 800)
@given(draw=st.data())
def test_damaged_session_metadata_resumes_or_starts_again_with_a_message(saved, tmp_path_factory, draw):
    folder, loader = saved
    case = tmp_path_factory.mktemp("meta")
    meta = draw.draw(mutated_json(json.loads((folder / session.META).read_text(encoding="utf-8"))))
    (case / session.META).write_bytes(meta)
    (case / session.STATE).write_bytes((folder / session.STATE).read_bytes())
    _resume_and_go_on(loader, case)
    assert (case / session.META).read_bytes() == meta
