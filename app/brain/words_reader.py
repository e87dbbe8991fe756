"""A server brain's words read for the end of the user's turn, by a small local model.

A server gives no probability that the words heard at a pause are a finished turn. Without one
the sound decides alone (Smart Turn, ears/turn_model.py): on bench/turn_rules' clips that ends
3-7 of 12 paused utterances early per voice family and holds some complete questions 0.9-1.5 s.
The reader loads the catalog's small default model (SmolLM2 135M, ~100 MB: the words rule's
thresholds were chosen on it) in a context of its own and reads the probability as the local
brain reads it (user_turn.py), after the system prompt, the last exchange and the words; a server
brain's turns then end by the same rule as a local one's (loop/turn_end.py), the sound asked
only where the words are unsure. The reply still comes from the server.

Each pause evaluates only what differs from the previous one's tokens: the words, ~10-25
tokens (the last exchange is evaluated in idle time after the reply: `prepare`).
`read_while_sending` reads them while a server request goes out on a helper thread (servers
answer a streamed request once its first token is ready). A server on this very machine
(`on_this_machine`: a loopback address, as Ollama or llama-server beside the app) evaluates the
same words meanwhile, so the reader then computes with one thread fewer (system/cpu.core_taken):
beside llama-server on 2 cores, with both threads at least 3 reads in 12 utterances took
138-292 ms (a ggml thread sharing a busy core holds the other up), with one 9-78 ms (20-30 ms with two
on an idle machine).
Threads: a reader is owned by the brain's thread; every call blocks on llama.cpp. `close`
frees the model.
"""

from __future__ import annotations

import contextlib
import ipaddress
import logging
import socket
from collections.abc import Callable
from concurrent.futures import Future
from pathlib import Path
from typing import TypeVar
from urllib.parse import urlsplit

import llama_cpp

from app.brain.kv_context import KvContext
from app.brain.persona import Persona
from app.brain.records import LlmConfig, Message
from app.brain.user_turn import TurnGate, build_user_turn
from app.system.cpu import core_taken
from app.system.thread_names import named_thread

log = logging.getLogger(__name__)
READER_CTX = 1024
LAST_USER_TOKENS = 64  # the last exchange's user turn, at most (a longer one loses its head)
LAST_REPLY_TOKENS = 96  # ... and the end of its reply
T = TypeVar("T")


class WordsReader(KvContext):
    """See the module docstring. Raises the app's ModelError (or ValueError) when the model
    cannot be loaded."""

    def __init__(self, model: Path, persona: Persona, threads: int | None = None) -> None:
        super().__init__(LlmConfig(model, n_ctx=READER_CTX, n_threads=threads, memory=False), persona)
        self.restart_context()
        self.prepare(None)

    def prepare(self, last: tuple[str, str] | None) -> None:
        """Idle time (after a reply): evaluate the exchange `last` and the next user turn's
        opening now, so that the next pause evaluates only its words."""
        self._evaluate(self._exchange(last) + self._user_head)

    def probability(self, text: str, last: tuple[str, str] | None = None) -> float | None:
        """The probability that `text` (the user's words so far) is a finished turn, after the
        exchange `last` (its user words and reply; None: the conversation's first turn). None
        when the chat template puts no end-of-turn mark right after the words."""
        before = self._exchange(last)
        limit = self.n_ctx - self.ledger.n_keep - len(before) - 1
        turn = build_user_turn(text, self.format, self.llama, limit)
        if turn.end_token is None:
            return None
        self._evaluate(before + turn.tokens[: turn.words_end])
        return self._end_of_turn_here(turn.end_token)

    def _exchange(self, last: tuple[str, str] | None) -> list[int]:
        """The tokens of the last exchange, shortened to its user turn's end and reply's end."""
        if last is None:
            return []
        user, reply = last
        asked = build_user_turn(user, self.format, self.llama, LAST_USER_TOKENS).tokens
        said = self.llama.tokenize(reply.encode("utf-8"), add_bos=False, special=False)
        return asked + said[-LAST_REPLY_TOKENS:] + self._close_tokens

    def _evaluate(self, tokens: list[int]) -> None:
        """Have `tokens` in the cache right after the system prompt, evaluating only from the
        first that differs from what is there (the last one always, for its logits)."""
        start = self.ledger.n_keep
        have = self.llama.input_ids[start : self.n_past].tolist()
        same = next((i for i, (a, b) in enumerate(zip(have, tokens, strict=False)) if a != b), len(have))
        same = min(same, len(tokens) - 1)
        llama_cpp.llama_memory_seq_rm(self._mem, 0, start + same, -1)
        self.llama.n_tokens = start + same
        self._share_cores()
        self.llama.eval(tokens[same:])

    def change_persona(self, persona: Persona) -> None:
        """Read the next turns after `persona`'s system prompt (evaluated now)."""
        self.persona, self.system_prompt = persona, persona.render()
        self.restart_context()
        self.prepare(None)

    def close(self) -> None:
        self.llama.close()


def last_exchange(history: list[Message]) -> tuple[str, str] | None:
    """The newest user turn of `history` and the reply it got, if the history ends with one."""
    if len(history) >= 2 and (history[-2].role, history[-1].role) == ("user", "assistant"):
        return history[-2].text, history[-1].text
    return None


def read_while_sending(
    reader: WordsReader | None,
    gate: TurnGate | None,
    text: str,
    history: list[Message],
    send: Callable[[], T],
    server_here: bool = False,
) -> T:
    """`send()`'s result (or its exception): a server request, made on a helper thread while
    `reader` reads `text` (after `history`'s last exchange) for a tentative turn's `gate` on this
    one. Without a reader the gate is told None (no words' P) before the request. `server_here`:
    the server computes on this machine (the reader leaves it a core)."""
    if gate is None or reader is None:
        if gate is not None:
            gate.evaluated(None)
        return send()
    sent: Future[T] = Future()

    def run() -> None:
        try:
            sent.set_result(send())
        except BaseException as exc:  # handed to the brain's thread, raised there
            sent.set_exception(exc)

    named_thread(run, "server-request").start()
    try:
        with core_taken() if server_here else contextlib.nullcontext():
            p = reader.probability(text, last_exchange(history))
    except Exception:  # llama.cpp failing on one pause must not cost the turn: the sound decides
        log.exception("the words reader failed on a pause")
        p = None
    gate.evaluated(p)
    return sent.result()


def on_this_machine(url: str) -> bool:
    """Whether a server `url` names this machine (localhost, a loopback address or this
    machine's own name)."""
    host = urlsplit(url).hostname or ""
    if host in ("localhost", socket.gethostname().lower()) or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:  # a name: another machine as far as we can tell without asking DNS
        return False


def open_reader(model: Path | None, persona: Persona) -> tuple[WordsReader | None, str]:
    """The reader of `model` (None: none asked for), or None and why it could not load (a
    message for people: the sound then decides alone)."""
    if model is None:
        return None, ""
    try:
        return WordsReader(model, persona), ""
    except Exception as exc:  # missing or corrupt file, a model llama.cpp refuses
        log.warning("no local words reader for the server brain: %s", exc)
        return None, f"Hands-free turns with the server end by their sound alone: {exc}"
