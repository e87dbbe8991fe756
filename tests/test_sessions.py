"""Sessions of the local conversation on the real model: resumed without re-evaluating, and a
mismatch or a damaged file never fatal (the turns are replayed)."""

from __future__ import annotations

import json
from pathlib import Path

from app.brain import session
from app.brain.conversation import Conversation, LlmConfig
from app.brain.persona import PINNED_TIME, Persona
from app.brain.sampling import SamplingConfig
from tests.support.conversations import EvalCounter, assert_consistent, make


def test_session_resume_without_reevaluation(llm_model: Path, tmp_path: Path) -> None:
    c = make(llm_model, n_ctx=1024)
    for q in ("Hello, I am Sam.", "I like green tea."):
        c.say(q)
    session.save(c, tmp_path)
    n_past, ids = c.n_past, c.llama.input_ids[: c.n_past].copy()
    # the file holds whole turns; the primed head of the next turn is evaluated again on load
    saved = json.loads((tmp_path / session.META).read_text())
    assert saved["n_past"] == n_past - c.primed_tokens and c.primed_tokens == 3
    c.close()

    c2 = make(llm_model, n_ctx=1024)
    counter = EvalCounter(c2)
    res = session.load(c2, tmp_path)
    # nothing re-evaluated; only the next turn's head is primed again
    assert res.resumed and res.message == "" and counter.calls == [c2.primed_tokens]
    assert c2.n_past == n_past and (c2.llama.input_ids[:n_past] == ids).all()
    assert [m.text for m in c2.history][:1] == ["Hello, I am Sam."]
    assert_consistent(c2)
    counter.calls.clear()
    c2.say("What is a good tea to drink?")  # asks about nothing remembered: no recall note
    assert counter.calls[0] == c2.last_stats.prompt_tokens - c2.primed_tokens  # only the new turn
    assert_consistent(c2)
    c2.close()


def test_session_mismatch_and_corruption_are_not_fatal(llm_model: Path, tmp_path: Path) -> None:
    c = make(llm_model, n_ctx=1024)
    c.say("Hello, I am Sam.")
    session.save(c, tmp_path)
    c.close()
    other = Conversation(
        LlmConfig(llm_model, n_ctx=1024, sampling=SamplingConfig(temperature=0)),
        Persona("Sam", "Zed", now=PINNED_TIME),
    )
    res = session.load(other, tmp_path)
    assert not res.resumed and "persona" in res.message and res.replayed_turns == 1
    assert_consistent(other)
    other.close()

    (tmp_path / "state.bin").write_bytes(b"garbage")
    c3 = make(llm_model, n_ctx=1024)
    res = session.load(c3, tmp_path)
    assert not res.resumed and "unusable" in res.message and res.replayed_turns == 1
    assert_consistent(c3)
    (tmp_path / "session.json").write_text("{not json")
    res = session.load(c3, tmp_path)
    assert not res.resumed and "corrupt" in res.message
    c3.close()
