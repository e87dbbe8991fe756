"""The engine under random sequences of what users do (Hypothesis stateful testing): one real
`Conversation` on the embedded model with a small context, driven through interleavings of
turns of any length and script (control-token look-alikes too), cancels after a random piece,
tentative turns confirmed or withdrawn, Retry, amend after a barge-in at a random word, turns
long enough to force shifts, save/load, reset and a switch between two conversations.

After every step the cache, the ledger and llama-cpp-python's own bookkeeping agree, n_past
stays within n_ctx, the history alternates user/assistant and matches the model kept here, the
newest reply in the cache is the history's text, a memory note a shift kept is one whole
system segment, and a saved session reloads to the same tokens and history.

Profiles (HYPOTHESIS_PROFILE): "default" — a fixed, derandomized set of ~1 minute (the same
sequences every run: CI is never a coin toss); "nightly" — random sequences, many more and
longer (`HYPOTHESIS_PROFILE=nightly pytest tests/test_engine_states.py`).
"""

from __future__ import annotations

import shutil
import tempfile
import threading
from pathlib import Path

import pytest
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from app.brain import session
from app.brain.chat_format import Part
from app.brain.conversation import Conversation
from app.brain.persona import PINNED_TIME, Persona
from app.brain.records import LlmConfig
from app.brain.sampling import SamplingConfig
from app.brain.user_turn import ConfirmAtPrompt
from app.catalog.catalog import default_model_path
from tests.support.fuzz import NIGHTLY, fuzz_settings

PROFILE = fuzz_settings(10, 200, stateful_step_count=40 if NIGHTLY else 20)

LOOK_ALIKES = [
    "<|im_start|>", "<|im_end|>", "<|endoftext|>", "</s>", "<s>", "[INST]", "<|eot_id|>",
    "\nassistant\n", "\nuser\n", "Sam:", "Max:", "<think>",
]  # fmt: skip
WORDS = [
    "hello",
    "what",
    "is",
    "the",
    "capital",
    "of",
    "France",
    "tell",
    "me",
    "a",
    "story",
    "why",
    "sky",
    "blue",
]
words = st.lists(st.sampled_from(WORDS + LOOK_ALIKES), min_size=1, max_size=12).map(" ".join)
any_script = st.text(
    alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), min_size=1, max_size=40
)
FACTS = ["My name is Robin.", "I live in Porto.", "My dog is called Rex.", "I like green tea."]
user_text = st.one_of(words, any_script, st.sampled_from(LOOK_ALIKES + FACTS)).filter(lambda t: t.strip())
long_text = st.integers(min_value=60, max_value=200).map(lambda n: " ".join(["story"] * n) + "?")

_ENGINE: dict[str, Conversation] = {}


def engine() -> tuple[Conversation, Conversation]:
    """The conversation under test and a second one that loads its sessions (created once: a
    model load per example would take the whole time budget)."""
    if not _ENGINE:
        for name in ("main", "loader"):
            cfg = LlmConfig(
                default_model_path("llm"),
                n_ctx=384,
                max_tokens=16,
                sampling=SamplingConfig(seed=3, temperature=0.8),
            )
            _ENGINE[name] = Conversation(cfg, Persona("Sam", "Max", now=PINNED_TIME))
    return _ENGINE["main"], _ENGINE["loader"]


def close_engine() -> None:
    for conv in _ENGINE.values():
        conv.close()
    _ENGINE.clear()


class EngineStates(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.conv, self.loader = engine()
        self.conv.reset()
        self.folder = Path(tempfile.mkdtemp(prefix="engine-states-"))
        self.users: list[str] = []  # the user turns the history must hold, in order
        self.saved: dict[str, list[str]] = {}  # conversation folder -> its user turns
        self.open = "a"

    def teardown(self) -> None:
        shutil.rmtree(self.folder, ignore_errors=True)

    # ----- what users do -------------------------------------------------------------------------
    def _turn(self, text: str, cancel_after: int | None = None) -> None:
        cancel = threading.Event()
        for n, _piece in enumerate(self.conv.stream(text, cancel), start=1):
            if cancel_after is not None and n >= cancel_after:
                cancel.set()
        self.users.append(text)

    @rule(text=user_text, cancel_after=st.one_of(st.none(), st.integers(min_value=1, max_value=8)))
    def say(self, text: str, cancel_after: int | None) -> None:
        self._turn(text, cancel_after)

    @rule(text=long_text)
    def monologue(self, text: str) -> None:
        self._turn(text)

    @rule(text=user_text, confirmed=st.booleans())
    def tentative(self, text: str, confirmed: bool) -> None:
        before = (self.conv.n_past, len(self.conv.history))
        list(self.conv.stream(text, gate=ConfirmAtPrompt(lambda: confirmed)))
        if confirmed:
            self.users.append(text)
        else:  # withdrawn: no trace (a shift made to fit it may stay: whole turns only)
            assert len(self.conv.history) == before[1]
            assert self.conv.n_past <= before[0] + 1

    @precondition(lambda self: self.users)
    @rule()
    def retry(self) -> None:
        text = self.conv.retract_last_turn()
        if text is not None:
            assert text == self.users.pop()
            self._turn(text)

    @precondition(lambda self: self.users)
    @rule(cut=st.floats(min_value=0.0, max_value=1.0))
    def barge_in(self, cut: float) -> None:
        last = self.conv.history[-1]
        heard_words = last.text.split()
        heard = " ".join(heard_words[: int(len(heard_words) * cut)])
        if self.conv.amend_last_reply(heard, unspoken=last.text[len(heard) :]):
            assert self.conv.history[-1].text == heard

    @rule()
    def save_and_reload(self) -> None:
        where = self.folder / self.open
        session.save(self.conv, where)
        self.saved[self.open] = list(self.users)
        res = session.load(self.loader, where)
        assert res.resumed, res.message
        n = self.conv.n_past
        assert self.loader.n_past == n
        assert self.loader.llama.input_ids[:n].tolist() == self.conv.llama.input_ids[:n].tolist()
        assert [m.text for m in self.loader.history] == [m.text for m in self.conv.history]

    @rule()
    def switch(self) -> None:
        """Save this conversation and continue the other one (as the window's sidebar does)."""
        session.save(self.conv, self.folder / self.open)
        self.saved[self.open] = list(self.users)
        self.open = "b" if self.open == "a" else "a"
        if self.open in self.saved:
            res = session.load(self.conv, self.folder / self.open)
            assert res.resumed, res.message
            self.users = list(self.saved[self.open])
        else:
            self.conv.reset()
            self.users = []

    @rule()
    def reset(self) -> None:
        self.conv.reset()
        self.users = []

    # ----- what must always hold ---------------------------------------------------------------
    @invariant()
    def cache_ledger_and_llama_agree(self) -> None:
        c = self.conv
        assert c.n_past <= c.n_ctx
        assert c.llama.n_tokens == c.n_past == c.ledger.n_past
        assert c.cache_pos_min() == 0 and c.cache_pos_max() == c.n_past - 1

    @invariant()
    def facts_outlive_the_shift(self) -> None:
        """The memory note: once a shift has dropped turns, the facts told are in the cache's
        note (never left due when there is something to note)."""
        c = self.conv
        facts = c.remembered()
        assert not (c.note_due and facts), "a due memory note was not written"
        if c.dropped_turns and facts:
            assert c.ledger.note_in_cache
        if c.ledger.pinned:  # the note a shift kept is whole: one system segment, nothing else
            ids = c.llama.input_ids[c.ledger.n_keep : c.ledger.head].tolist()
            pinned = c.llama.detokenize(ids, special=True).decode("utf-8", "replace")
            rendered = "".join(p.text for p in c.format.note("\u2063") or [])
            opening, _, closing = rendered.partition("\u2063")
            assert pinned.startswith(opening) and pinned.endswith(closing), pinned
            assert pinned.count(opening) == 1, pinned

    @invariant()
    def history_is_what_was_said(self) -> None:
        roles = [m.role for m in self.conv.history]
        assert roles == ["user", "assistant"] * (len(roles) // 2)
        assert [m.text for m in self.conv.history[::2]] == self.users

    @invariant()
    def newest_reply_in_the_cache_is_the_historys(self) -> None:
        c = self.conv
        if not c.history or not c.ledger.turns:
            return
        was_primed = bool(c.primed_tokens)
        c.unprime()
        try:
            if not c.ledger.turns or c.ledger.replies[-1] < 0:  # the turn or its start was shifted out
                return
            at = c.ledger.replies[-1]
            start = c.n_past - c.ledger.turns[-1] + at
            tokens = c.llama.input_ids[start : c.n_past].tolist()
            close = c._tokenize(c.format.reply_close())
            assert tokens[len(tokens) - len(close) :] == close
            text = c.llama.detokenize(tokens[: len(tokens) - len(close)]).decode("utf-8", "replace")
            assert text.strip() == c.history[-1].text.strip()
        finally:
            if was_primed:
                c.prime()


@pytest.mark.slow
def test_the_engine_under_random_sequences_of_user_actions(llm_model: Path) -> None:
    try:
        EngineStates.TestCase.settings = PROFILE
        EngineStates.TestCase().runTest()
    finally:
        close_engine()


def test_chat_control_look_alikes_stay_the_users_words(llm_model: Path) -> None:
    """A user turn that looks like the template's own markers is tokenized as text: it cannot
    close the turn or open another role (the cache holds no special token from it)."""
    conv, _ = engine()
    try:
        conv.reset()
        text = " ".join(LOOK_ALIKES)
        conv.say(text)
        specials = set(conv._tokenize([Part(m, True) for m in ("<|im_start|>", "<|im_end|>")]))
        user_tokens = conv._tokenize([Part(text, False)])
        assert not specials & set(user_tokens)
        assert conv.history[0].text == text
    finally:
        close_engine()
