"""Turns answered by an action (app/actions) inside the assistant, on the real models: the
action's answer is spoken and shown, the exchange joins the persistent context without a
re-evaluation (the built-in model and a real instruct model's own template), the turn's record
says what ran, and a timer that ends is announced — after the sentence being spoken."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.brain.brain import Brain
from app.brain.conversation import Conversation
from app.loop.events import ActionTaken, Announcement, SentenceProgress, TurnReported
from tests.support.assistant_rig import Recorder, make
from tests.support.conversations import assert_consistent
from tests.support.conversations import make as make_conversation

pytestmark = pytest.mark.timeout(600)


def cached_text(c: Brain) -> str:
    assert isinstance(c, Conversation)
    return c.llama.detokenize(c.llama.input_ids[: c.n_past].tolist(), special=True).decode("utf-8", "replace")


def test_a_timer_set_by_a_typed_turn_is_answered_remembered_and_announced(
    llm_model, whisper_model, tmp_path
) -> None:
    rec = Recorder()
    a = make(llm_model, whisper_model, rec, actions_dir=tmp_path)
    try:
        a.send_text("Set a timer for 2 seconds called eggs.")
        action = rec.wait_for("action", 120)
        turn = rec.wait_for("turn", 120)
        ended = rec.wait_for("announcement", 120)
        said = lambda e: e.progress == "sentence_finished" and e.text == ended.text  # noqa: E731
        rec.wait_for("sentence", 120, said)  # typing over the voice would be a barge-in
        a.speaker.wait(60)
        a.send_text("Speak more quietly.")  # the real voice's volume, from its next sentence
        quieter = rec.wait_for("action", 120, lambda e: e.intent == "TalkVolume")
        rec.wait_for("turn", 120, lambda e: e.user == "Speak more quietly.")  # its speech started
        a.speaker.wait(60)
        a.retry()  # what was done has no other answer: said so, nothing changes
        refused = rec.wait_for("notice", 60, lambda e: "cannot be retried" in e.message)
        a.send_text("Tell me one fact about the moon.")  # the model answers the next one
        after = rec.wait_for("turn", 120)
        conv = a.conversation
        assert conv is not None
        messages = [(m.role, m.text) for m in conv.history]
        cached = cached_text(conv)
        assert_consistent(conv)
    finally:
        a.shutdown()
    assert isinstance(action, ActionTaken) and action.intent == "HassStartTimer"
    assert action.reply == "Timer set for 2 seconds named eggs." and not action.failed
    assert isinstance(turn, TurnReported) and turn.reply == action.reply
    assert turn.action is not None and turn.action["intent"] == "HassStartTimer"
    assert turn.record()["action"]["slots"] == {"seconds": "2", "name": "eggs"}
    assert turn.prompt_tokens is None  # nothing was generated for it
    assert isinstance(ended, Announcement) and ended.text == "The eggs timer is done."
    assert refused and not rec.of("retracted")
    assert quieter.reply == "Volume 80 percent." and a.speaker.config.volume == 0.8
    assert messages[:2] == [("user", "Set a timer for 2 seconds called eggs."), ("assistant", action.reply)]
    assert messages[3] == ("assistant", quieter.reply)
    assert isinstance(after, TurnReported) and after.action is None and after.gen_tokens
    assert action.reply in cached and "eggs" in cached  # in the context: evaluated, not generated
    assert cached.index(action.reply) < cached.index("one fact about the moon")


@pytest.mark.slow
def test_an_action_exchange_in_a_real_instruct_models_own_template(instruct_model: Path) -> None:
    c = make_conversation(instruct_model, n_ctx=512, max_tokens=24)
    try:
        c.say("Hi, I am cooking pasta.")
        c.record_exchange("Set a timer for ten minutes.", "Timer set for ten minutes.")
        assert_consistent(c)
        cached = cached_text(c)
        exchange = (
            "<|im_start|>user\nSet a timer for ten minutes.<|im_end|>\n"
            "<|im_start|>assistant\nTimer set for ten minutes.<|im_end|>"
        )
        assert exchange in cached
        n = 0
        while c.shifts < 1:  # the exchange is shifted out like any other turn
            n += 1
            c.say(f"Tell me one fact about the number {n}.")
            assert_consistent(c)
        assert [m.role for m in c.history[:4]] == ["user", "assistant", "user", "assistant"]
        assert c.retract_last_turn() is not None  # Retry still takes back exactly one exchange
        assert_consistent(c)
    finally:
        c.close()


def test_a_timer_that_ends_during_a_spoken_reply_is_said_after_the_sentence_playing(
    virtual_audio, llm_model, whisper_model, tmp_path
) -> None:
    rec = Recorder()
    a = make(llm_model, whisper_model, rec, actions_dir=tmp_path, max_tokens=120)
    try:
        a.send_text("Set a timer for 5 seconds.")
        rec.wait_for("turn", 120)
        a.speaker.wait(60)  # typing over the voice would be a barge-in
        a.send_text("Tell me a very long story about a dragon and a knight, with many details.")
        ended = rec.wait_for("announcement", 120)
        rec.wait_for("sentence", 120, lambda e: e.progress == "sentence_finished" and e.text == ended.text)
        rec.wait_for("sentence", 120, lambda e: e.progress == "sentence_started")  # the story goes on
        said = [e for e in rec.events if isinstance(e, SentenceProgress)]  # (a shutdown cuts the rest)
    finally:
        a.shutdown()
    started = [i for i, e in enumerate(said) if e.progress == "sentence_started"]
    announced = next(i for i in started if said[i].text == ended.text)
    assert not any(e.progress == "sentence_cut" for e in said)  # nothing was cut for it
    before = [e for e in said[:announced] if e.progress in ("sentence_started", "sentence_finished")]
    assert before and before[-1].progress == "sentence_finished"  # a sentence ended first
    story = [e for e in said[:announced] if e.progress == "sentence_started" and e.text != ended.text]
    assert len(story) >= 2, "the timer did not end while the reply was being spoken"
    after = [e for e in said[announced:] if e.progress == "sentence_started" and e.text != ended.text]
    assert after, "the announcement waited for the whole reply instead of the sentence playing"
