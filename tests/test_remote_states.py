"""The remote brain under random sequences of what users and servers do (Hypothesis stateful
testing, #36 point 1): one `RemoteConversation` with a small context on the scripted server
(tests/support/servers.py FaultServer), driven through turns of any length and script, replies
cancelled after a random piece, servers that fail before a reply (HTTP errors, an "exceeds
the context" answer, a stream dropped before its first piece) and during one (a dropped
connection, a malformed stream), Retry, amend after a barge-in, save/load and reset.

After every step: the history alternates user/assistant and is the model kept here (each reply
exactly the pieces that were given out); the exchanges the next request resends are the newest
of the history, in order; the request is the system prompt (and the memory note), those
exchanges and the new turn; every fact told in an exchange left out is in the note;
a saved session reloads to the same request and history. Between two requests with nothing
trimmed, amended or retried in between, the second starts with the first and its reply
(byte-identical: what a server's prompt cache needs).

Profiles as in tests/support/fuzz.py (HYPOTHESIS_PROFILE=nightly for the long run).
"""

from __future__ import annotations

import shutil
import tempfile
import threading
from pathlib import Path

import pytest
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule

from app.brain.memory import known_facts
from app.brain.persona import PINNED_TIME, Persona
from app.brain.records import BrainError, Message, RemoteConfig
from app.brain.remote import RemoteConversation
from tests.support.fuzz import NIGHTLY, fuzz_settings
from tests.support.servers import FaultServer
from tests.test_engine_states import long_text, user_text

PIECES = ["Hello", " there", ",", " friend", "."]  # what the scripted server streams
PERSONA = Persona("Sam", "Max", now=PINNED_TIME)
FAILS_BEFORE = ("status:500", "status:503", "status:429")  # nothing reaches the conversation
_SERVER: list[FaultServer] = []


def server() -> FaultServer:
    if not _SERVER:
        _SERVER.append(FaultServer())
    return _SERVER[0]


def brain() -> RemoteConversation:
    return RemoteConversation(RemoteConfig(server().url, n_ctx=420, max_tokens=24, seed=1), PERSONA)


class RemoteStates(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.server = server()
        self.server.mode = "ok"
        self.brain = brain()
        self.folder = Path(tempfile.mkdtemp(prefix="remote-states-"))
        self.pairs: list[tuple[str, str]] = []  # what the history must hold
        self.stable = False  # the next request must extend the previous one

    def teardown(self) -> None:
        self.brain.close()
        shutil.rmtree(self.folder, ignore_errors=True)

    def _turn(self, text: str, mode: str = "ok", cancel_after: int | None = None) -> str:
        """One turn; returns the reply as given out (the pieces the consumer saw)."""
        self.server.mode = mode
        shifts, sent, discarded = self.brain.shifts, len(self.server.bodies), self.brain.discarded
        kept_before = [ex.tokens for ex in self.brain.kept]
        cancel, got = threading.Event(), []
        try:
            for piece in self.brain.stream(text, cancel):
                got.append(piece)
                if cancel_after is not None and len(got) >= cancel_after:
                    cancel.set()
        except BrainError:
            pass
        finally:
            self.server.mode = "ok"
        reply = "".join(got).strip()
        reached = len(self.brain.history) == 2 * len(self.pairs) + 2  # the turn is in the conversation
        if reached:
            self.pairs.append((text, reply))
        requests = self.server.bodies[sent:]
        if self.stable and reached and mode == "ok" and self.brain.shifts == shifts and requests:
            before, after = self.server.bodies[sent - 1]["messages"], requests[0]["messages"]
            assert after[: len(before)] == before, "the request head changed with nothing trimmed"
            assert after[len(before)] == {"role": "assistant", "content": self.pairs[-2][1]}
        if reached and mode == "ok" and self.brain.shifts == shifts + 1:
            self._left_out_only_what_was_needed(kept_before, self.brain.discarded - discarded)
        self.stable = reached and mode == "ok" and bool(requests)
        return reply

    def _left_out_only_what_was_needed(self, kept_before: list[int], planned: int) -> None:
        """A trim leaves out the fewest oldest whole exchanges that free the planned tokens."""
        dropped = len(kept_before) + 1 - len(self.brain.kept)
        assert sum(kept_before[:dropped]) >= planned > sum(kept_before[: dropped - 1]), (kept_before, planned)

    # ----- what users and servers do ---------------------------------------------------------------
    @rule(text=user_text, cancel_after=st.one_of(st.none(), st.integers(min_value=1, max_value=4)))
    def say(self, text: str, cancel_after: int | None) -> None:
        reply = self._turn(text, cancel_after=cancel_after)
        assert reply == "".join(PIECES[: cancel_after or len(PIECES)]).strip()  # nothing after a cancel

    @rule(text=long_text)
    def monologue(self, text: str) -> None:
        self._turn(text)

    @rule(text=user_text, mode=st.sampled_from(FAILS_BEFORE))
    def server_fails_before_the_reply(self, text: str, mode: str) -> None:
        before = len(self.brain.history)
        self._turn(text, mode)
        assert len(self.brain.history) == before

    @rule(text=user_text, mode=st.sampled_from(["drop", "malformed", "empty:1", "empty:2", "context:300"]))
    def server_fails_on_the_way(self, text: str, mode: str) -> None:
        self._turn(text, mode)
        self.stable = False

    @rule(words=st.integers(min_value=0, max_value=3))
    def barge_in_amend(self, words: int) -> None:
        if not self.pairs:
            return
        user, reply = self.pairs[-1]
        heard = " ".join(reply.split()[:words])
        if self.brain.amend_last_reply(heard, reply[len(heard) :]):
            self.pairs[-1] = (user, heard)
        self.stable = False

    @rule()
    def retry(self) -> None:
        if self.brain.retract_last_turn() is not None:
            self.pairs.pop()
        self.stable = False

    @rule()
    def save_and_load(self) -> None:
        self.brain.save_session(self.folder)
        other = brain()
        try:
            result = other.load_session(self.folder)
            assert result.resumed, result.message
            assert other.messages("next?") == self.brain.messages("next?")
            assert [(m.role, m.text) for m in other.history] == [(m.role, m.text) for m in self.brain.history]
        finally:
            other.close()

    @rule()
    def reset(self) -> None:
        self.brain.reset()
        self.pairs.clear()
        self.stable = False

    # ----- what must always hold -------------------------------------------------------------------
    @invariant()
    def history_is_the_model(self) -> None:
        h = self.brain.history
        assert [m.role for m in h] == ["user", "assistant"] * (len(h) // 2) and len(h) % 2 == 0
        assert [(u.text, a.text) for u, a in zip(h[::2], h[1::2], strict=True)] == self.pairs

    @invariant()
    def kept_are_the_newest_exchanges(self) -> None:
        kept = [(ex.user, ex.reply) for ex in self.brain.kept]
        assert kept == self.pairs[len(self.pairs) - len(kept) :]
        assert all(ex.tokens > 0 for ex in self.brain.kept)

    @invariant()
    def every_exchange_is_kept_or_counted_as_left_out(self) -> None:
        assert len(self.brain.kept) + self.brain.dropped_turns == len(self.pairs)

    @invariant()
    def facts_left_out_are_in_the_note(self) -> None:
        """A fact told in an exchange that is no longer sent is in the memory note, unless a
        kept exchange says something newer of the same kind (the model sees that)."""
        n_left_out = len(self.pairs) - len(self.brain.kept)
        left_out = [Message("user", u) for u, _a in self.pairs[:n_left_out]]
        kept_keys = {f.key for f in known_facts([Message("user", ex.user) for ex in self.brain.kept])}
        for fact in known_facts(left_out):
            assert fact.sentence in self.brain.note or fact.key in kept_keys, (fact, self.brain.note)

    @invariant()
    def the_request_is_head_kept_and_turn(self) -> None:
        msgs = self.brain.messages("probe")
        assert msgs[0] == {"role": "system", "content": self.brain.head()}
        assert self.brain.head().startswith(self.brain.system_prompt)
        assert msgs[-1] == {"role": "user", "content": "probe"}
        flat = [(m["role"], m["content"]) for m in msgs[1:-1]]
        assert flat == [x for ex in self.brain.kept for x in (("user", ex.user), ("assistant", ex.reply))]


@pytest.fixture(scope="module", autouse=True)
def _server():
    yield
    for s in _SERVER:
        s.stop()
    _SERVER.clear()


RemoteStates.TestCase.settings = fuzz_settings(25, 400, stateful_step_count=40 if NIGHTLY else 25)
test_remote_brain_under_random_operation_sequences = RemoteStates.TestCase
