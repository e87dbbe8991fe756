"""Tentative turns: the prompt of a hands-free turn is evaluated on the transcript of a pause,
before the end of speech is certain, and taken back when the user goes on talking.

Conversation level: a withdrawn turn leaves the cache, ledger and history exactly as before, and
the next reply is token for token what it would have been. Assistant level: the stt thread's
pause/resumed/final items are fed directly (white-box, no microphone, so the timing of a pause
is exact); whisper, llama and the threads are the real ones. The real-audio path is covered by
tests/test_assistant.py (hands-free question: confirmed; 300 ms pause: no trace left).
"""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import pytest

from app.brain.user_turn import ConfirmAtPrompt
from app.loop.ports import Utterance
from tests.conftest import espeak, load16k
from tests.support.assistant_rig import Recorder, make
from tests.support.conversations import assert_consistent, whole_turns
from tests.support.conversations import make as make_conversation


class SpeculatingGate:
    """A gate that lets `n` reply tokens be generated speculatively, then gives `answer` (the
    Responder's gate does the same around the first spoken chunk)."""

    def __init__(self, n: int, answer: bool, wait_s: float = 0.0) -> None:
        self.n, self.answer, self.wait_s = n, answer, wait_s
        self.asked, self.end_of_turn = 0, None

    def evaluated(self, end_of_turn: float | None) -> None:
        self.end_of_turn = end_of_turn

    def decide(self, must: bool) -> bool | None:
        self.asked += 1
        if self.asked <= self.n and not must:
            return None
        time.sleep(self.wait_s)
        return self.answer


def test_withdrawn_turn_leaves_no_trace(llm_model: Path) -> None:
    spec, plain = make_conversation(llm_model, n_ctx=1024), make_conversation(llm_model, n_ctx=1024)
    for c in (spec, plain):
        c.say("Hello, I am Sam.")
    before = (spec.n_past, spec.llama.input_ids[: spec.n_past].copy(), list(spec.history), spec.turn_count)
    waited = []
    gate = ConfirmAtPrompt(lambda: waited.append(1) or False)
    assert list(spec.stream("Tell me something interesting", gate=gate)) == []
    assert waited == [1]
    # withdrawn after 6 speculative reply tokens: those go too
    gate = SpeculatingGate(6, False)
    assert len(list(spec.stream("Tell me something interesting", gate=gate))) >= 1
    assert gate.asked == 7 and spec.last_stats.turn == before[3]
    assert spec.n_past == before[0] and (spec.llama.input_ids[: spec.n_past] == before[1]).all()
    assert spec.history == before[2] and spec.turn_count == before[3]
    assert_consistent(spec)
    question = "Tell me something interesting about the moon."
    # confirmed at once, it is an ordinary turn: same reply as the conversation that never speculated
    assert spec.say(question) == plain.say(question)
    # confirmed 50 ms after 4 speculative tokens: the same reply again, all of it yielded
    gate = SpeculatingGate(4, True, wait_s=0.05)
    reply = "".join(spec.stream("And the sun?", gate=gate))
    assert reply == "".join(plain.stream("And the sun?"))
    assert spec.last_stats.t_wait_ms >= 50 and spec.n_past == plain.n_past
    assert [(m.role, m.text) for m in spec.history] == [(m.role, m.text) for m in plain.history]
    assert_consistent(spec)
    spec.close()
    plain.close()


def test_end_of_turn_probability_reads_the_words_not_the_period(llm_model: Path) -> None:
    """The model's P(finished) after the last word: high for a complete question, tiny for words
    that trail off, whatever whisper's final period says; reading it changes nothing evaluated."""
    spec, plain = make_conversation(llm_model, n_ctx=1024), make_conversation(llm_model, n_ctx=1024)
    probs = {}
    for text in (
        "What is the weather like today?",
        "Tell me about.",
        "What is the capital of",
        "Why is the sky blue",
    ):
        gate = SpeculatingGate(0, False)
        list(spec.stream(text, gate=gate))
        probs[text] = gate.end_of_turn
    assert min(probs["What is the weather like today?"], probs["Why is the sky blue"]) > 0.1, probs
    assert max(probs["Tell me about."], probs["What is the capital of"]) < 0.01, probs
    gate = SpeculatingGate(0, True)
    reply = "".join(spec.stream("What is the weather like today?", gate=gate))
    assert reply == "".join(plain.stream("What is the weather like today?"))
    assert (
        spec.n_past == plain.n_past
        and (spec.llama.input_ids[: spec.n_past] == plain.llama.input_ids[: plain.n_past]).all()
    )
    assert spec.last_stats.end_of_turn == gate.end_of_turn and plain.last_stats.end_of_turn is None
    spec.close()
    plain.close()


@pytest.fixture(scope="module")
def halves(speech_dir: Path) -> tuple[np.ndarray, np.ndarray]:
    first = load16k(espeak("Tell me something interesting", speech_dir / "spec-a.wav", wpm=140))
    second = load16k(espeak("about the moon.", speech_dir / "spec-b.wav", wpm=140))
    return first, np.concatenate([first, np.zeros(4800, np.float32), second])


def wait_until(cond, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while not cond():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.01)


def test_pause_then_more_speech_withdraws_the_tentative_turn(llm_model, whisper_model, halves) -> None:
    first, whole = halves
    rec = Recorder()
    a = make(llm_model, whisper_model, rec, hands_free=True, use_microphone=False, max_tokens=12)
    try:
        n0 = a.conversation.n_past
        a.hearing.put(Utterance(first, time.perf_counter(), len(first), False))  # pause after the first half
        wait_until(lambda: a.conversation.n_past > n0)  # its prompt is in the cache, waiting
        assert a.tentative.current is not None and not rec.of("user")
        a.hearing.resumed()  # the user goes on talking
        a.hearing.put(Utterance(whole, time.perf_counter(), len(whole), True))
        turn = rec.wait_for("turn", 90)
    finally:
        a.shutdown()
    assert a.tentative.counts == {"confirmed": 0, "withdrawn": 1}
    assert [e.text for e in rec.of("user")] == [turn.user]
    user = turn.user.lower()
    assert "interesting" in user and len(user.split()) > 4 and turn.reply, user  # both halves
    assert [m.role for m in a.conversation.history] == ["user", "assistant"]
    assert whole_turns(a.conversation) == 1 and turn.t_confirmed_ms is None
    assert_consistent(a.conversation)


def test_end_of_speech_confirms_the_tentative_turn(llm_model, whisper_model, halves) -> None:
    _, whole = halves
    rec = Recorder()
    a = make(llm_model, whisper_model, rec, hands_free=True, use_microphone=False, max_tokens=12)
    try:
        t_end = time.perf_counter()
        a.hearing.put(Utterance(whole, t_end, len(whole), False))
        wait_until(lambda: a.tentative.current is not None)
        assert not rec.of("user") and not rec.of("token")  # nothing shown before the end of speech
        a.hearing.put(Utterance(whole, t_end, len(whole), True))  # the silence went on: end of speech
        turn = rec.wait_for("turn", 90)
    finally:
        a.shutdown()
    assert a.tentative.counts == {"confirmed": 1, "withdrawn": 0}
    assert a.hearing.early.reused == 1  # whisper ran once
    assert len(rec.of("user")) == 1 and turn.reply
    assert turn.t_transcript_ms <= turn.t_confirmed_ms <= turn.t_first_audio_ms
    assert_consistent(a.conversation)


def test_microphone_failure_withdraws_the_tentative_turn(llm_model, whisper_model, halves) -> None:
    """The device goes away after a pause: the end of speech will never come, so the waiting
    turn is withdrawn (the llm thread is not left blocked) and typing still works."""
    first, _ = halves
    rec = Recorder()
    a = make(llm_model, whisper_model, rec, hands_free=True, use_microphone=False, max_tokens=12)
    try:
        n0 = a.conversation.n_past
        a.hearing.put(Utterance(first, time.perf_counter(), len(first), False))
        wait_until(lambda: a.conversation.n_past > n0)  # the tentative prompt is evaluated, waiting
        a._on_mic_error("Microphone disconnected.")  # what Microphone reports when the stream dies
        assert a.tentative.counts == {"confirmed": 0, "withdrawn": 1}
        wait_until(lambda: a.conversation.n_past == n0)  # the llm thread took the prompt back
        a.send_text("Hello!")
        turn = rec.wait_for("turn", 90)
    finally:
        a.shutdown()
    assert turn.user == "Hello!" and turn.reply
    assert any(e.source == "microphone" for e in rec.of("error"))
    assert [m.role for m in a.conversation.history] == ["user", "assistant"]
