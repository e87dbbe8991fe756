"""RemoteConversation: an OpenAI-compatible server as the language model; speech stays local.

What makes the local context good, done over `POST /v1/chat/completions` with `stream: true`
(the `openai` client; llama-server, vLLM, Ollama and llama-cpp-python's server all speak it):

- **Only the new turn costs work.** The head of every request is byte-identical within a
  conversation: the system prompt is rendered once, earlier replies are resent exactly as
  received (after a barge-in: as heard). Servers that cache prompts (llama-server's
  `cache_prompt`, vLLM's prefix caching, Ollama, llama-cpp-python) then evaluate only what
  follows the longest common prefix.
- **Trimmed on whole turns, half the space at once.** When the next request would not fit the
  server's context (asked from the server: llama-server `/props`, Ollama `/api/show`; learned
  from an "exceeds the context" answer or from a stream dropped before its first piece, which is
  how llama-cpp-python's server answers an over-long prompt: the context is then taken to be
  below that request's size, the request is trimmed and sent again (until nothing older is
  left), and the turn's `notice` says so; a drop no larger than a request the server answered
  is sent once more as it was: server_drops.py; else configured), the oldest whole exchanges are dropped
  until half of the space after the system prompt is free, so the prefix then stays the same for
  many turns (dropping one message per turn would change it every turn and defeat the cache).
- **The memory note** (memory.py): when a trim leaves exchanges out, the facts the user told
  are written after the system prompt in the same system message, frozen until the next trim
  (so the head stays byte-identical in between); a Forget rewrites it at once (one cache miss).
- **Barge-in stops generation at once**: `cancel` closes the HTTP stream between pieces; the
  servers stop generating when the client goes.
- **Per turn** (`last_stats`): prompt tokens, tokens served from the cache (llama-server's
  `timings.cache_n`, `usage.prompt_tokens_details.cached_tokens` where reported, else None),
  generated tokens, time to first token.
- **Failures** raise `BrainError` saying what happened and what to do. No retry once a piece was
  given out (it may be spoken already); a reply cut by a failure is kept, marked interrupted.

Token counts: the server's usage (exact per request); text not yet counted: 3 characters a token.

Threading: owned by one thread (the llm thread); `cancel` may be set from any thread.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import openai
from openai.types.chat import ChatCompletionMessageParam

from app.brain import remote_session
from app.brain.facts import Fact
from app.brain.gated_reply import GatedReply
from app.brain.ledger import Ledger
from app.brain.memory import note_text
from app.brain.persona import Persona
from app.brain.records import BrainError, Exchange, LoadResult, Message, RemoteConfig, TurnStats
from app.brain.retry_seeds import RetrySeeds
from app.brain.server_drops import refit, restore, snapshot
from app.brain.server_probe import first_model, server_context
from app.brain.server_replies import Reading, context_size_in, explain, read_reply, smaller_context_notice
from app.brain.session_files import REMOTE
from app.brain.shared_memory import SharedMemory, join, learn_from, remembered
from app.brain.turn_language import read_as
from app.brain.user_turn import TurnGate
from app.brain.words_reader import last_exchange, on_this_machine, open_reader, read_while_sending

log = logging.getLogger(__name__)
TURN_OVERHEAD = 8  # template tokens around one message (role markers, end of turn)


def estimate_tokens(text: str) -> int:
    return len(text) // 3 + TURN_OVERHEAD


class RemoteConversation:
    """See the module docstring. Raises BrainError at creation when the server is unusable."""

    estimate = staticmethod(estimate_tokens)

    def __init__(self, config: RemoteConfig, persona: Persona | None = None, words: Path | None = None):
        """`words`: a local model reading the words for the end of a turn (words_reader.py)."""
        self.config = config
        self.persona = persona or Persona()
        self.words, self.words_problem = open_reader(words, self.persona)
        self.reads_end_of_turn = self.words is not None  # a tentative turn's gate gets the words' P
        self.server_here = on_this_machine(config.url)  # the reader then leaves the server a core
        self.url = config.url.rstrip("/")
        self.client = openai.OpenAI(
            base_url=self.url,
            api_key=os.environ.get(config.api_key_env) or "none",
            max_retries=0,
            timeout=openai.Timeout(config.stall_timeout_s, connect=config.connect_timeout_s),
        )
        self.model = config.model  # named in messages: set before the first request
        try:
            self.model = self.model or first_model(self.client, self.url)
        except BrainError:
            raise
        except Exception as exc:
            raise self._explain(exc) from exc
        self.n_ctx, self.ctx_source = server_context(config, self.url, self.model)
        self.system_prompt = self.persona.render()
        self.system_tokens = estimate_tokens(self.system_prompt)
        self.kept: list[Exchange] = []  # the exchanges sent with each request, oldest first
        self.history: list[Message] = []
        self.note = ""  # the memory note in the request head (written at a trim)
        self.forgotten: set[str] = set()  # fact keys the user asked to forget
        self.shared: SharedMemory | None = None  # facts across conversations (shared_memory.py)
        self.last_stats: TurnStats | None = None
        self.turn_count = self.shifts = self.discarded = self.dropped_turns = 0
        self.n_past = self.system_tokens
        self.held = 0  # the largest prompt the server answered (server_drops.py)
        self.seeds = RetrySeeds()  # a Retry moves the next request's seed
        log.info("remote brain: %s at %s, context %d (%s)", self.model, self.url, self.n_ctx, self.ctx_source)

    # ----- the request ---------------------------------------------------------------------------
    def _explain(self, exc: Exception) -> BrainError:
        return explain(exc, self.url, self.model, self.config)

    def head(self) -> str:
        """The system message: the system prompt, then the memory note when there is one."""
        return f"{self.system_prompt}\n\n{self.note}" if self.note else self.system_prompt

    @property
    def head_tokens(self) -> int:
        return self.system_tokens + (estimate_tokens(self.note) + 2 if self.note else 0)

    def messages(self, user: str) -> list[ChatCompletionMessageParam]:
        """The request for a new user turn: the fixed head, the kept exchanges, the turn."""
        out: list[ChatCompletionMessageParam] = [{"role": "system", "content": self.head()}]
        for ex in self.kept:
            out += [{"role": "user", "content": ex.user}, {"role": "assistant", "content": ex.reply}]
        return [*out, {"role": "user", "content": user}]

    def _fit(self, user_tokens: int, force: bool = False) -> None:
        """Leave the oldest whole exchanges out when the turn and its reply would not fit, by the
        local context's policy (`Ledger.plan_discard`: whole turns, `discard_share` of the space
        at once). `force`: the server said the request is too long though the estimate fits."""
        if not self.kept:
            return
        note = note_text(self.remembered())  # written only if exchanges are left out now
        note_tokens = estimate_tokens(note) + 2 if note else 0
        ledger = Ledger(self.system_tokens + note_tokens, [ex.tokens for ex in self.kept] + [0])
        older = ledger.n_past - ledger.n_keep
        n_new = user_tokens + self.config.max_tokens
        if force:  # one token over: the policy frees its usual share
            n_new = max(n_new, self.n_ctx - ledger.n_past + 1)
        try:
            planned = min(ledger.plan_discard(n_new, self.n_ctx, self.config.discard_share), older)
        except ValueError:  # the turn alone is larger than the space: nothing older can stay
            planned = older
        if not planned:
            return
        n = ledger.apply_discard(planned)
        del self.kept[:n]
        self.note = note
        self.shifts += 1
        self.discarded, self.dropped_turns = self.discarded + planned, self.dropped_turns + n
        log.info("server context full: %d oldest exchanges (~%d tokens) left out", n, planned)

    def _open(self, text: str) -> Any:
        """Send the request (after fitting it); one retry when the server says it is too long."""
        self._fit(estimate_tokens(text))
        seed = self._seed()
        for attempt in range(2):
            try:
                return self.client.chat.completions.create(
                    model=self.model,
                    messages=self.messages(text),
                    stream=True,
                    stream_options={"include_usage": True},
                    max_tokens=self.config.max_tokens,
                    temperature=self.config.temperature,
                    top_p=self.config.top_p,
                    seed=seed,
                )
            except openai.BadRequestError as exc:
                size = context_size_in(exc)
                if attempt or size is None or not self.kept:
                    raise self._explain(exc) from exc
                self.n_ctx, self.ctx_source = size, "learned from the server"
                self._fit(estimate_tokens(text), force=True)
            except Exception as exc:
                raise self._explain(exc) from exc
        raise AssertionError("unreachable")

    def _seed(self) -> int | None:
        """The request's seed: the configured one, moved for a Retry (read once per request)."""
        variant = self.seeds.next_variant()
        seed = self.config.seed
        return seed if seed is None or not variant else seed + variant

    # ----- the brain interface (brain.py) ---------------------------------------------------------
    def stream(
        self,
        text: str,
        cancel: threading.Event | None = None,
        gate: TurnGate | None = None,
        language: str = "",
    ) -> Iterator[str]:
        """Send a user turn and yield the reply as it streams (brain.py has the contract). A
        tentative turn's gate gets the local reader's P for the words (None without one), read
        while the server works; pieces read before its decision are speculative (gated_reply.py)."""
        t0 = time.perf_counter()
        stats = TurnStats(turn=self.turn_count + 1, n_ctx=self.n_ctx)
        shifts0, discarded0 = self.shifts, self.discarded
        said, text = text, read_as(text, language, self.persona)  # the user's words; as sent
        response = read_while_sending(
            self.words, gate, text, self.history, lambda: self._open(text), self.server_here
        )
        older = sum(ex.tokens for ex in self.kept)  # after any trimming
        stats.t_prompt_ms = (time.perf_counter() - t0) * 1000

        def accept() -> None:
            self.turn_count += 1
            self.history.append(Message("user", said, name=self.persona.person, language=language))
            learn_from(self.shared, self.config.memory, said)

        turn = GatedReply(gate, stats, accept)
        pieces: list[str] = []
        read, failure = Reading(t0), None
        before, resent = snapshot(self), False
        try:
            while True:  # each request that drops before its first piece leaves out older turns
                try:
                    yield from turn.pieces(read_reply(response, cancel, stats, pieces, read, self.url))
                    break
                except Exception as exc:
                    stopped = bool(pieces) or (cancel is not None and cancel.is_set())
                    retry, how = (None, "") if stopped else refit(self, text, exc, resent)
                    if retry is None:
                        if not pieces and stats.notice:  # not a context limit after all: as it was
                            restore(self, before)
                            stats.notice = ""
                        older, stats.n_ctx = sum(ex.tokens for ex in self.kept), self.n_ctx
                        raise
                response, older, resent = retry, sum(ex.tokens for ex in self.kept), resent or how == "resent"
                if how == "trimmed":
                    stats.notice, stats.n_ctx = smaller_context_notice(self.n_ctx), self.n_ctx
        except Exception as exc:  # dropped or malformed mid-reply: keep what came, then say so
            read.reason, failure = "failed", self._explain(exc)
        finally:
            if turn.settle():
                stats.shifts, stats.discarded = self.shifts - shifts0, self.discarded - discarded0
                self._record(text, pieces, read, stats, older)
                if self.words is not None:  # the next turn's pauses read only their words
                    self.words.prepare(last_exchange(self.history))
            else:  # the reader's cache already holds what the next pause builds on
                log.info("turn withdrawn after %d speculative pieces (request closed)", len(pieces))
        if failure is not None and turn.decided:
            raise failure

    def _record(self, text: str, pieces: list[str], read: Reading, stats: TurnStats, older: int) -> None:
        """The exchange as it ended: in the history, the kept exchanges and `last_stats`."""
        reason, usage, cached = read.reason, read.usage, read.cached
        reply = "".join(pieces).strip()
        interrupted = reason in ("cancelled", "failed")
        self.history.append(Message("assistant", reply, interrupted=interrupted, name=self.persona.bot))
        prompt = usage.prompt_tokens if usage else self.head_tokens + older + estimate_tokens(text)
        generated = usage.completion_tokens if usage and usage.completion_tokens else len(pieces)
        if usage and not self.kept and self.turn_count == 1:  # calibrate the system prompt's cost
            self.system_tokens = max(1, prompt - estimate_tokens(text))
        cost = max(prompt - self.head_tokens - older, 1) + generated + 2
        self.kept.append(Exchange(text, reply, cost))
        self.n_past = self.head_tokens + older + cost
        stats.prompt_tokens, stats.gen_tokens, stats.cached_tokens = prompt, generated, cached
        if pieces or reason in ("eog", "max_tokens"):  # the server took this prompt
            self.held = max(self.held, prompt)
        stats.t_gen_ms = (time.perf_counter() - read.t0) * 1000 - stats.t_prompt_ms - stats.t_wait_ms
        stats.stop_reason, stats.n_past, stats.n_keep = reason, self.n_past, self.head_tokens
        self.last_stats = stats

    def record_exchange(self, user: str, reply: str, language: str = "") -> None:
        """A turn answered without the server (an action, app/actions): it joins the history
        and is sent with the next requests like any exchange."""
        text = read_as(user, language, self.persona)
        self._fit(estimate_tokens(text) + estimate_tokens(reply))
        self.turn_count += 1
        self.history.append(Message("user", user, name=self.persona.person, language=language))
        self.history.append(Message("assistant", reply, name=self.persona.bot))
        cost = estimate_tokens(text) + estimate_tokens(reply) + 2
        self.kept.append(Exchange(text, reply, cost))
        self.n_past += cost
        self.last_stats = None
        if self.words is not None:
            self.words.prepare(last_exchange(self.history))

    def amend_last_reply(self, text: str, unspoken: str = "", interrupted: bool = True) -> bool:
        """The newest reply becomes `text` (what was heard, or another version of it): it is
        resent so from the next turn."""
        if not self.kept or not self.history or self.history[-1].role != "assistant":
            return False
        ex, before = self.kept[-1], self.kept[-1].tokens
        ex.tokens = max(1, before + estimate_tokens(text) - estimate_tokens(ex.reply))  # until counted
        ex.reply = text
        self.n_past += ex.tokens - before
        last = self.history[-1]
        last.text, last.interrupted, last.unspoken = text, interrupted, unspoken
        return True

    def retract_last_turn(self, reseed: bool = True) -> str | None:
        """Retry: drop the newest exchange (it is not sent again); returns its user text. The
        next request goes with another seed unless not `reseed`."""
        if len(self.history) < 2 or self.history[-1].role != "assistant" or not self.kept:
            return None
        gone = self.kept.pop()
        self.history.pop()
        self.history.pop()
        self.n_past -= gone.tokens
        self.turn_count -= 1
        if reseed:
            self.seeds.retried()
        return gone.user

    def context_stats(self) -> dict[str, Any]:
        cached = self.last_stats.cached_tokens if self.last_stats else None
        return {
            "n_past": self.n_past,
            "n_ctx": self.n_ctx,
            "n_keep": self.head_tokens,
            "shifts": self.shifts,
            "discarded": self.discarded,
            "dropped_turns": self.dropped_turns,
            "cached_tokens": -1 if cached is None else cached,
            "server": self.url,
            "model": self.model,
        }

    def change_persona(self, persona: Persona) -> None:
        """Go on under `persona` from the next request (its head changes once: a cache miss)."""
        self.persona, self.system_prompt = persona, persona.render()
        if self.words is not None:
            self.words.change_persona(persona)

    def remembered(self) -> list[Fact]:
        """The facts a memory note holds (memory.py; none with memory off)."""
        return remembered(self.config.memory, self.history, self.forgotten, self.shared)

    def share_memory(self, shared: SharedMemory | None) -> None:
        """Read and add to the memory shared across conversations (None: this one's alone); this
        conversation's facts join it now; one with no note yet sends one from its next request."""
        self.shared = shared
        if shared is not None:
            join(shared, self.config.memory, self.history, self.forgotten)
        if shared is not None and not self.note:
            self.note = note_text(self.remembered()) if shared.facts else ""

    def forget(self, key: str) -> None:
        """Fact `key` leaves the memory note: a note that holds it is rewritten now."""
        self.forgotten.add(key)
        if self.shared is not None:
            self.shared.forget(key)
        if self.note:
            self.note = note_text(self.remembered())

    def reset(self) -> None:
        """A new conversation (its system prompt is rendered anew)."""
        self.kept.clear()
        self.history.clear()
        self.note = ""
        self.forgotten.clear()
        if self.shared is not None:  # another conversation may have added to it
            self.shared.reload()
            self.share_memory(self.shared)
        self.system_prompt = self.persona.render()
        self.turn_count = self.shifts = self.discarded = self.dropped_turns = 0
        self.n_past = self.system_tokens
        self.seeds.reset()

    def close(self) -> None:
        self.client.close()
        if self.words is not None:
            self.words.close()

    # ----- sessions (remote_session.py) ----------------------------------------------------------
    def save_session(self, directory: Path) -> None:
        """Atomically write the conversation (its exact request head included) to `directory`."""
        remote_session.save(self, directory / REMOTE)

    def load_session(self, directory: Path) -> LoadResult:
        """Resume: the same request head as before (the server's cache may still hold it). With
        another persona the conversation goes on under the new system prompt."""
        return remote_session.load(self, directory / REMOTE)
