"""The remote brain against llama.cpp's own `llama-server` (and its RPC engine), the server most
users of a local model run: built from the llama.cpp sources llama-cpp-python vendors
(packaging/build_llama_server.sh; `make test` builds it once and caches it)."""

from __future__ import annotations

import os
import re
import statistics
import threading
from pathlib import Path

import pytest

from app.brain.brain import BrainError
from app.brain.persona import PINNED_TIME, Persona
from app.brain.records import RemoteConfig
from app.brain.remote import RemoteConversation
from tests.support.process import text_chat
from tests.support.servers import CppServer, RpcWorker, llama_cpp_bin
from tests.test_remote import QUESTIONS, new_turn_tokens

BIN = llama_cpp_bin()
pytestmark = pytest.mark.skipif(
    BIN is None,
    reason="llama.cpp's llama-server is not built: run packaging/build_llama_server.sh .venv/bin/python",
)
PERSONA = Persona("Sam", "Max", now=PINNED_TIME)


@pytest.fixture(scope="module")
def server(llm_model: Path, tmp_path_factory: pytest.TempPathFactory):
    assert BIN is not None
    s = CppServer(BIN, llm_model, tmp_path_factory.mktemp("llama-server") / "server.log", n_ctx=1024)
    yield s
    s.stop()


def brain(url: str, **kw) -> RemoteConversation:
    return RemoteConversation(RemoteConfig(url, **{"max_tokens": 40, "temperature": 0.0, **kw}), PERSONA)


def test_the_context_comes_from_props_and_the_cache_holds_everything_before_the_new_turn(
    server, llm_model
) -> None:
    r = brain(server.url)
    assert (r.n_ctx, r.ctx_source) == (1024, "llama-server /props")  # no --llm-ctx needed
    for i, q in enumerate(QUESTIONS):
        assert "".join(r.stream(q)).strip()
        stats = r.last_stats
        assert stats is not None and stats.cached_tokens is not None
        if i:  # the previous request and its reply are in the cache; only the new turn is evaluated
            assert stats.cached_tokens == stats.prompt_tokens - new_turn_tokens(llm_model, q), (i, stats)
    assert r.context_stats()["cached_tokens"] == r.last_stats.cached_tokens
    r.close()


def test_cancel_stops_the_servers_generation(server) -> None:
    r = brain(server.url, max_tokens=400)
    cancel = threading.Event()
    pieces: list[str] = []
    released, cancels = len(server.releases()), server.cancels()
    for piece in r.stream("Tell me a very long story about a dragon who loves tea.", cancel):
        pieces.append(piece)
        if len(pieces) == 3:
            cancel.set()
    assert r.last_stats is not None and r.last_stats.stop_reason == "cancelled"
    assert "".join(r.stream("Thanks!")).strip()  # the next request is served
    assert server.cancels() == cancels + 1
    # the slot held the prompt and a few tokens when it let the cancelled request go, not 400 more
    prompt = r.last_stats.prompt_tokens
    assert server.releases()[released] < prompt + 200, (server.releases()[released:], prompt)
    r.close()


@pytest.mark.slow
def test_a_long_conversation_goes_on_in_a_1024_context_and_the_cache_survives_each_trim(server) -> None:
    r = brain(server.url, max_tokens=24)
    reused_after_trim = []
    for i in range(105):
        note = r.note
        list(r.stream(f"{QUESTIONS[i % len(QUESTIONS)]} (question {i + 1})"))
        stats = r.last_stats
        assert (
            stats is not None
            and stats.stop_reason in ("eog", "max_tokens")
            and stats.cached_tokens is not None
        )
        if stats.shifts:  # the oldest exchanges were left out: --cache-reuse keeps the rest's cache
            if r.note == note:  # the head is kept (a trim that writes a new memory note changes it)
                assert stats.cached_tokens >= r.system_tokens - 1
            reused_after_trim.append(stats.cached_tokens / stats.prompt_tokens)
    assert "The user's name is Sam." in r.head()  # "Hello, my name is Sam." was left out long ago
    assert r.turn_count == 105 and all(m.text for m in r.history[1::2]) and r.n_ctx == 1024
    assert r.shifts >= 3 and len(reused_after_trim) == r.shifts
    # the exchanges kept are found in the cache after the hole the trim left (a reply cut at
    # max_tokens may tokenize otherwise when resent, which ends the match early: bench.llama_server
    # measures the reuse; here most trims must keep most of the prompt)
    assert statistics.median(reused_after_trim) > 0.5, reused_after_trim
    r.close()


def test_a_too_long_request_is_answered_400_and_the_conversation_learns_the_context(server) -> None:
    """Configured wrong (4096 for a 1024 server): llama-server answers 400
    `exceed_context_size_error` with its n_ctx; the brain trims and sends again once."""
    r = brain(server.url, n_ctx=4096, max_tokens=24)
    long = " ".join(["Here is a long story about my day at the market with many details."] * 6)
    turns = 0
    while r.ctx_source == "configured":
        assert turns < 20, "no 400 in 20 turns"
        assert "".join(r.stream(f"{long} (turn {turns + 1})")).strip()
        turns += 1
    assert (r.n_ctx, r.ctx_source) == (1024, "learned from the server") and r.dropped_turns >= 1
    assert "".join(r.stream("And what did I buy?")).strip()
    r.close()


@pytest.mark.slow
def test_the_chat_cli_needs_no_context_flag(server, tmp_path) -> None:
    env = {**os.environ, "TALK_LLAMA_CONFIG": str(tmp_path / "config")}
    lines = [f"{QUESTIONS[i % len(QUESTIONS)]} (turn {i + 1})" for i in range(40)]
    turns, out = text_chat(server.url, lines, env, "-mt", "24", "--seed", "1")
    assert out.returncode == 0 and "error:" not in out.stderr, out.stderr
    assert [t["user"] for t in turns] == lines and all(t["reply"] for t in turns)
    assert all(t["n_ctx"] == 1024 and "cached_tokens" in t for t in turns)
    assert sum(t["shifts"] for t in turns) >= 1


def test_one_model_across_two_rpc_workers(llm_model, tmp_path) -> None:
    """llama.cpp's distributed engine: every layer on two `ggml-rpc-server` workers (on loopback
    here; on other machines in use), llama-server in front. Same assistant, same cache."""
    assert BIN is not None
    workers = [RpcWorker(BIN, tmp_path / f"worker{i}.log") for i in range(2)]
    try:
        front = CppServer(
            BIN, llm_model, tmp_path / "front.log", n_ctx=1024, rpc=[w.address for w in workers]
        )
        try:
            log = front.text()
            layers = re.search(r"offloaded (\d+)/(\d+) layers", log)
            assert layers and layers[1] == layers[2], log[-3000:]  # every layer on the workers
            for w in workers:  # each holds a share of the weights
                assert re.search(rf"RPC\d\[{w.address}\] model buffer size = +[1-9]", log), w.address
            r = brain(front.url)
            for i, q in enumerate(QUESTIONS[:3]):
                assert "".join(r.stream(q)).strip()
                assert r.last_stats is not None and r.last_stats.cached_tokens is not None
                if i:
                    assert r.last_stats.cached_tokens > r.system_tokens
            r.close()
        finally:
            front.stop()
    finally:
        for w in workers:
            w.stop()


def test_a_server_that_stops_mid_conversation_is_said_plainly(llm_model, tmp_path) -> None:
    assert BIN is not None
    s = CppServer(BIN, llm_model, tmp_path / "server.log", n_ctx=1024)
    r = brain(s.url)
    assert "".join(r.stream(QUESTIONS[0])).strip()
    s.stop()
    with pytest.raises(BrainError, match="cannot be reached"):
        list(r.stream(QUESTIONS[1]))
    assert [m.text for m in r.history[::2]][:1] == [QUESTIONS[0]]
    r.close()
