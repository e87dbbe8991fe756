"""The conversation engine on every family of model users bring, with the real llama.cpp.

Each family is a tiny random-weight GGUF of its real architecture with its real tokenizer and
chat template (tests/support/tiny_models.py): Llama 3.1, Qwen2.5, Qwen3 (thinking), Gemma 3
(sliding-window attention), Phi-3.5, and Mamba (a recurrent memory). What the models say is
noise; what is tested is the engine's bookkeeping, which is where families differ: each turn
evaluates only its own tokens, the talk goes on through context shifts, and every way of taking
tokens back (Retry, a withdrawn tentative turn, a barge-in amending the reply) leaves the memory
exactly as if its tokens had been evaluated from scratch — which a recurrent state cannot do by
itself (app/brain/state_checkpoints.py). Every chat template llama.cpp ships either renders a
conversation into turn segments or is refused with one sentence.
"""

from __future__ import annotations

import contextlib
import ctypes
from pathlib import Path

import llama_cpp
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.brain import session
from app.brain.chat_format import TemplateError
from app.brain.conversation import Conversation
from app.brain.jinja_format import JinjaChatFormat
from app.brain.user_turn import ConfirmAtPrompt
from tests.support.conversations import EvalCounter, make
from tests.support.tiny_models import FAMILIES, template, template_names, tiny_model

pytestmark = pytest.mark.timeout(600)


@pytest.fixture(scope="module")
def models(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("tiny-models")


def _conv(models: Path, family: str, n_ctx: int = 512) -> Conversation:
    return make(tiny_model(family, models), n_ctx=n_ctx, max_tokens=8)


def _last_logits(llama: llama_cpp.Llama) -> np.ndarray:
    ptr = llama_cpp.llama_get_logits_ith(llama.ctx, -1)
    return np.ctypeslib.as_array(ctypes.cast(ptr, ctypes.POINTER(ctypes.c_float)), (llama.n_vocab(),)).copy()


def assert_memory_is_its_tokens(c: Conversation) -> None:
    """The model's next-token logits are those of a fresh context that evaluates the same tokens:
    nothing taken back lingers in the memory, nothing kept is missing. Rounding differs between
    batchings (an f16 cache), so the gap is judged against what one token of context changes:
    the same fresh context without the last token but one."""
    assert c.cache_pos_max() == c.n_past - 1 and c.llama.n_tokens == c.ledger.n_past
    ids = c.llama.input_ids[: c.n_past].tolist()
    fresh = llama_cpp.Llama(str(c.config.model_path), n_ctx=c.n_ctx, n_threads=1, verbose=False)
    try:
        fresh.eval(ids)
        same = _last_logits(fresh)
        llama_cpp.llama_memory_clear(llama_cpp.llama_get_memory(fresh.ctx), True)
        fresh.n_tokens = 0
        fresh.eval([*ids[:-2], ids[-1]])
        other = _last_logits(fresh)
    finally:
        fresh.close()
    gap, signal = np.abs(_last_logits(c.llama) - same).max(), np.abs(other - same).max()
    assert signal > 0 and gap < signal / 10, (gap, signal)


@pytest.mark.parametrize("family", list(FAMILIES))
def test_the_template_is_the_models_own_and_each_turn_evaluates_only_its_tokens(
    models: Path, family: str
) -> None:
    c = _conv(models, family)
    try:
        assert isinstance(c.format, JinjaChatFormat)  # not the plain-transcript fallback
        system = c.llama.detokenize(c.llama.input_ids[: c.ledger.n_keep].tolist(), special=True).decode()
        assert "Max" in system  # the persona's system prompt, in the template's own frame
        counter = EvalCounter(c)
        for text in ("Hello there.", "Tell me about the sea.", "And the moon?"):
            counter.calls.clear()
            primed = c.primed_tokens
            c.say(text)
            assert counter.calls[0] == c.last_stats.prompt_tokens - primed
            assert c.last_stats.prompt_tokens == len(c._tokenize(c.format.user(text)))
        assert_memory_is_its_tokens(c)
    finally:
        c.close()


@pytest.mark.parametrize("family", list(FAMILIES))
def test_the_talk_goes_on_through_context_shifts(models: Path, family: str) -> None:
    c = _conv(models, family, n_ctx=256)
    try:
        for i in range(40):
            c.say(f"Tell me one short thing about the number {i}.")
            assert c.cache_pos_max() == c.n_past - 1 and c.n_past <= c.n_ctx
            assert c.llama.n_tokens == c.ledger.n_past
        assert c.shifts >= 2 and len(c.history) == 80
    finally:
        c.close()


@pytest.mark.parametrize("family", list(FAMILIES))
def test_taking_tokens_back_leaves_the_memory_as_its_tokens(models: Path, family: str) -> None:
    c = _conv(models, family)
    try:
        c.say("Hello there.")
        c.say("Tell me about the sea.")
        assert c.retract_last_turn() == "Tell me about the sea."  # Retry
        assert_memory_is_its_tokens(c)
        c.say("Tell me about the sea.")
        assert c.amend_last_reply("The sea is")  # a barge-in: what was heard
        assert_memory_is_its_tokens(c)
        withdrawn = "".join(c.stream("And the", gate=ConfirmAtPrompt(lambda: False)))
        assert withdrawn == "" and c.history[-1].text == "The sea is"
        assert_memory_is_its_tokens(c)
        c.reset()
        assert c.n_past == c.ledger.n_keep + c.primed_tokens
        assert_memory_is_its_tokens(c)
    finally:
        c.close()


@pytest.mark.parametrize("family", list(FAMILIES))
def test_a_saved_conversation_resumes_without_evaluating_it_again(
    models: Path, family: str, tmp_path: Path
) -> None:
    c = _conv(models, family)
    c.say("Hello there.")
    c.say("Tell me about the sea.")
    session.save(c, tmp_path)
    ids = c.llama.input_ids[: c.n_past].copy()
    c.close()
    c2 = _conv(models, family)
    try:
        counter = EvalCounter(c2)
        assert session.load(c2, tmp_path).resumed
        assert counter.calls == [c2.primed_tokens] and (c2.llama.input_ids[: c2.n_past] == ids).all()
        assert_memory_is_its_tokens(c2)
        c2.say("And the moon?")
        assert c2.retract_last_turn() == "And the moon?"
        assert_memory_is_its_tokens(c2)
    finally:
        c2.close()


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_a_damaged_template_is_refused_in_one_sentence_never_crashes(data: st.DataObject) -> None:
    """Real templates with a slice cut out or repeated: a template is the model file's foreign
    code, so whatever it does at load ends in a TemplateError (then the plain format), never
    another exception."""
    text = template(data.draw(st.sampled_from(template_names())))
    a = data.draw(st.integers(0, len(text)))
    b = data.draw(st.integers(a, min(len(text), a + 200)))
    damaged = text[:a] + (text[a:b] * 2 if data.draw(st.booleans()) else "") + text[b:]
    with contextlib.suppress(TemplateError):  # refused: the conversation uses the plain format
        JinjaChatFormat(damaged, "<s>", "</s>")


def test_every_chat_template_llama_cpp_ships_renders_turns_or_is_refused_in_one_sentence() -> None:
    names = template_names()
    assert len(names) >= 60
    loaded = []
    for name in names:
        try:
            fmt = JinjaChatFormat(template(name), "<s>", "</s>")
        except TemplateError as exc:
            reason = str(exc)
            assert reason.startswith("the chat template") and "\n" not in reason, (name, reason)
            continue
        loaded.append(name)
        turn = "".join(p.text for p in fmt.user("How are you?"))
        assert "How are you?" in turn and "How are you?" not in "".join(p.text for p in fmt.reply_close())
        assert "You are Max." in "".join(p.text for p in fmt.system("You are Max."))
    # The families users bring first all load with their own template.
    for must in (
        "meta-llama-Llama-3.1-8B-Instruct",
        "Qwen-Qwen2.5-7B-Instruct",
        "Qwen-Qwen3-0.6B",
        "Qwen-QwQ-32B",
        "google-gemma-2-2b-it",
        "microsoft-Phi-3.5-mini-instruct",
        "deepseek-ai-DeepSeek-R1-Distill-Llama-8B",
        "deepseek-ai-DeepSeek-R1-Distill-Qwen-32B",
        "mistralai-Mistral-Nemo-Instruct-2407",
        "ibm-granite-granite-4.0",
        "LFM2-8B-A1B",
        "HuggingFaceTB-SmolLM3-3B",
    ):
        assert must in loaded, must


def _script(c: Conversation, text: str) -> None:
    """A narrow fake, labelled: the sampler is replaced by a script (`text`'s tokens, then the
    end of the turn), so the real engine, template and tokenizer handle a reply a random-weight
    model would never write."""
    tokens = iter([*c.llama.tokenize(text.encode(), add_bos=False, special=True), c.llama.token_eos()])
    c._sampler.sample = lambda _ctx: next(tokens)


def test_thinking_is_never_spoken_and_leaves_the_cache_as_the_template_writes_past_replies(
    models: Path,
) -> None:
    c = _conv(models, "qwen3")
    try:
        c.config.max_tokens = 40
        assert c.format.thinks and c.format.drops_past_thinking
        _script(c, "<think>\nThe user greets me. I should greet back.\n</think>\n\nHello to you.")
        pieces = list(c.stream("Hello there."))
        assert "".join(pieces) == "Hello to you." and not any("think" in p or "greets" in p for p in pieces)
        assert c.history[-1].text == "Hello to you."
        assert c.history[-1].thinking == "The user greets me. I should greet back."
        cached = c.llama.detokenize(c.llama.input_ids[: c.n_past].tolist(), special=True).decode()
        # Qwen3's template writes a past reply without its thinking: so does the cache.
        assert "<|im_start|>assistant\nHello to you.<|im_end|>\n<|im_start|>user\n" in cached
        assert "greets" not in cached
        assert_memory_is_its_tokens(c)
        _script(c, "Sure.")  # a reply without thinking stays as it is
        assert c.say("Say sure.") == "Sure." and c.history[-1].thinking == ""
        assert_memory_is_its_tokens(c)
    finally:
        c.close()


def test_a_reply_cut_while_thinking_says_nothing_and_keeps_nothing_of_it(models: Path) -> None:
    c = _conv(models, "qwen3")
    try:
        c.config.max_tokens = 6  # the cap falls inside the thinking
        _script(c, "<think>\nLet me think about this for a long while.")
        assert "".join(c.stream("Hello there.")) == ""
        assert c.history[-1].text == "" and c.history[-1].thinking.startswith("Let me")
        cached = c.llama.detokenize(c.llama.input_ids[: c.n_past].tolist(), special=True).decode()
        assert "<|im_start|>assistant\n<|im_end|>" in cached and "Let me" not in cached
        assert_memory_is_its_tokens(c)
    finally:
        c.close()


def test_thinking_switched_off_uses_the_templates_own_switch(models: Path) -> None:
    model = tiny_model("qwen3", models)
    c = make(model, n_ctx=512, max_tokens=8, thinking=False)
    try:
        assert c.format.thought_opener == "<think>\n\n</think>\n\n"  # Qwen3's enable_thinking=False
        turn = c.llama.detokenize(c._tokenize(c.format.user("Hi.")), special=True).decode()
        assert turn.endswith("<|im_start|>assistant\n<think>\n\n</think>\n\n")
        _script(c, "Hi to you.")
        assert c.say("Hi.") == "Hi to you."
        cached = c.llama.detokenize(c.llama.input_ids[: c.n_past].tolist(), special=True).decode()
        assert "<|im_start|>assistant\nHi to you.<|im_end|>" in cached  # the empty block taken out
        assert_memory_is_its_tokens(c)
    finally:
        c.close()
