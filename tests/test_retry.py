"""Retry (issue #16, point 2): the newest exchange leaves the context exactly, on whole-turn
boundaries, and is answered again with another seed; locally (real model), through a server's
request (FaultServer), and from the window's retry link (real assistant underneath)."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import QUrl

from app.brain.conversation import Conversation, LlmConfig
from app.brain.persona import PINNED_TIME, Persona
from app.brain.records import RemoteConfig
from app.brain.remote import RemoteConversation
from app.brain.sampling import SamplingConfig
from tests.support.conversations import assert_consistent
from tests.support.servers import FaultServer
from tests.test_gui import close_window, open_window, settled, shot

QUESTION = "Tell me a short story about a cat."


def _local(model: Path) -> Conversation:
    sampling = SamplingConfig(seed=11, temperature=1.0, top_k=40, top_p=0.95)
    config = LlmConfig(model, n_ctx=1024, sampling=sampling, max_tokens=30)
    return Conversation(config, Persona(now=PINNED_TIME))


def _top(c: Conversation) -> list[tuple[str, float]]:
    return c.probe("What did we talk about?", k=8)


def test_retry_takes_the_turn_out_exactly_and_draws_another_reply(llm_model: Path) -> None:
    c = _local(llm_model)
    c.say("Hello, my name is Sam.")
    n_past, ids = c.n_past, c.llama.input_ids[: c.n_past].copy()
    turns, replies, history = list(c.ledger.turns), list(c.ledger.replies), list(c.history)
    before = _top(c)
    first = c.say(QUESTION)
    assert c.n_past > n_past

    assert c.retract_last_turn() == QUESTION
    # the same tokens, ledger and history as before the exchange ...
    assert c.n_past == n_past and (c.llama.input_ids[:n_past] == ids).all()
    assert (c.ledger.turns, c.ledger.replies) == (turns, replies) and c.history == history
    assert_consistent(c)
    # ... and the same memory: what the model would say next is unchanged
    after = _top(c)
    assert [t for t, _ in after] == [t for t, _ in before]
    assert [p for _, p in after] == pytest.approx([p for _, p in before], abs=1e-4)

    again = c.say(QUESTION)  # another seed: another reply from the same context
    assert again and again != first
    assert [m.role for m in c.history] == ["user", "assistant"] * 2 and c.history[-1].text == again
    third = c.retract_last_turn() and c.say(QUESTION)
    assert third not in (first, again)  # each retry moves the seed on
    c.say("Thanks.")  # a new turn draws with the configured seed again
    assert c._sampler._variant == 0
    assert_consistent(c)
    c.close()


def test_nothing_to_retry_changes_nothing(llm_model: Path) -> None:
    c = _local(llm_model)
    n_past = c.n_past
    assert c.retract_last_turn() is None and c.n_past == n_past and not c.history
    assert_consistent(c)
    c.close()


def test_retry_through_a_server_resends_the_conversation_without_the_exchange() -> None:
    server = FaultServer()
    try:
        r = RemoteConversation(RemoteConfig(server.url, seed=5), Persona(now=PINNED_TIME))
        "".join(r.stream("First question"))
        "".join(r.stream(QUESTION))
        assert r.retract_last_turn() == QUESTION
        "".join(r.stream(QUESTION))
        first, retried = server.bodies[1], server.bodies[2]
        assert first["messages"] == retried["messages"]  # the exchange was not sent again
        assert (first["seed"], retried["seed"]) == (5, 6)
        assert len(r.history) == 4 and r.turn_count == 2
        assert r.retract_last_turn() == QUESTION  # a Retry, then a new conversation instead:
        r.reset()
        "".join(r.stream("First question"))
        assert server.bodies[-1]["seed"] == 5  # a new exchange, the configured seed
        r.close()
    finally:
        server.stop()


def test_the_retry_link_answers_the_last_turn_again(qtbot, config_dir, virtual_audio) -> None:
    w = open_window(qtbot)
    w.bridge.send_text("Say hello.")
    qtbot.waitUntil(lambda: len(w.chat.messages) == 2 and bool(w.chat.messages[1].latency), timeout=60000)
    settled(qtbot, w, stop=False)  # a short reply, heard whole: its text is what is retried
    w.chat.redraw()
    assert "retry:1" in w.chat.toHtml()  # offered on the newest reply while idle
    shot(w, "retry-offered")
    old = w.chat.messages[1]
    w.chat.anchorClicked.emit(QUrl("retry:1"))
    qtbot.waitUntil(lambda: len(w.chat.messages) == 2 and w.chat.messages[1] is not old, timeout=60000)
    qtbot.waitUntil(lambda: bool(w.chat.messages[1].latency), timeout=60000)
    history = w.bridge.history()
    # the retried reply replaced the first on screen and in memory: one exchange, not two
    assert [m.role for m in history] == ["user", "assistant"] and history[0].text == "Say hello."
    assert history[1].text == w.chat.messages[1].text and w.chat.messages[0].text == "Say hello."
    close_window(w)


def test_retry_keeps_the_earlier_answers_and_either_can_be_gone_on_from(
    qtbot, config_dir, virtual_audio
) -> None:
    """After a Retry the reply says "2/2" and its arrow brings the first answer back: on
    screen, in the history and in the context (the cache holds its tokens); the versions are
    saved with the conversation and survive a restart."""
    w = open_window(qtbot)
    w.bridge.send_text("Say hello.")
    qtbot.waitUntil(lambda: len(w.chat.messages) == 2 and bool(w.chat.messages[1].latency), timeout=60000)
    settled(qtbot, w, stop=False)
    first = w.chat.messages[1].text
    w.chat.anchorClicked.emit(QUrl("retry:1"))  # the reply leaves the chat until the new one comes
    qtbot.waitUntil(
        lambda: len(w.chat.messages) == 2 and len(w.chat.messages[1].versions) == 2, timeout=60000
    )
    settled(qtbot, w, stop=False)
    second = w.chat.messages[1].text
    assert w.chat.messages[1].versions == [first, second] and w.chat.messages[1].version == 1
    w.chat.redraw()
    page = w.chat.toHtml()
    assert "2/2" in page and "ver:0" in page and "ver:1" not in page
    shot(w, "retry-versions")

    brain = w.bridge.assistant.conversation
    w.chat.anchorClicked.emit(QUrl("ver:0"))  # ‹: the first answer again
    qtbot.waitUntil(lambda: w.chat.messages[1].version == 0, timeout=30000)
    assert w.chat.messages[1].text == first and brain.history[-1].text == first
    start, end = brain.reply_spans()[-1]
    assert brain.llama.detokenize(brain.llama.input_ids[start:end].tolist()).decode().strip() == first
    assert_consistent(brain)
    w.chat.redraw()
    assert "1/2" in w.chat.toHtml() and "ver:1" in w.chat.toHtml()
    close_window(w)

    w = open_window(qtbot)  # the same conversation, reopened
    qtbot.waitUntil(lambda: len(w.chat.messages) == 2, timeout=60000)
    shown = w.chat.messages[1]
    assert shown.versions == [first, second] and shown.version == 0 and shown.text == first
    close_window(w)
