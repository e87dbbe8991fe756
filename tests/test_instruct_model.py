"""The conversation engine on a real instruct model (Qwen2.5 Coder 0.5B Instruct, Q4_K_M): its
own ChatML template, its measured aids, and the memory note beside the system prompt after the
shifts. What the model then says (on topic, recalled, the note never read out) is measured by
bench/model_memory.py over seeds, not asserted from one run."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.brain.jinja_format import JinjaChatFormat
from app.brain.memory import HEADER
from tests.support.conversations import assert_consistent, make

pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]


def test_the_note_sits_beside_the_system_prompt(instruct_model: Path) -> None:
    c = make(instruct_model, n_ctx=512, max_tokens=40)
    try:
        assert isinstance(c.format, JinjaChatFormat) and c.format.note("x") is not None
        assert not c.aids.recall_note  # measured: a note right before the reply is recited
        c.say("Hi! My name is Robin and I live in Porto.")
        c.say("I have a dog called Rex.")
        n = 0
        while c.shifts < 2:
            n += 1
            c.say(f"Tell me one fact about the number {n}.")
            assert_consistent(c)
        system = c.llama.detokenize(c.llama.input_ids[: c.ledger.n_keep].tolist(), special=True).decode()
        cached = c.llama.detokenize(c.llama.input_ids[: c.n_past].tolist(), special=True).decode()
        assert c.ledger.pinned and cached.startswith(system + "<|im_start|>system\n" + HEADER)
        assert "The user's name is Robin." in cached and "Hi! My name is Robin" not in cached
        c.say("What is my dog called?")  # no recall note: the turn is the question alone
        assert not any(c.ledger.recalls) and cached.count(HEADER) == 1
        assert_consistent(c)
    finally:
        c.close()
