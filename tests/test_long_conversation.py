"""Long conversations on the real SmolLM2 GGUF: the sampler reads the model's own earlier replies
(so it stops copying them), and that state is a function of the context alone, whichever path
built the context (cancel, withdrawn tentative turn, session resume, reset)."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from app.brain import session
from app.brain.conversation import Conversation, LlmConfig
from app.brain.persona import PINNED_TIME, Persona
from app.brain.sampling import SamplingConfig
from app.brain.user_turn import ConfirmAtPrompt
from tests.support.conversations import assert_consistent
from tests.support.longchat_script import LINES
from tests.support.topic_scores import scores

pytestmark = pytest.mark.slow  # many turns on the real model: the full suite, not `make check`

# Sampling on (temperature > 0, seeded), so the draw and the penalties both matter.
SAMPLED = SamplingConfig(seed=11, temperature=0.7, top_k=40, top_p=0.95)


def make(
    model: Path, sampling: SamplingConfig = SAMPLED, n_ctx: int = 1024, max_tokens: int = 32
) -> Conversation:
    cfg = LlmConfig(model, n_ctx=n_ctx, max_tokens=max_tokens, sampling=sampling)
    return Conversation(cfg, Persona(now=PINNED_TIME))


def test_the_sampler_sees_only_the_models_own_replies(llm_model: Path) -> None:
    c = make(llm_model)
    c.say("Name a fruit.")
    first = c.history[-1].text
    c.say("Name a colour.")
    text = c.llama.detokenize(c.own_replies()).decode()
    assert text.startswith(first) and c.history[-1].text in text
    assert "Name a" not in text and "<|im" not in c.llama.detokenize(c.own_replies(), special=True).decode()
    c.close()


def test_reply_spans_survive_shifts(llm_model: Path) -> None:
    """After many whole-turn shifts the spans still point at reply text (never at a user turn
    or template scaffolding)."""
    c = make(llm_model, n_ctx=512)
    for line in LINES[:30]:
        c.say(line)
    assert c.shifts >= 2
    spans = c.reply_spans()
    kept = [m.text for m in c.history if m.role == "assistant"][-len(spans) :]
    for (start, end), reply in zip(spans, kept, strict=True):
        span = c.llama.detokenize(c.llama.input_ids[start:end].tolist(), special=True).decode()
        assert span.strip() == reply.strip()
    assert_consistent(c)
    c.close()


def test_sixty_turns_at_512_stay_varied(llm_model: Path) -> None:
    """The bench's conversation, 64 turns, many shifts: the most common 4-word sequence stays in
    at most 20% of replies 21+ (the bar of bench/longchat.py) and most replies stay on topic."""
    c = make(llm_model, SamplingConfig(seed=1), n_ctx=512, max_tokens=64)
    lines = LINES[:64]
    replies = [c.say(line) for line in lines]
    result = scores(lines, replies)
    assert c.shifts >= 5
    assert result["template_share"] <= 0.20, result
    assert result["on_topic"] >= 0.6, result
    c.close()


def replies_after(c: Conversation, lines: list[str]) -> list[str]:
    return [c.say(line) for line in lines]


def test_withdrawn_turn_leaves_the_sampler_as_before(llm_model: Path) -> None:
    a = make(llm_model)
    a.say("Tell me about owls.")
    assert list(a.stream("Tell me about the sea", gate=ConfirmAtPrompt(lambda: False))) == []
    after_a = replies_after(a, ["What do owls eat?", "And where do they sleep?"])
    b = make(llm_model)
    b.say("Tell me about owls.")
    assert b.own_replies() and a.history[1].text == b.history[1].text
    after_b = replies_after(b, ["What do owls eat?", "And where do they sleep?"])
    assert after_a == after_b
    a.close()
    b.close()


def test_cancelled_reply_then_resume_gives_the_same_replies(llm_model: Path, tmp_path: Path) -> None:
    """A reply cut off by barge-in is committed; the next replies are the same whether the
    conversation goes on in the same object or in one resumed from its session."""
    a = make(llm_model, max_tokens=64)
    a.say("Tell me about trains.")
    cancel = threading.Event()
    for i, _piece in enumerate(a.stream("Tell me a long story about a dragon.", cancel)):
        if i == 3:
            cancel.set()
    assert a.last_stats.stop_reason == "cancelled"
    session.save(a, tmp_path)
    b = make(llm_model, max_tokens=64)
    assert session.load(b, tmp_path).resumed
    assert b.own_replies() == a.own_replies() and len(b.own_replies()) > 10
    next_lines = ["Sorry, what were you saying?", "What is your favourite train?"]
    assert replies_after(a, next_lines) == replies_after(b, next_lines)
    assert_consistent(b)
    a.close()
    b.close()


def test_reset_forgets_earlier_replies(llm_model: Path) -> None:
    a = make(llm_model)
    replies_after(a, ["Tell me about clouds.", "Why are they white?"])
    a.reset()
    assert a.own_replies() == []
    b = make(llm_model)
    lines = ["Tell me about bread.", "How is it baked?"]
    assert replies_after(a, lines) == replies_after(b, lines)
    a.close()
    b.close()


def test_history_changes_what_is_said(llm_model: Path) -> None:
    """Guards the tests above: feeding the earlier replies does change the draw, so equal
    replies there mean equal sampler state, not an inert sampler."""
    lines = [*LINES[:8], "Tell me something about the moon."]
    with_history = replies_after(make(llm_model, SamplingConfig(seed=3), max_tokens=48), lines)
    without = replies_after(make(llm_model, SamplingConfig(seed=3, history_tokens=0), max_tokens=48), lines)
    assert with_history[0] == without[0]  # no earlier replies yet: identical
    assert with_history != without
