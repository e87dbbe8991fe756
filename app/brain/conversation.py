"""Conversation: the chat on one persistent llama context (kv_context.py: cache, ledger, shift;
memory_context.py: the memory and recall notes).

Each user turn appends only its own tokens (its chat template segment); the reply streams out
of llama.cpp's sampler chain, its opening forced when known (repeat_request, name_question).

Sampling (`sampling.py`): the chain first reads the model's own earlier replies still in the
context, so it can stop the model from copying them (the small default model otherwise falls
into one reply template within ~20 turns).

Cancellation policy (barge-in): `stream()` checks `cancel` between tokens. A cancelled or capped
reply is KEPT: its partial text is committed as the assistant turn and closed with the template's
end-of-turn tokens, so the model remembers what it had said when it was interrupted. When the
reply was being spoken, `amend_last_reply` then cuts it to what the listener heard (the
generation runs ahead of the voice).

Memory (memory.py): after a shift has dropped turns, the next turn opens with a note of the
facts the user told (from the history; `forgotten` keys left out), so they outlive the turns
that said them; `LlmConfig.memory` switches it off.

Threading: a Conversation is owned by ONE thread (llama contexts are not thread-safe). All
methods block on llama.cpp. `cancel` may be set from any thread.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass

import llama_cpp
import numpy as np

from app.brain.chat_format import Part
from app.brain.memory_context import MemoryContext
from app.brain.name_question import own_name_reply
from app.brain.persona import Persona
from app.brain.records import LlmConfig, Message, TurnStats
from app.brain.repeat_request import words_to_repeat
from app.brain.reply_text import ReplyText
from app.brain.retry_seeds import RetrySeeds
from app.brain.sampling import Sampler
from app.brain.shared_memory import learn_from
from app.brain.thinking import ThoughtSplitter
from app.brain.turn_language import read_as
from app.brain.user_turn import TurnGate, UserTurn, ask, build_user_turn, next_token_probs

log = logging.getLogger(__name__)


@dataclass
class ReplyRun:
    """One reply being generated: what `stream` carries from token to token (owner thread)."""

    text: str  # the user's words
    user: Message  # their history message, appended once the turn is decided
    gate: TurnGate | None
    stats: TurnStats
    reply: ReplyText
    thought: ThoughtSplitter | None
    forced: list[int]  # the opening still to force, token by token
    reply_at: int  # where the reply starts in its turn
    decided: bool  # the turn is certain (no gate, or the gate said yes)
    t0: float
    t_prompt: float
    shifts: tuple[int, int, int]  # shifts and discarded before the turn; shifts after its prompt
    prompt_tokens: int
    answer_at: int | None = None  # where the answer starts after thinking
    pending: int | None = None  # the last sampled token, evaluated before the next
    reason: str = "max_tokens"  # why the reply stopped (so far: it has not)
    withdrawn: bool = False


class Conversation(MemoryContext):
    """A persistent chat with a GGUF model. See the module docstring for the contracts."""

    reads_end_of_turn = True  # stream() gives a tentative turn's gate its end-of-turn probability

    def __init__(
        self, config: LlmConfig, persona: Persona | None = None, llama: llama_cpp.Llama | None = None
    ):
        super().__init__(config, persona, llama)
        self._sampler = Sampler(config.sampling, self._vocab, self.llama.n_vocab(), self.n_ctx)
        self._opener = self._tokenize([Part(self.format.thought_opener, True)])  # thinking.py
        self.turn_count = 0
        self.last_stats: TurnStats | None = None
        self.seeds = RetrySeeds()  # a Retry moves the next reply's seed
        self.restart_context()
        self.prime()

    # ----- turns -----------------------------------------------------------------------------
    def _user_turn(self, text: str) -> UserTurn:
        """The user segment; a monologue too large for the context loses its head."""
        limit = int(self.config.max_user_share * (self.n_ctx - self.ledger.n_keep))
        return build_user_turn(text, self.format, self.llama, limit)

    def _eval_user(self, todo: list[int], turn: UserTurn, after: int, read: bool) -> float | None:
        """Evaluate the rest of the user turn; on the way, read the model's end-of-turn
        probability right after the user's last word (user_turn.py), which the last `after` of
        `todo` follow (punctuation, the template's closing, a recall note). Same tokens, same
        cache: the evaluation is only split at that point. None when not `read` or there is no
        such point."""
        if not read or turn.end_token is None or len(todo) <= after:
            self._eval(todo)
            return None
        self._eval(todo[: len(todo) - after])
        prob = self._end_of_turn_here(turn.end_token)
        self._eval(todo[len(todo) - after :])
        return prob

    def stream(
        self,
        text: str,
        cancel: threading.Event | None = None,
        gate: TurnGate | None = None,
        language: str = "",
    ) -> Iterator[str]:
        """Append a user turn and yield the reply as text pieces while it is generated.

        Stops on end-of-generation tokens, the format's stop strings, `max_tokens`, or `cancel`.
        The turn ends in `_end_reply` however the iteration ends: finished, or closed early by
        the caller (a closed generator runs it too): the reply is committed as far as it got and
        closed (see the module docstring), and `last_stats` holds the turn's counters.
        `gate` (tentative turns, user_turn.TurnGate): told the end-of-turn probability once the
        user turn is evaluated, then asked before each token until it decides; the pieces of
        an undecided turn are speculative. False takes the turn back: the cache, ledger and
        history are as before the call (turns a shift discarded to make room stay discarded).
        `language`: the whisper code the turn was heard in ("" unknown); turn_language.py.
        """
        run = self._begin_reply(text, gate, language)
        tail = ""
        try:
            for _ in range(self.config.max_tokens):
                piece = self._next_piece(run, cancel)
                if piece:
                    yield piece
                if run.reason != "max_tokens":
                    break
        finally:
            tail = self._end_reply(run)
        if run.decided and tail:
            yield tail

    def _begin_reply(self, text: str, gate: TurnGate | None, language: str) -> ReplyRun:
        """Evaluate the user turn (with its notes) and set up the reply's generation."""
        t0 = time.perf_counter()
        self._pick_threads()
        self.turn_count += 1
        stats = TurnStats(turn=self.turn_count, n_ctx=self.n_ctx)
        shifts0, discarded0 = self.shifts, self.discarded
        turn = self._user_turn(read_as(text, language, self.persona))
        stats.user_trimmed = turn.cut
        recall = self._recall_note(text)
        at = self._reply_at(turn.tokens)
        todo = self._open_turn(turn.tokens, recall, at)
        after = len(turn.tokens) - turn.words_end + (len(recall) if at else 0)
        stats.end_of_turn = self._eval_user(todo, turn, after, read=gate is not None)
        stats.prompt_tokens = len(turn.tokens)
        stats.primed_tokens = max(0, len(turn.tokens) + len(recall) - len(todo))
        t_prompt = time.perf_counter()
        stats.t_prompt_ms = (t_prompt - t0) * 1000
        user = Message("user", text, name=self.persona.person, language=language)
        if gate is None:
            self.history.append(user)
        else:
            gate.evaluated(stats.end_of_turn)
        own = self.sampler_history() if self.aids.own_replies_dry else []
        self._sampler.start_turn(own, self.seeds.next_variant())
        said = words_to_repeat(text) or own_name_reply(text, self.persona.bot)  # the opening, if known
        said = said if self.aids.forced_openings and not self.format.thinking_opened else None
        self.ledger.mark_reply()
        fmt = self.format
        return ReplyRun(
            text=text,
            user=user,
            gate=gate,
            stats=stats,
            reply=ReplyText(fmt.stop_strings),
            thought=ThoughtSplitter(fmt.thinking_opened, fmt.marks) if fmt.thinks else None,
            forced=self._tokenize([Part(said, False)]) if said else [],
            reply_at=self.ledger.replies[-1],
            decided=gate is None,
            t0=t0,
            t_prompt=t_prompt,
            shifts=(shifts0, discarded0, self.shifts),
            prompt_tokens=len(turn.tokens),
        )

    def _next_piece(self, run: ReplyRun, cancel: threading.Event | None) -> str:
        """One token of the reply: the gate asked while undecided, `cancel` checked, the token
        forced or sampled; its text (may be ""). Sets `run.reason` when the reply stops."""
        stats = run.stats
        if run.pending is not None:
            self._eval([run.pending])
            run.reply.mark_token(self.n_past)
            run.pending = None
        if not run.decided:
            go = ask(run.gate, False, stats)
            if go is False:
                run.withdrawn, run.reason = True, "withdrawn"
                return ""
            if go:
                run.decided = True
                self.history.append(run.user)
        if cancel is not None and cancel.is_set():
            run.reason = "cancelled"
            return ""
        if run.forced:
            tok = run.forced.pop(0)
            self._sampler.accept(tok)
        else:
            tok = self._sampler.sample(self.llama.ctx)
        stats.gen_tokens += 1
        if llama_cpp.llama_vocab_is_eog(self._vocab, tok):
            run.reason = "eog"
            return ""
        run.pending = tok
        piece = run.reply.feed(self.llama.detokenize([tok]))
        if run.thought is not None:
            piece = run.thought.feed(piece)
            if piece and run.answer_at is None:
                run.answer_at = self.ledger.turns[-1]
        if run.reply.stopped:
            run.reason = "stop_string"
        if piece and not stats.t_first_token_ms:
            stats.t_first_token_ms = (time.perf_counter() - run.t0) * 1000
        return piece

    def _end_reply(self, run: ReplyRun) -> str:
        """However the reply ended: a tentative turn still undecided is decided now; a withdrawn
        one leaves nothing behind; a decided one is committed (the last token evaluated, the
        text after a stop string and past thinking taken out, the turn closed) and recorded.
        The text still to yield ("" when withdrawn)."""
        if not run.decided and not run.withdrawn and ask(run.gate, True, run.stats):
            run.decided = True
            self.history.append(run.user)
        if not run.decided:
            self._drop_open_turn()
            self.turn_count -= 1
            log.info(
                "turn withdrawn (%d prompt, %d reply tokens taken back)",
                run.prompt_tokens,
                run.stats.gen_tokens,
            )
            self.prime()
            return ""
        reply, thought, stats = run.reply, run.thought, run.stats
        if run.pending is not None:
            self._eval([run.pending])
            reply.mark_token(self.n_past)
        tail = reply.finish()
        if reply.stopped:
            self._rollback(reply.tokens_after_stop(self.n_past))
        if thought is not None:
            tail = thought.feed(tail) + thought.finish()
            self._drop_thought(run.reply_at, run.answer_at)
        if self._close_tokens:
            self._eval(self._close_tokens)
        stats.t_gen_ms = (time.perf_counter() - run.t_prompt) * 1000 - stats.t_wait_ms
        self.prime()  # the next turn's head (its time is in no turn's stats; shifts are)
        stats.stop_reason = run.reason
        said = thought.answer.strip() if thought is not None else reply.text
        self.history.append(
            Message("assistant", said, interrupted=run.reason == "cancelled", name=self.persona.bot)
        )
        self.history[-1].thinking = stats.thinking = thought.thought.strip() if thought else ""
        shifts0, discarded0, shifts_after_prompt = run.shifts
        stats.n_past, stats.n_keep = self.n_past, self.ledger.n_keep
        stats.shifts, stats.discarded = self.shifts - shifts0, self.discarded - discarded0
        stats.shifts_in_reply = self.shifts - shifts_after_prompt
        self.last_stats = stats
        learn_from(self.shared, self.config.memory, run.text)
        return tail

    def _drop_thought(self, reply_at: int, answer_at: int | None) -> None:
        """After a reply, before its closing: take its thinking (and the prompt's opener) out of
        the cache when the template leaves past thinking out (jinja_format.py). Not when a shift
        cut into this turn during the reply (the offsets moved: the thought stays)."""
        if not self.format.drops_past_thinking or self.ledger.replies[-1] != reply_at or reply_at < 0:
            return
        start = reply_at - len(self._opener)
        self._cut_in_turn(max(0, start), self.ledger.turns[-1] if answer_at is None else answer_at)

    def amend_last_reply(self, text: str, unspoken: str = "", interrupted: bool = True) -> bool:
        """Make the newest reply `text` (a barge-in cut it: `text` is what was heard; or another
        version of it, chosen after a Retry: not `interrupted`): the cache keeps the reply's
        tokens the new text shares, evaluates the rest and the end-of-turn tokens; the history's
        message becomes `text`, with `unspoken` kept apart for display. False (nothing changed)
        when the newest turn is not a finished reply."""
        if not self.history or self.history[-1].role != "assistant" or not self.ledger.turns:
            return False
        self.unprime()
        at = self.ledger.replies[-1]
        if at < 0:  # the reply's start was discarded by a shift: only the text can change
            self.prime()
            return False
        start = self.n_past - self.ledger.turns[-1] + at
        old = self.llama.input_ids[start : self.n_past].tolist()
        new = self._tokenize([Part(text, False)]) + self._close_tokens
        same = 0
        while same < min(len(old), len(new)) and old[same] == new[same]:
            same += 1
        self._rollback(len(old) - same)
        self._eval(new[same:])
        last = self.history[-1]  # changed in place: front ends may hold it
        last.text, last.interrupted, last.unspoken = text, interrupted, unspoken
        self.prime()
        return True

    def retract_last_turn(self, reseed: bool = True) -> str | None:
        """Retry: take the newest exchange out of the context (its whole turn, so the cache and
        ledger are exactly as before it) and the history; returns its user text, which the next
        `stream` answers again with another seed (unless not `reseed`: the user went on talking
        and the words come back longer, continuation.py). None (nothing changed) when the newest
        turn is not a finished reply."""
        if len(self.history) < 2 or self.history[-1].role != "assistant" or self.history[-2].role != "user":
            return None
        self.unprime()
        if not self.ledger.turns:  # the exchange was shifted out (a turn larger than the context)
            self.prime()
            return None
        self._drop_open_turn()
        self.history.pop()
        user = self.history.pop()
        self.turn_count -= 1
        if reseed:
            self.seeds.retried()
        self.prime()
        return user.text

    def _turn_tokens(self, user: str, reply: str) -> tuple[list[int], int]:
        """A past exchange's tokens, and how many of them are the user segment."""
        head = self._tokenize(self.format.user(user))
        return head + self._tokenize([Part(reply, False)]) + self._close_tokens, len(head)

    def turn_cost(self, user: str, reply: str) -> int:
        """Tokens a past exchange takes when replayed."""
        return len(self._turn_tokens(user, reply)[0])

    def append_turn(self, user: str, reply: str) -> None:
        """Evaluate a past exchange as one turn (session replay); no generation."""
        tokens, n_user = self._turn_tokens(user, reply)
        self._eval(self._open_turn(tokens))
        cut = len(tokens) - self.ledger.turns[-1]  # a turn larger than the space loses its head
        self.ledger.mark_reply(max(0, n_user - cut))
        self.turn_count += 1
        self.prime()

    def record_exchange(self, user: str, reply: str, language: str = "") -> None:
        """A turn answered without the model (an action, app/actions): the exchange joins the
        history and the context as a replayed turn does (evaluated, nothing generated)."""
        self.history.append(Message("user", user, name=self.persona.person, language=language))
        self.history.append(Message("assistant", reply, name=self.persona.bot))
        self.append_turn(read_as(user, language, self.persona), reply)
        self.last_stats = None

    def probe(self, user: str, reply_prefix: str = "", k: int = 5) -> list[tuple[str, float]]:
        """The model's `k` most likely next tokens (text, probability) after a user turn `user`
        and the start of a reply `reply_prefix`, without keeping either: the scratch turn is
        removed again (a shift made to fit it stays, like any shift). For checks of what the
        model would say (recall after shifts) that must not depend on sampling."""
        tokens = self._tokenize([*self.format.user(user), Part(reply_prefix, False)])
        self._eval(self._open_turn(tokens))
        try:
            probs = next_token_probs(self.llama)
            top = np.argsort(probs)[::-1][:k]
            return [(self._token_text(int(t)), float(probs[t])) for t in top]
        finally:
            self._drop_open_turn()
            self.prime()

    def say(self, text: str, cancel: threading.Event | None = None, language: str = "") -> str:
        """Blocking convenience: the whole reply to `text`."""
        return "".join(self.stream(text, cancel, language=language)).strip()

    def reset(self) -> None:
        """Start a new conversation: drop every turn, keep the evaluated system prompt."""
        self._back_to(self.ledger.n_keep)
        self.ledger.clear_turns()
        self._primed, self._primed_note, self._note_due = [], 0, False
        self.history.clear()
        self.forgotten.clear()
        self.turn_count = 0
        self.seeds.reset()
        self.shifts = self.discarded = self.dropped_turns = 0
        if self.shared is not None:  # another conversation may have added to it
            self.shared.reload()
            self._note_due = bool(self.shared.facts) and self.config.memory
        self.prime()

    def close(self) -> None:
        self._sampler.close()
        self.llama.close()
