"""MemoryContext: the persistent context with the memory note and recall notes (memory.py,
recall.py), built from the conversation's history; `Conversation` adds turns and replies.

Where the note goes, by the model's measured aids (model_aids.py, `note_at_turn`): at the head
of the next turn (kv_context.py), near the question, as the 135M model was measured; or right
after the system prompt, as a second system message (`pinned` in the ledger). Written right
before the user's words, a note reads to an instruct model as something to answer: the 0.5B
Qwen recited it ("The user lives in Porto.") in place of the answers; beside the system prompt
it reads as background.
llama.cpp evaluates only at the end of a sequence, so the note is evaluated there, then moved
with `llama_memory_seq_add`: out of the way, the turns up by its length, the note down into the
room they left (its keys were computed after the turns: the approximation a shift makes for every
token it moves). Nothing else is evaluated again. A memory that cannot move (recurrent state)
gets the note at the head of the next turn.

Threading: owned by ONE thread, like the KvContext it extends; every method blocks on llama.cpp.
"""

from __future__ import annotations

from pathlib import Path

import llama_cpp

from app.brain.chat_format import Part
from app.brain.facts import Fact
from app.brain.kv_context import KvContext
from app.brain.memory import note_text
from app.brain.model_aids import aids_for
from app.brain.persona import Persona
from app.brain.recall import asked_about
from app.brain.records import LlmConfig, Message
from app.brain.shared_memory import SharedMemory, join, remembered


class MemoryContext(KvContext):
    """The cache, plus the history the notes are written from."""

    def __init__(
        self, config: LlmConfig, persona: Persona | None = None, llama: llama_cpp.Llama | None = None
    ):
        super().__init__(config, persona, llama)
        newline = self._tokenize([Part("\n", False)])
        self._newline = newline[0] if len(newline) == 1 else None  # DRY's sequence breaker
        self.history: list[Message] = []
        self.forgotten: set[str] = set()  # fact keys the user asked to forget (memory.py)
        self.shared: SharedMemory | None = None  # facts across conversations (shared_memory.py)
        n_params = llama_cpp.llama_model_n_params(self.llama.model)
        self.aids = config.aids or aids_for(Path(config.model_path), n_params)  # model_aids.py

    def remembered(self) -> list[Fact]:
        """The facts the memory note holds now (empty with memory off)."""
        return remembered(self.config.memory, self.history, self.forgotten, self.shared)

    def share_memory(self, shared: SharedMemory | None) -> None:
        """Read and add to the memory shared across conversations (None: this one's alone); this
        conversation's facts join it now. A conversation with no note yet opens its next turn
        with one when it holds facts."""
        self.shared = shared
        if shared is not None:
            join(shared, self.config.memory, self.history, self.forgotten)
        if shared is not None and shared.facts and self.config.memory and not self.ledger.note_in_cache:
            self.unprime()
            self._note_due = True
            self.prime()

    def forget(self, key: str) -> None:
        """Leave the fact `key` out of the note from the next reply on: the notes in the cache
        (recall notes too) are taken out and the note written again without it (the user's own
        words that said it stay)."""
        self.forgotten.add(key)
        if self.shared is not None:
            self.shared.forget(key)
        if self.ledger.note_in_cache or any(self.ledger.recalls):
            self.drop_notes()

    def sampler_history(self) -> list[int]:
        """The model's own replies as the sampler reads them: each remembered fact's value
        ("Robin", "Porto") and the assistant's own name are replaced by a sequence breaker, so
        restating a fact the user told ("Your name is Robin") or who it is ("My name is Aria",
        said before) is not a repetition DRY forbids; anything else still is."""
        tokens = self.own_replies()
        values = {v for v in (*(f.value for f in self.remembered()), self.persona.bot) if v.strip()}
        if not values or self._newline is None:
            return tokens
        runs = [self._tokenize([Part(f"{lead}{v}", False)]) for v in values for lead in ("", " ")]
        out, i = [], 0
        while i < len(tokens):
            run = next((r for r in runs if r and tokens[i : i + len(r)] == r), None)
            if run is None:
                out.append(tokens[i])
                i += 1
            else:
                out.append(self._newline)
                i += len(run)
        return out

    def _memory_note(self) -> list[int]:
        """The note's tokens: the assistant's name and as many of the newest facts as fit in a
        quarter of the space (at n_ctx 512 with the default persona: 107 tokens, 8 facts take
        ~75); none with memory off."""
        if not self.config.memory:
            return []
        facts = self.remembered()
        budget = (self.n_ctx - self.ledger.n_keep) // 4
        bot = "" if self._pins else self.persona.bot  # beside the system prompt: it says who
        while True:
            parts = self.format.note(note_text(facts, bot))
            if parts is None:
                return []
            tokens = self._tokenize(parts)
            if len(tokens) <= budget:
                return tokens
            if not facts:
                return []
            facts = facts[1:]

    def _recall_note(self, text: str) -> list[int]:
        """The recall note for a turn that asks about remembered facts or the assistant's name
        (recall.py): just those, in the note's words; [] for any other turn or with memory off."""
        if not self.config.memory or not self.aids.recall_note:
            return []
        facts, about_you = asked_about(text, self.remembered())
        note = note_text(facts, self.persona.bot if about_you else "")
        parts = self.format.note(note) if note else None
        return self._tokenize(parts) if parts else []

    def drop_notes(self) -> None:
        """Take every memory note and recall note out of the cache where it is (the turns after
        it move down, as after a shift); the next opening writes a fresh note (after a Forget).
        Owner thread."""
        self.unprime()
        ledger = self.ledger
        self._unpin()
        start = ledger.head
        for i, (k, r, at, _n) in enumerate(ledger.notes_by_turn()):
            if k + r:
                self._cut(*((s, n) for s, n in ((start + at, r), (start, k)) if n))  # later first
                ledger.turns[i] -= k + r
                if ledger.replies[i] >= 0:
                    ledger.replies[i] -= k + r  # both notes come before the reply
                ledger.notes[i] = ledger.recalls[i] = ledger.recall_at[i] = 0
                self._note_due = self._note_due or k > 0
            start += ledger.turns[i]
        self.prime()

    @property
    def note_due(self) -> bool:
        """The next turn opens with the memory note (a shift dropped turns since the last one)."""
        return self._note_due

    @note_due.setter
    def note_due(self, due: bool) -> None:
        self._note_due = due

    def _begin_with_note(self) -> list[int]:
        """A due note goes beside the system prompt where the memory can make room there;
        else at the head of the turn that begins (kv_context.py)."""
        if self._note_due and (note := self._memory_note()) and self._pin(note):
            self._note_due = False
            return []
        return super()._begin_with_note()

    @property
    def _pins(self) -> bool:
        """The note goes beside the system prompt: the model's aids say so and the memory can
        make room there (not a recurrent state)."""
        return not self.aids.note_at_turn and self._checkpoints is None and self.can_shift

    def _pin(self, note: list[int]) -> bool:
        """Write `note` right after the system prompt, the turns moving up (module docstring);
        False (nothing done) where the memory cannot move or the note does not fit."""
        if not self._pins:
            return False
        self._unpin()  # the note it replaces
        start, end, n = self.ledger.n_keep, self.n_past, len(note)
        if end + n > self.n_ctx:
            return False
        self.llama.eval(note)  # at [end, end + n)
        mem, away = self._mem, 2 * self.n_ctx
        llama_cpp.llama_memory_seq_add(mem, 0, end, end + n, away)  # the note out of the way
        llama_cpp.llama_memory_seq_add(mem, 0, start, end, n)  # the turns up by its length
        llama_cpp.llama_memory_seq_add(mem, 0, end + away, end + n + away, start - end - away)
        ids = self.llama.input_ids
        ids[start + n : end + n] = ids[start:end].copy()
        ids[start : start + n] = note
        self.ledger.pinned = n
        return True
