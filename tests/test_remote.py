"""The remote brain against a real OpenAI-compatible server on loopback (llama-cpp-python's own,
on the embedded GGUF) and, for the failure paths, a small server that fails on purpose."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import threading
import time
from pathlib import Path

import llama_cpp
import pytest

from app.brain.brain import BrainError, load_session, save_session
from app.brain.persona import PINNED_TIME, Persona
from app.brain.records import RemoteConfig
from app.brain.remote import RemoteConversation
from app.brain.user_turn import ConfirmAtPrompt
from tests.support.process import text_chat
from tests.support.servers import FaultServer, LlamaServer
from tests.test_speculation import SpeculatingGate

PERSONA = Persona("Sam", "Max", now=PINNED_TIME)
QUESTIONS = [
    "Hello, my name is Sam.",
    "What is the capital of France?",
    "Name a color of the sky.",
    "Tell me one thing about cats.",
    "What is two plus two?",
]


@pytest.fixture(scope="module")
def server(llm_model: Path, tmp_path_factory: pytest.TempPathFactory):
    s = LlamaServer(llm_model, tmp_path_factory.mktemp("server") / "server.log", n_ctx=2048)
    yield s
    s.stop()


@pytest.fixture
def faults():
    s = FaultServer()
    yield s
    s.stop()


def brain(url: str, **kw) -> RemoteConversation:
    return RemoteConversation(RemoteConfig(url, **{"max_tokens": 40, "temperature": 0.0, **kw}), PERSONA)


def new_turn_tokens(llm_model: Path, user: str) -> int:
    """Tokens a turn adds after the previous reply's text: its end-of-turn, the user segment,
    the assistant header (ChatML, the embedded model's template)."""
    vocab = llama_cpp.Llama(str(llm_model), vocab_only=True, verbose=False)
    text = f"<|im_end|>\n<|im_start|>user\n{user}<|im_end|>\n<|im_start|>assistant\n"
    n = len(vocab.tokenize(text.encode(), add_bos=False, special=True))
    vocab.close()
    return n


def test_each_turn_makes_the_server_evaluate_only_the_new_turn(server, llm_model) -> None:
    r = brain(server.url)
    before = len(server.prefix_hits())
    for q in QUESTIONS:
        assert "".join(r.stream(q)).strip()
        assert r.last_stats is not None and r.last_stats.gen_tokens > 0
        assert r.last_stats.cached_tokens is None  # this server does not report it: said as such
    hits = server.prefix_hits()[before:]
    assert len(hits) == len(QUESTIONS) - 1 or len(hits) == len(QUESTIONS)
    # from the second turn on, the server reused everything before the new turn
    for q, (_reused, evaluated) in zip(QUESTIONS[1:], hits[-(len(QUESTIONS) - 1) :], strict=True):
        predicted = new_turn_tokens(llm_model, q)
        assert abs(evaluated - predicted) <= 2, (q, evaluated, predicted)
    assert r.context_stats()["cached_tokens"] == -1 and r.context_stats()["server"] == server.url
    head = r.messages("next")
    assert head[0] == {"role": "system", "content": r.system_prompt}
    assert [m["content"] for m in head[2::2][: len(QUESTIONS)]] == [m.text for m in r.history[1::2]]
    r.close()


def test_cancel_stops_the_servers_generation(server) -> None:
    r = brain(server.url, max_tokens=400)
    cancel = threading.Event()
    pieces = []
    done = server.completed()
    for piece in r.stream("Tell me a very long story about a dragon who loves tea.", cancel):
        pieces.append(piece)
        if len(pieces) == 3:
            cancel.set()
    assert len(pieces) == 3 and r.last_stats.stop_reason == "cancelled"
    said = r.history[-1]
    assert said.interrupted and said.text == "".join(pieces).strip()
    assert "".join(r.stream("Thanks!")).strip()  # the next request is served
    # llama.cpp prints its timings when a generation runs to its end: only the second did
    assert server.completed() == done + 1
    assert r.kept[-2].reply == said.text  # the cut reply is resent as it was
    r.close()


@pytest.mark.slow
def test_trimming_keeps_a_long_conversation_going_in_a_small_context(llm_model, tmp_path) -> None:
    small = LlamaServer(llm_model, tmp_path / "small.log", n_ctx=512)
    try:
        # this server cannot tell its context size (and fails mid-stream when over it): configured
        r = brain(small.url, max_tokens=24, n_ctx=512)
        for i in range(105):
            list(r.stream(f"{QUESTIONS[i % len(QUESTIONS)]} (question {i + 1})"))
        stats = r.context_stats()
        assert r.turn_count == 105 and len(r.history) == 210
        assert all(m.text for m in r.history[1::2]) and not any(m.interrupted for m in r.history)
        assert stats["shifts"] >= 3 and stats["dropped_turns"] > 50
        # half the space is freed at once: the server re-reads the conversation only after a trim
        rereads = [evaluated for _reused, evaluated in small.prefix_hits() if evaluated > 80]
        assert len(rereads) <= stats["shifts"] + 1, (rereads, stats)
    finally:
        small.stop()


@pytest.mark.slow
def test_a_server_whose_context_is_unknown_never_traps_the_conversation(llm_model, tmp_path) -> None:
    """llama-cpp-python's server neither names its context nor answers 400: a prompt over it
    gets a stream that ends with nothing. No --llm-ctx: the app assumes 4096 until then."""
    small = LlamaServer(llm_model, tmp_path / "small.log", n_ctx=512)
    ask = "Please answer in one short sentence."
    lines = [f"{QUESTIONS[i % len(QUESTIONS)]} {ask} (turn {i + 1})" for i in range(30)]
    try:
        env = {**os.environ, "TALK_LLAMA_CONFIG": str(tmp_path / "config")}
        turns, out = text_chat(small.url, lines, env, "-mt", "24", "--seed", "1")
    finally:
        small.stop()
    assert out.returncode == 0 and "error:" not in out.stderr, out.stderr
    assert [t["user"] for t in turns] == lines and all(t["reply"] for t in turns)
    told = [t for t in turns if "notice" in t]
    assert told and all("fewer tokens than assumed" in t["notice"] for t in told)
    assert out.stderr.count("notice: ") == len(told)
    first = turns.index(told[0])
    assert all(t["n_ctx"] == 4096 for t in turns[:first])  # assumed until the server said otherwise
    assert 512 <= turns[-1]["n_ctx"] < 4096 and turns[-1]["shifts"] >= 0


def test_a_server_that_drops_every_stream_is_not_taken_for_a_small_context(faults) -> None:
    r = brain(faults.url)
    for q in QUESTIONS[:3]:
        list(r.stream(q))
    users, n_ctx = [ex.user for ex in r.kept], r.n_ctx
    faults.mode = "empty"  # every stream ends before its first piece
    with pytest.raises(BrainError, match="stopped in the middle of the reply"):
        list(r.stream(QUESTIONS[3]))
    retries = [len(body["messages"]) for body in faults.bodies[3:]]
    assert retries[-1] == 2 and retries == sorted(retries, reverse=True)
    assert len(retries) - len(set(retries)) == 1  # the one sent again as it was (server_drops.py)
    assert r.n_ctx == n_ctx and [ex.user for ex in r.kept] == [*users, QUESTIONS[3]]  # as it was
    assert r.last_stats is not None and not r.last_stats.notice
    faults.mode = "ok"
    assert "".join(r.stream(QUESTIONS[4])) == "Hello there, friend."


@pytest.mark.parametrize("drops", [1, 2])
def test_a_stream_dropped_before_its_first_piece_is_retried_trimmed(faults, drops) -> None:
    """The first drop is taken for the context: the request goes again without the oldest turns.
    A drop of that smaller request (no larger than ones the server answered: not its context)
    is sent once more as it was, and learns nothing more."""
    r = brain(faults.url)
    for q in QUESTIONS[:4]:
        list(r.stream(q))
    faults.mode = f"empty:{drops}"
    assert "".join(r.stream(QUESTIONS[4])) == "Hello there, friend."
    assert faults.requests == 5 + drops and r.ctx_source == "learned from a dropped reply"
    assert r.last_stats is not None and "fewer tokens than assumed" in r.last_stats.notice
    assert r.dropped_turns >= 1 and r.last_stats.shifts == 1
    sent, retried = faults.bodies[4]["messages"], faults.bodies[5]["messages"]
    assert len(retried) < len(sent)  # the retry left the oldest turns out
    assert all(body["messages"] == retried for body in faults.bodies[5:])  # then as it was
    assert r.n_ctx < 4096 and r.n_ctx > r.held  # learned from the first drop only
    head = faults.bodies[-1]["messages"][0]
    assert head["role"] == "system" and head["content"].startswith(sent[0]["content"])  # it stays
    assert "The user's name is Sam." in head["content"]  # and the memory note keeps what was left out


def test_session_resumes_with_the_same_request_head(server, tmp_path) -> None:
    r = brain(server.url)
    "".join(r.stream(QUESTIONS[0]))
    save_session(r, tmp_path)
    assert (tmp_path / "remote-session.json").stat().st_mode & 0o777 == 0o600
    again = brain(server.url)
    res = load_session(again, tmp_path)
    assert res.resumed and again.messages("x") == r.messages("x")
    other = RemoteConversation(RemoteConfig(server.url), Persona("Sam", "Rex", now=PINNED_TIME))
    res = load_session(other, tmp_path)
    assert not res.resumed and "next message" in res.message and len(other.history) == 2
    for b in (r, again, other):
        b.close()


# ----- failures (FaultServer) -----------------------------------------------------------------
def test_a_server_that_is_down_is_named_at_start() -> None:
    from tests.support.servers import free_port

    with pytest.raises(BrainError, match=r"cannot be reached.*Is it running, and is the address right"):
        brain(f"http://127.0.0.1:{free_port()}/v1")


@pytest.mark.parametrize(
    ("mode", "says"),
    [
        ("status:400", "rejected the request: test error 400"),
        ("status:401", "refused the API key; set TALK_LLAMA_API_KEY"),
        ("status:404", "has no model 'fault'"),
        ("status:429", "is busy"),
        ("status:500", "failed (HTTP 500)"),
        ("stall", "did not answer for 1 s"),
        ("malformed", "not a chat stream"),
    ],
)
def test_failures_before_the_first_piece_say_what_happened(faults, mode, says) -> None:
    r = brain(faults.url, stall_timeout_s=1.0)
    faults.mode = mode
    with pytest.raises(BrainError, match=re.escape(says)):
        list(r.stream("Hello?"))
    assert faults.requests == 1  # no retry
    faults.mode = "ok"
    assert "".join(r.stream("Hello again?")) == "Hello there, friend."  # and it recovers


def test_the_context_size_is_learned_from_a_too_long_answer(faults) -> None:
    r = brain(faults.url)
    for q in QUESTIONS[:4]:
        list(r.stream(q))
    faults.mode = "context:120"  # llama-server's 400, naming its context
    assert "".join(r.stream(QUESTIONS[4])) == "Hello there, friend."
    assert (r.n_ctx, r.ctx_source) == (120, "learned from the server")
    assert r.dropped_turns >= 2 and len(r.kept) <= 3 and faults.requests == 6


def test_a_stream_dropped_mid_reply_keeps_the_part_received(faults) -> None:
    r = brain(faults.url)
    faults.mode = "drop"
    got = []
    with pytest.raises(BrainError):
        for piece in r.stream("Hello?"):
            got.append(piece)
    assert "".join(got) == "Hello there"
    assert r.history[-1].text == "Hello there" and r.history[-1].interrupted
    assert faults.requests == 1


# ----- front ends -------------------------------------------------------------------------------
@pytest.mark.slow
def test_chat_cli_and_doctor_use_the_server(server, tmp_path) -> None:
    env = {**os.environ, "TALK_LLAMA_CONFIG": str(tmp_path / "config")}
    turns, out = text_chat(server.url, ["Hello!", "What is two plus two?"], env, "-mt", "24", timeout=120)
    assert out.returncode == 0, out.stderr
    assert [t["user"] for t in turns] == ["Hello!", "What is two plus two?"] and all(
        t["reply"] for t in turns
    )
    doctor = subprocess.run(
        [sys.executable, "-m", "app", "doctor", "--llm-url", server.url],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert "[server]" in doctor.stdout and f"{server.url}: model" in doctor.stdout
    down = subprocess.run(
        [sys.executable, "-m", "app", "chat", "--text", "--llm-url", "http://127.0.0.1:9/v1"],
        input="Hello!\n",
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert down.returncode == 2 and "cannot be reached" in down.stderr


def test_the_assistant_speaks_through_the_server_and_remembers_what_was_heard(
    server, llm_model, whisper_model, virtual_audio
) -> None:
    from tests.support.assistant_rig import Recorder, make

    rec = Recorder()
    remote = RemoteConfig(server.url, max_tokens=300, temperature=0.0)
    a = make(llm_model, whisper_model, rec, remote=remote, use_microphone=False)
    try:
        loaded = next(e for e in rec.of("loading") if e.part == "llm")
        assert loaded.stats["server"] == server.url  # the gauge shows the server's memory
        a.send_text("Tell me a long story about a dragon who loves tea.")
        started = lambda e: e.progress == "sentence_started"  # noqa: E731
        first = rec.wait_for("sentence", 60, started)
        rec.wait_for("sentence", 60, lambda e: started(e) and e.index > first.index)
        a.interrupt()
        heard = rec.wait_for("heard", 60)
        a.send_text("Thank you!")
        turn = rec.wait_for("turn", 60, lambda e: e.user == "Thank you!")
        brain = a.conversation
        assert isinstance(brain, RemoteConversation)
        assert brain.kept[0].reply == heard.text and heard.unspoken  # resent as heard
        assert turn.reply and turn.stats["server"] == server.url and turn.stats["cached_tokens"] == -1
    finally:
        a.shutdown()


def test_settings_test_connection_and_the_choice_is_saved(server, qtbot, config_dir) -> None:
    from app.gui.settings_dialog import SettingsDialog
    from app.loop.settings import AppSettings, assistant_config

    dlg = SettingsDialog(AppSettings())
    qtbot.addWidget(dlg)
    dlg.show()
    dlg.server.url.setText("http://127.0.0.1:9/v1")
    dlg.server.test()
    qtbot.waitUntil(lambda: dlg.server.result.text().startswith("✗"), timeout=20000)
    assert "cannot be reached" in dlg.server.result.text()
    dlg.server.url.setText(server.url)
    dlg.server.test()
    qtbot.waitUntil(lambda: dlg.server.result.text().startswith("✓"), timeout=20000)
    assert "context" in dlg.server.result.text()
    new = dlg.result_settings()
    assert new.llm_url == server.url and new.model_reload_needed(AppSettings())
    config = assistant_config(new)
    assert config.remote is not None and config.remote.url == server.url
    new.save()
    stored = json.loads(AppSettings.path().read_text())
    assert stored["llm_url"] == server.url and not [k for k in stored if "api" in k]  # no key stored


def test_a_withdrawn_tentative_turn_leaves_no_trace_and_the_gauge_names_the_server(server, qtbot) -> None:
    """A tentative turn on a server: withdrawn at its prompt or after speculative pieces, nothing
    stays; confirmed (at once or after speculative pieces), it is an ordinary turn."""
    from app.gui.widgets import ContextGauge

    r = brain(server.url)
    list(r.stream(QUESTIONS[0]))
    before = (r.messages("x"), len(r.history), r.turn_count)
    assert list(r.stream("Tell me about the moon.", gate=ConfirmAtPrompt(lambda: False))) == []
    assert (r.messages("x"), len(r.history), r.turn_count) == before
    # pieces read before the decision are speculative: taken back, they leave nothing either
    gate = SpeculatingGate(3, False)
    assert len(list(r.stream("Tell me about the moon.", gate=gate))) == 3 and gate.asked == 4
    assert (r.messages("x"), len(r.history), r.turn_count) == before
    confirmed = "".join(r.stream("Tell me about the moon.", gate=ConfirmAtPrompt(lambda: True)))
    assert confirmed and r.history[-2].text == "Tell me about the moon."
    # confirmed after 3 speculative pieces: the whole reply, the same as confirmed at once
    # (greedy), one turn more
    gate = SpeculatingGate(3, True)
    again = "".join(r.stream("Tell me about the moon.", gate=gate))
    assert again and r.history[-2].text == "Tell me about the moon." and r.history[-1].text == again.strip()
    gauge = ContextGauge()
    qtbot.addWidget(gauge)
    gauge.update_stats(r.context_stats())
    assert gauge.text().startswith("Server memory ") and "does not report" in gauge.toolTip()
    r.close()


def test_cancel_is_immediate_even_while_the_server_is_silent(faults) -> None:
    """A barge-in during a stall: the stream is closed from outside, the turn ends cancelled."""
    r = brain(faults.url, stall_timeout_s=60.0)
    faults.mode = "stall-after-first"
    faults.stall_s = 60.0
    cancel = threading.Event()
    ended = threading.Event()
    got: list[str] = []

    def consume() -> None:
        got.extend(r.stream("Hello?", cancel))
        ended.set()

    threading.Thread(target=consume, daemon=True).start()
    deadline = time.monotonic() + 20
    while not got and time.monotonic() < deadline:
        time.sleep(0.02)
    cancel.set()
    assert ended.wait(20), "the cancelled stream kept waiting for the silent server"
    assert got == ["Hello"] and r.last_stats.stop_reason == "cancelled"
    assert r.history[-1].text == "Hello" and r.history[-1].interrupted


def test_an_action_exchange_is_sent_with_the_next_requests(server) -> None:
    r = brain(server.url)
    try:
        assert "".join(r.stream("Hello there.")).strip()
        r.record_exchange("What is twelve times seven?", "Twelve times seven is 84.")
        assert r.last_stats is None and len(r.history) == 4 and r.turn_count == 2
        assert "".join(r.stream("Thanks. And what is your name?")).strip()
        exchange = [("user", "What is twelve times seven?"), ("assistant", "Twelve times seven is 84.")]
        assert [(m["role"], m["content"]) for m in r.messages("next")[1:]][2:4] == exchange
        assert [(m.role, m.text) for m in r.history[2:4]] == exchange
    finally:
        r.close()
