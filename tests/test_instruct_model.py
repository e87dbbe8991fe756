"""The conversation engine on a real instruct model (Qwen2.5 Coder 0.5B Instruct, Q4_K_M): its
own ChatML template, the memory note beside the system prompt after a shift, and the facts it
holds answered. Greedy sampling, so the replies are the model's most likely ones."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.brain.jinja_format import JinjaChatFormat
from app.brain.memory import HEADER
from tests.support.conversations import assert_consistent, make

pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]


def test_the_note_sits_beside_the_system_prompt_and_is_never_read_out(instruct_model: Path) -> None:
    c = make(instruct_model, n_ctx=512, max_tokens=40)
    try:
        assert isinstance(c.format, JinjaChatFormat) and c.format.note("x") is not None
        c.say("Hi! My name is Robin and I live in Porto.")
        c.say("I have a dog called Rex.")
        replies = []
        n = 0
        while c.shifts < 2:
            n += 1
            replies.append(c.say(f"Tell me one fact about the number {n}."))
            assert_consistent(c)
        system = c.llama.detokenize(c.llama.input_ids[: c.ledger.n_keep].tolist(), special=True).decode()
        cached = c.llama.detokenize(c.llama.input_ids[: c.n_past].tolist(), special=True).decode()
        assert c.ledger.pinned and cached.startswith(system + "<|im_start|>system\n" + HEADER)
        assert "The user's name is Robin." in cached and "Hi! My name is Robin" not in cached
        for question, word in (("What is my name?", "robin"), ("What is my dog called?", "rex")):
            replies.append(reply := c.say(question))
            assert word in reply.lower(), reply
        assert not any(HEADER.lower()[:20] in r.lower() for r in replies), replies
    finally:
        c.close()
