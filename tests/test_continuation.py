"""Going on after a pause the assistant took for the end of the turn (#15, continuation.py): the
turn is taken back and heard again with what follows, as one turn. Real models, the virtual
microphone and speaker; the first test drives the Continuation alone (no audio)."""

from __future__ import annotations

import time

import numpy as np

from app.loop.continuation import Continuation
from app.loop.turn import Turn
from app.loop.turn_end import TurnEndConfig
from tests.conftest import espeak
from tests.support.assistant_rig import Recorder, make
from tests.support.conversations import assert_consistent
from tests.test_turn_taking import paused_wav


def test_speech_within_the_window_continues_the_last_utterance() -> None:
    c = Continuation(window_ms=1000)
    head = np.ones(16000 + 8000, np.float32)  # 1 s of words, then 0.5 s of silence
    t_end = time.perf_counter()
    record = c.ended(head, t_end)
    assert len(record.audio) == len(head)  # (the Transcriber cuts the pause: test_stt.py)
    turn = Turn("Tell me about", t_end)
    assert c.deliver(record, lambda: turn) and record.turn is turn
    assert c.speech_started(t_end + 0.6) is record  # the user went on: that turn is taken back
    tail = np.full(100, 2, np.float32)
    merged = c.prefixed(tail)
    assert len(merged) == len(record.audio) + 100 and merged[-1] == 2
    c.ended(merged, t_end + 2)  # the merged utterance ends: the head is used up
    assert len(c.prefixed(tail)) == 100


def test_a_turn_not_made_yet_is_never_made_and_late_speech_is_a_new_turn() -> None:
    c = Continuation(window_ms=1000)
    t_end = time.perf_counter()
    record = c.ended(np.ones(1600, np.float32), t_end)
    assert c.speech_started(t_end + 0.2) is record and record.turn is None
    made: list[int] = []
    assert not c.deliver(record, lambda: made.append(1))  # whisper finished after the user went on
    assert not made
    late = c.ended(np.ones(1600, np.float32), t_end + 3)
    assert c.deliver(late, lambda: None)
    assert c.speech_started(t_end + 4.5) is None  # 1.5 s later: a turn of its own
    assert c.dropped() is None
    c.ended(np.ones(1600, np.float32), t_end + 5)
    c.speech_started(t_end + 5.1)
    dropped = c.dropped()  # the new utterance was dropped: the head's words come back alone
    assert dropped is not None and len(dropped.audio) == 1600 and c.dropped() is None


def test_going_on_after_an_answered_pause_makes_one_turn(
    virtual_audio, llm_model, whisper_model, speech_dir
) -> None:
    """ "Tell me something interesting" ends a turn (the fixed rule, 400 ms) and its reply is
    heard; then "about the ocean." over it: the first exchange leaves the conversation and the
    screen exactly, and the whole sentence is answered once."""
    head = espeak("Tell me something interesting.", speech_dir / "go-on-a.wav", wpm=140)
    tail = espeak("about the ocean.", speech_dir / "go-on-b.wav", wpm=140)
    rec = Recorder()
    turn_end = TurnEndConfig(rule="fixed", continue_ms=20000)  # wide: a loaded machine is slow to answer
    a = make(llm_model, whisper_model, rec, hands_free=True, turn_end=turn_end, max_tokens=24)
    try:
        n0 = a.conversation.n_past
        virtual_audio.play_into_mic(head).wait(30)
        first = rec.wait_for("user", 90)
        assert "interesting" in first.text.lower()
        rec.wait_for("sentence", 90, lambda e: e.progress == "sentence_started")
        time.sleep(1.0)  # its voice is heard (the echo guard has measured that there is no echo)
        virtual_audio.play_into_mic(tail).wait(30)
        gone = rec.wait_for("retracted", 90)
        merged = rec.wait_for("turn", 90, lambda e: e.user != first.text)
        a.interrupt()
        deadline = time.monotonic() + 60
        while a.responder.current is not None or a.responder.last_answered is None:
            assert time.monotonic() < deadline
            time.sleep(0.01)
    finally:
        a.shutdown()
    assert gone.text == first.text and gone.continued
    user = merged.user.lower()  # (whisper tiny may hear "the ocean" as "motion")
    assert "interesting" in user and len(user.split()) > len(first.text.split()), user
    history = a.conversation.history
    assert [m.role for m in history] == ["user", "assistant"] and history[0].text == merged.user
    assert a.conversation.n_past > n0
    assert_consistent(a.conversation)


def test_a_long_pause_still_makes_two_turns(virtual_audio, llm_model, whisper_model, speech_dir) -> None:
    """Beyond the window the new speech is a turn of its own; both stay."""
    wav = paused_wav(
        "What is the capital of France?",
        "Please tell me a short joke about cats.",
        1.2,
        speech_dir / "two-turns.wav",
    )
    rec = Recorder()
    turn_end = TurnEndConfig(rule="fixed", continue_ms=300)
    a = make(llm_model, whisper_model, rec, hands_free=True, turn_end=turn_end, max_tokens=8)
    try:
        virtual_audio.play_into_mic(wav).wait(30)
        rec.wait_for("turn", 90)
        rec.wait_for("turn", 90, lambda e: e is not rec.of("turn")[0])
    finally:
        a.shutdown()
    assert not rec.of("retracted")
    users = [m.text.lower() for m in a.conversation.history if m.role == "user"]
    assert len(users) == 2 and "france" in users[0] and "cats" in users[1], users


def test_a_window_of_zero_never_continues() -> None:
    c = Continuation(window_ms=0)
    t = time.perf_counter()
    c.ended(np.zeros(1600, np.float32), t)
    assert c.speech_started(t + 0.01) is None


def test_the_window_is_a_setting() -> None:
    from app.loop.settings import AppSettings, assistant_config

    assert assistant_config(AppSettings()).turn_end.continue_ms == 1500
    assert assistant_config(AppSettings(continue_ms=0)).turn_end.continue_ms == 0
    assert assistant_config(AppSettings(continue_ms="soon")).turn_end.continue_ms == 1500  # hand-edited file
