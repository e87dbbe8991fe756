"""KvContext: one llama context kept for the app's life, shifted on whole turns.

Each turn appends only its own tokens at the end of the cache; a `Ledger` records which
positions belong to the system prompt (n_keep) and to each turn. When the next evaluation would
not fit in n_ctx, the oldest whole turns after the system prompt are discarded with
`llama_memory_seq_rm` and the rest moved down with `llama_memory_seq_add` (see `ledger.py` for
the policy), and llama-cpp-python's own bookkeeping (`input_ids`, `n_tokens`) is moved with them.
Models whose memory cannot shift (recurrent/hybrid) re-evaluate the kept prompt plus the
surviving turns.

Priming: when idle (after each turn, reset or session load) the fixed opening of the next user
turn (`<|im_start|>user\n`) is evaluated ahead of time and counted as the start of an open turn,
so a turn's prompt evaluates only its own text (~19 of ~108 ms saved for a 16-token turn).
`unprime()` takes it back out (sessions are saved without it).

The memory note (memory.py): a shift that drops whole turns makes it due, unless the newest
note in the cache already says what one written now would; it is written as a system message
at the head of the next turn, evaluated with that turn's primed opening (idle time), and
recorded in the ledger (`Ledger.notes`). Taking that turn back makes it due again. A later
shift that drops that turn keeps the note, right after the system prompt (`Ledger.pinned`), so
an unchanged note is evaluated once, not after every shift. `_memory_note()` gives its tokens
(none here; `Conversation` builds it from the history). A turn may also hold a recall note
(the facts its question asks about; recall.py), written between the user's closed message and
the assistant header (`Ledger.recalls`, `Ledger.recall_at`).

This is the cache's bookkeeping only; `Conversation` (conversation.py) builds turns and replies
on it. Threading: owned by ONE thread (llama contexts are not thread-safe); every method blocks
on llama.cpp.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterator
from pathlib import Path

import llama_cpp

from app.brain.chat_format import ChatFormat, Part, PlainChatFormat, TemplateError
from app.brain.jinja_format import JinjaChatFormat
from app.brain.ledger import Ledger
from app.brain.persona import Persona
from app.brain.records import LlmConfig
from app.brain.state_checkpoints import StateCheckpoints, is_recurrent
from app.brain.user_turn import end_of_turn_prob, next_token_probs, terminal_tokens
from app.catalog.catalog import check_file, refused
from app.system.cpu import FreeCores, cores_taken, threads_for
from app.system.logs import NATIVE_LOAD

log = logging.getLogger(__name__)


@contextlib.contextmanager
def _refused_as(path: Path) -> Iterator[None]:
    """llama-cpp-python's ValueError for a file llama.cpp would not load, as the app's ModelError."""
    try:
        yield
    except ValueError as exc:
        log.warning("llama.cpp refused %s: %s", path, exc)
        raise refused(path, "llm", "llama.cpp") from exc


class KvContext:
    """The persistent context and its ledger. See the module docstring for the contracts."""

    def __init__(
        self, config: LlmConfig, persona: Persona | None = None, llama: llama_cpp.Llama | None = None
    ):
        self.config = config
        self.persona = persona or Persona()
        self._free = FreeCores()
        self.threads = config.n_threads or self._free.cores  # for this turn (see `_pick_threads`)
        if llama is None:
            check_file(Path(config.model_path), "llm")
            with (
                NATIVE_LOAD,
                _refused_as(Path(config.model_path)),
            ):  # verbose=False silences fd 2 (app.system.logs)
                llama = llama_cpp.Llama(
                    model_path=str(config.model_path),
                    n_ctx=config.n_ctx,
                    n_batch=min(config.n_batch, config.n_ctx),
                    n_threads=self.threads,
                    n_threads_batch=self.threads,
                    n_gpu_layers=config.n_gpu_layers,
                    seed=config.sampling.seed,
                    flash_attn=config.flash_attn,
                    verbose=False,
                )
        self.llama = llama
        # llama.cpp may pad its context (e.g. 384 -> 512); llama-cpp-python's token array keeps
        # the requested size. The smaller one is the real limit.
        self.n_ctx = min(llama.n_ctx(), len(llama.input_ids))
        self._vocab = llama_cpp.llama_model_get_vocab(llama.model)
        self._mem = llama_cpp.llama_get_memory(llama.ctx)
        self.can_shift = bool(llama_cpp.llama_memory_can_shift(self._mem))
        # A recurrent state cannot forget its last tokens: turns taken back restore a checkpoint.
        self._checkpoints = StateCheckpoints(llama.ctx) if is_recurrent(llama.model) else None
        self.format = self._make_format()
        self._close_tokens = self._tokenize(self.format.reply_close())
        self._user_head = self._tokenize(self.format.user_head())
        self._reply_open = self._tokenize(self.format.reply_open())
        self._terminal = terminal_tokens(self.llama)  # ". ? !" for the end-of-turn probability
        self._primed: list[int] = []  # the user head, when evaluated ahead of the next turn
        self._primed_note = 0  # ... of which this many tokens are the memory note before it
        self._note_due = False  # a shift dropped turns: the next turn opens with the memory note
        self.ledger = Ledger()
        self.shifts = 0
        self.discarded = 0
        self.dropped_turns = 0  # whole exchanges the shifts removed from the context
        self.system_prompt = self.persona.render()

    # ----- set-up -------------------------------------------------------------------------
    def _make_format(self) -> ChatFormat:
        template = self.llama.metadata.get("tokenizer.chat_template")
        if template:
            try:
                return JinjaChatFormat(
                    template,
                    self._token_text(self.llama.token_bos()),
                    self._token_text(self.llama.token_eos()),
                    thinking=self.config.thinking,
                )
            except TemplateError as exc:
                log.warning("model chat template unusable (%s); using the plain transcript format", exc)
        return PlainChatFormat(self.persona.person, self.persona.bot)

    def _token_text(self, token: int) -> str:
        if token < 0:
            return ""
        return self.llama.detokenize([token], special=True).decode("utf-8", errors="replace")

    def _tokenize(self, parts: list[Part]) -> list[int]:
        out: list[int] = []
        for p in parts:
            out += self.llama.tokenize(p.text.encode("utf-8"), add_bos=False, special=p.special)
        return out

    def restart_context(self) -> None:
        """Clear the cache and evaluate the system prompt alone (history is kept as text)."""
        tokens = self._tokenize(self.format.system(self.system_prompt))
        bos = self.llama.token_bos()
        if llama_cpp.llama_vocab_get_add_bos(self._vocab) and bos >= 0 and tokens[:1] != [bos]:
            tokens.insert(0, bos)
        if len(tokens) > self.n_ctx // 2:
            raise ValueError(f"system prompt is {len(tokens)} tokens; the context is only {self.n_ctx}")
        llama_cpp.llama_memory_clear(self._mem, True)
        self.llama.n_tokens = 0
        self.llama.eval(tokens)
        self.ledger = Ledger(n_keep=len(tokens))
        if self._checkpoints is not None:
            self._checkpoints = StateCheckpoints(self.llama.ctx)
            self._checkpoints.take(len(tokens), base=True)
        self._primed, self._primed_note, self._note_due = [], 0, False

    def _end_of_turn_here(self, end_token: int) -> float:
        """The end-of-turn probability (user_turn.py) after the last position evaluated, where
        the template's end mark `end_token` would follow the user's words."""
        return end_of_turn_prob(next_token_probs(self.llama), end_token, self._terminal)

    # ----- context bookkeeping ---------------------------------------------------------------
    @property
    def n_past(self) -> int:
        return self.llama.n_tokens

    def _eval(self, tokens: list[int]) -> None:
        """Evaluate tokens at the end of the context, shifting first if they would not fit."""
        while True:
            try:
                n_discard = self.ledger.plan_discard(len(tokens), self.n_ctx, self.config.discard_share)
            except ValueError:  # fits only without the pinned note (a turn near the whole space)
                if not self.ledger.pinned:
                    raise
                self._unpin()
                continue
            if not n_discard:
                break
            self._discard(n_discard)  # frees less than n_discard when it keeps a note: plan again
        self._share_cores()
        self.llama.eval(tokens)
        self.ledger.add(len(tokens))

    def _cut(self, *spans: tuple[int, int]) -> None:
        """Remove the cache positions of each span (start, length), given later spans first,
        and move the rest down (or, where memory cannot shift, re-evaluate the survivors once);
        the ledger is the caller's."""
        ids = self.llama.input_ids
        if not self.can_shift:
            keep = list(range(self.n_past))
            for start, n in spans:
                del keep[start : start + n]
            survivors = ids[keep].tolist()
            llama_cpp.llama_memory_clear(self._mem, True)
            self.llama.n_tokens = 0
            self.llama.eval(survivors)
            return
        for start, n in spans:
            n_past = self.n_past
            llama_cpp.llama_memory_seq_rm(self._mem, 0, start, start + n)
            llama_cpp.llama_memory_seq_add(self._mem, 0, start + n, n_past, -n)
            ids[start : n_past - n] = ids[start + n : n_past].copy()
            self.llama.n_tokens = n_past - n

    def _discard(self, n_discard: int) -> None:
        head = self.ledger.head
        cuts, dropped = self.ledger.shift(n_discard)
        self._cut(*cuts)
        if self._checkpoints is not None:  # every position after the system prompt moved
            self._checkpoints.clear()
        self.dropped_turns += dropped
        self._note_due = self._note_due or (dropped > 0 and not self._note_is_current())
        self.shifts += 1
        self.discarded += n_discard
        log.info(
            "context full: discarded %d tokens after the first %d (shift %d)", n_discard, head, self.shifts
        )

    def _unpin(self) -> None:
        """Take the pinned note out of the cache (the turns move down); a fresh one is due."""
        if self.ledger.pinned:
            self._cut((self.ledger.n_keep, self.ledger.pinned))
            self.ledger.pinned, self._note_due = 0, True

    def _note_is_current(self) -> bool:
        """The newest memory note in the cache says what one written now would (or there is
        none and nothing to note). A note still being evaluated was written from the history
        as it is: current."""
        start, length = self.ledger.newest_note()
        if start + length > self.n_past:
            return True
        return bool(self.llama.input_ids[start : start + length].tolist() == self._memory_note())

    def _cut_in_turn(self, start: int, end: int) -> None:
        """Take offsets [start, end) of the newest turn out of the cache, the rest of the turn
        moving down (a thinking block the template leaves out of past replies). Where memory
        cannot shift, the block stays: taking it out would re-evaluate the whole context."""
        if end <= start or not self.can_shift:
            return
        self._cut((self.n_past - self.ledger.turns[-1] + start, end - start))
        self.ledger.turns[-1] -= end - start
        self.ledger.replies[-1] = min(self.ledger.replies[-1], start)

    def _rollback(self, n: int) -> None:
        """Remove the last `n` tokens of the current turn from the cache."""
        if n > 0:
            self._back_to(self.n_past - n)
            self.ledger.remove_tail(n)

    def _back_to(self, end: int) -> None:
        """The cache as it was with `end` tokens evaluated. A recurrent state that refuses to
        forget goes back to a checkpoint and evaluates the rest again (state_checkpoints.py)."""
        if not llama_cpp.llama_memory_seq_rm(self._mem, 0, end, -1):
            assert self._checkpoints is not None, "only a recurrent memory refuses to forget its end"
            ids = self.llama.input_ids[:end].copy()
            start = self._checkpoints.restore(end)
            if start:
                llama_cpp.llama_memory_seq_rm(self._mem, 0, start, -1)  # a hybrid's attention layers
            else:
                llama_cpp.llama_memory_clear(self._mem, True)
            self.llama.n_tokens = start
            if end > start:
                self.llama.eval(ids[start:].tolist())
            log.info("recurrent memory: back to %d tokens from a checkpoint at %d", end, start)
        self.llama.n_tokens = end

    def state_replaced(self) -> None:
        """The cache was loaded from a file (a session): recurrent checkpoints after the system
        prompt no longer hold."""
        if self._checkpoints is not None:
            self._checkpoints.clear()

    def _begin_turn(self) -> None:
        """A turn begins at the end of the cache (a recurrent state is kept there first)."""
        if self._checkpoints is not None:
            self._checkpoints.take(self.n_past)
        self.ledger.begin_turn()

    def context_stats(self) -> dict[str, int]:
        """Context counters for front ends: fill, kept prefix, shifts so far."""
        return {
            "n_past": self.n_past,
            "n_ctx": self.n_ctx,
            "n_keep": self.ledger.n_keep,
            "shifts": self.shifts,
            "discarded": self.discarded,
            "dropped_turns": self.dropped_turns,
        }

    # ----- priming (module docstring) ---------------------------------------------------------
    @property
    def primed_tokens(self) -> int:
        """How many tokens of the next user turn are already evaluated."""
        return len(self._primed)

    def prime(self) -> None:
        """Evaluate the next user turn's fixed opening now (idle time), after the memory note
        when one is due. Idempotent."""
        if self._primed or not self._user_head:
            return
        self._begin_turn()
        note = self._begin_with_note()
        self._eval(note + self._user_head)
        if not note and self._note_due and self._memory_note():
            # Making room for the opening shifted the note out: write it before the opening.
            self._rollback(len(self._user_head))
            note = self._begin_with_note()
            self._eval(note + self._user_head)
        self._primed, self._primed_note = note + self._user_head, len(note)

    def unprime(self) -> None:
        """Take the primed opening (and a note written with it) back out of the cache and ledger."""
        if self._primed:
            self._drop_open_turn()
            self._primed, self._primed_note = [], 0

    def _drop_open_turn(self) -> None:
        """Remove the last (open) turn from the cache and the ledger (a note it held is due again)."""
        if self.ledger.notes[-1]:
            self._note_due = True
        self._rollback(self.ledger.turns[-1])
        self.ledger.pop_turn()

    def _begin_with_note(self) -> list[int]:
        """The just-begun turn opens with the memory note when one is due: its tokens (the
        caller evaluates them first), recorded in the ledger; [] when none is due or there is
        nothing to note."""
        if not self._note_due:
            return []
        note = self._memory_note()
        if note:
            self.ledger.notes[-1] = len(note)
            self._note_due = False
        return note

    def _memory_note(self) -> list[int]:
        """The memory note's tokens (memory.py); none in a bare context."""
        return []

    def reply_spans(self) -> list[tuple[int, int]]:
        """Cache positions [start, end) of the model's finished replies, oldest first."""
        return self.ledger.reply_spans(len(self._close_tokens))

    def own_replies(self) -> list[int]:
        """Tokens of the model's finished replies still in the cache, oldest first."""
        ids = self.llama.input_ids
        out: list[int] = []
        for start, end in self.reply_spans():
            out += ids[start:end].tolist()
        return out

    def _reply_at(self, tokens: list[int]) -> int:
        """Where the assistant header the reply continues starts in a user turn's `tokens` (a
        recall note goes there); 0 when the turn does not end with it."""
        n = len(self._reply_open)
        return len(tokens) - n if n and tokens[-n:] == self._reply_open else 0

    def _open_turn(self, tokens: list[int], recall: list[int] | None = None, at: int = 0) -> list[int]:
        """Start a turn made of `tokens`, with the `recall` note at index `at` of them (the
        assistant header: the note follows the user's closed message); returns the tokens still
        to evaluate: a due memory note first, then the turn, or the turn after its primed
        opening. A recall note at 0 goes before the opening: a primed opening is taken back
        first (a note primed with it is written again, ahead of the recall note)."""
        recall = recall or []
        head = self._primed[self._primed_note :]
        if head and tokens[: len(head)] == head and (not recall or at >= len(head)):
            prefix, done, base = [], len(head), self._primed_note
            self._primed, self._primed_note = [], 0
        else:
            self.unprime()
            self._begin_turn()
            prefix = self._begin_with_note()
            done, base = 0, len(prefix)
        if recall:
            self.ledger.recalls[-1], self.ledger.recall_at[-1] = len(recall), base + at
        return prefix + (tokens[:at] + recall + tokens[at:])[done:]

    def cache_pos_max(self) -> int:
        """Highest position in the KV cache (n_past - 1 when consistent)."""
        return int(llama_cpp.llama_memory_seq_pos_max(self._mem, 0))

    def cache_pos_min(self) -> int:
        return int(llama_cpp.llama_memory_seq_pos_min(self._mem, 0))

    def _pick_threads(self) -> None:
        """Before a turn: as many threads as the machine leaves free (app.system.cpu), unless the
        user fixed the count. ggml threads wait for each other; one sharing a busy core slows
        all of them (2 threads with one core busy: a third of the speed of 1 thread)."""
        n = threads_for(self.config.n_threads, self._free)
        if n != self.threads:
            log.info("llama threads: %d -> %d (cores left free by other programs)", self.threads, n)
            self.threads = n

    def _share_cores(self) -> None:
        """Before each evaluation: the turn's threads, one fewer while this process's own side
        work holds a core (the turn model scoring a pause: app.system.cpu.core_taken), since a
        thread sharing a busy core holds the others up. A user's explicit count stands."""
        n = self.threads if self.config.n_threads else max(1, self.threads - cores_taken())
        if n != llama_cpp.llama_n_threads(self.llama.ctx):
            llama_cpp.llama_set_n_threads(self.llama.ctx, n, n)
