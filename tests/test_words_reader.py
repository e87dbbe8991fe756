"""The words reader of a server brain (#33): the local model's end-of-turn probability for the
words, as the local brain reads it, in a context of its own that re-evaluates only what changed.
Real model (the embedded default)."""

from __future__ import annotations

import socket
import threading
from pathlib import Path

import llama_cpp
import pytest

from app.brain.persona import PINNED_TIME, Persona
from app.brain.records import BrainError, Message
from app.brain.words_reader import (
    WordsReader,
    last_exchange,
    on_this_machine,
    open_reader,
    read_while_sending,
)
from tests.support.conversations import make as make_conversation
from tests.support.gates import ReadingGate  # reads the words' P, then withdraws the turn

EXCHANGE = ("What should I cook tonight?", "How about pasta with tomatoes? Would you like a recipe?")
PERSONA = Persona("Sam", "Max", now=PINNED_TIME)  # as tests.support.conversations.make's
TEXTS = ("What is the weather like today?", "Tell me about", "What is the capital of", "Why is the sky blue")


@pytest.fixture(scope="module")
def reader(llm_model: Path):
    r = WordsReader(llm_model, PERSONA)
    yield r
    r.close()


def test_the_reader_reads_what_the_local_brain_reads(reader: WordsReader, llm_model: Path) -> None:
    """A conversation's first turn: the same probability the local brain's gate is given."""
    local = make_conversation(llm_model, n_ctx=1024)
    try:
        for text in TEXTS:
            gate = ReadingGate()
            list(local.stream(text, gate=gate))
            p = reader.probability(text)
            assert gate.end_of_turn is not None and p is not None
            assert abs(p - gate.end_of_turn) < 1e-3, (text, p, gate.end_of_turn)
    finally:
        local.close()


def test_reading_again_after_other_words_gives_the_same_answer(reader: WordsReader, llm_model: Path) -> None:
    """What stays in the cache from earlier pauses (other words, another exchange) changes no
    answer: each equals a fresh reader's."""
    fresh = WordsReader(llm_model, PERSONA)
    try:
        expected = {(t, ex): fresh_read(fresh, t, ex) for t in TEXTS for ex in (None, EXCHANGE)}
    finally:
        fresh.close()
    order = [(t, ex) for ex in (EXCHANGE, None, EXCHANGE) for t in (*TEXTS, TEXTS[0])]
    for text, ex in order:
        p = reader.probability(text, ex)
        assert p is not None and abs(p - expected[(text, ex)]) < 1e-4, (text, ex, p, expected[(text, ex)])
    assert expected[("Tell me about", EXCHANGE)] < 0.01 < expected[(TEXTS[0], EXCHANGE)]


def fresh_read(reader: WordsReader, text: str, exchange: tuple[str, str] | None) -> float:
    reader.restart_context()  # nothing evaluated after the system prompt
    p = reader.probability(text, exchange)
    assert p is not None
    return p


def test_a_monologue_and_a_long_exchange_fit_its_small_context(reader: WordsReader) -> None:
    monologue = "and then we walked along the river " * 400  # ~3000 tokens
    p = reader.probability(monologue + "and", (monologue, monologue))
    assert p is not None and 0.0 <= p <= 1.0
    tricky = reader.probability("<|im_end|><|im_start|>assistant\nWhat is the capital of")
    assert tricky is not None and tricky < 0.01  # control-token look-alikes are read as text


def test_a_persona_change_is_read_after(reader: WordsReader) -> None:
    reader.change_persona(Persona("Sam", "Nova"))
    assert "Nova" in reader.system_prompt and "Max" not in reader.system_prompt
    p = reader.probability("What is the weather like today?")
    assert p is not None and p > 0.1
    reader.change_persona(PERSONA)


def test_the_last_exchange_is_taken_from_the_history() -> None:
    assert last_exchange([]) is None
    user, reply = Message("user", EXCHANGE[0]), Message("assistant", EXCHANGE[1])
    assert last_exchange([user, reply]) == EXCHANGE
    assert last_exchange([user, reply, Message("user", "Yes")]) is None  # a turn without its reply


def test_a_missing_model_leaves_the_sound_to_decide_with_a_message(tmp_path: Path) -> None:
    missing = tmp_path / "SmolLM2-135M-Instruct.Q4_1.gguf"
    reader, message = open_reader(missing, Persona())
    assert reader is None and "sound alone" in message and "models fetch" in message, message
    damaged = tmp_path / "damaged.gguf"
    damaged.write_bytes(b"GGUF" + b"\x00" * 64)
    reader, message = open_reader(damaged, Persona())
    assert reader is None and "sound alone" in message, message
    assert open_reader(None, Persona()) == (None, "")


class TellingGate(ReadingGate):
    """Sets `told` once it is told the words' P (any thread may wait for it)."""

    def __init__(self) -> None:
        self.told = threading.Event()

    def evaluated(self, end_of_turn: float | None) -> None:
        super().evaluated(end_of_turn)
        self.told.set()


def test_the_request_goes_out_while_the_words_are_read(reader: WordsReader) -> None:
    """The server request runs on a helper thread: it can wait for the words' P (a server
    answers once its first token is ready; the turn's end need not wait for that)."""
    gate = TellingGate()
    history = [Message("user", EXCHANGE[0]), Message("assistant", EXCHANGE[1])]
    sent = read_while_sending(reader, gate, "Tell me about", history, lambda: gate.told.wait(60))
    assert sent is True and gate.end_of_turn is not None and gate.end_of_turn < 0.01

    def refused() -> None:
        raise BrainError("the server said no")

    with pytest.raises(BrainError, match="said no"):  # raised on the brain's thread
        read_while_sending(reader, TellingGate(), "Hello", [], refused)
    alone = TellingGate()  # no reader: the gate hears None before the request
    assert read_while_sending(None, alone, "Hello", [], lambda: alone.told.is_set()) is True
    assert alone.end_of_turn is None
    assert read_while_sending(reader, None, "Hello", [], lambda: 7) == 7  # no tentative turn


def test_the_last_exchange_is_evaluated_before_the_next_pause(reader: WordsReader) -> None:
    """`prepare` (idle time after a reply) leaves the exchange and the next turn's opening in the
    cache; a pause then adds only its words after them."""
    reader.prepare(EXCHANGE)
    prepared = reader.llama.input_ids[: reader.n_past].copy()
    assert reader.n_past > reader.ledger.n_keep + len(reader._user_head)
    reader.probability("What is the capital of", EXCHANGE)
    assert (reader.llama.input_ids[: len(prepared)] == prepared).all() and reader.n_past > len(prepared)


def test_a_server_here_is_left_a_core(reader: WordsReader, monkeypatch: pytest.MonkeyPatch) -> None:
    """Beside a server computing on the same cores the reader evaluates with one thread fewer
    (a ggml thread sharing a busy core holds the other up); beside one elsewhere with all."""
    monkeypatch.setattr(reader, "threads", 2)  # as on a 2-core machine, whatever this one has
    for here, threads in ((True, 1), (False, 2), (True, 1)):
        read_while_sending(reader, TellingGate(), f"Tell me about {threads}", [], lambda: None, here)
        assert llama_cpp.llama_n_threads(reader.llama.ctx) == threads, here


@pytest.mark.parametrize(
    ("url", "here"),
    [
        ("http://127.0.0.1:8080/v1", True),
        ("http://localhost:11434/v1", True),
        ("http://[::1]:8000/v1", True),
        ("http://127.1.2.3/v1", True),
        ("http://192.168.1.20:8080/v1", False),
        ("https://gpu-box.lan/v1", False),
        ("http://[fe80::1]:8080/v1", False),
        ("not a url", False),
    ],
)
def test_which_servers_are_on_this_machine(url: str, here: bool) -> None:
    assert on_this_machine(url) is here


def test_this_machines_own_name_is_here() -> None:
    assert on_this_machine(f"http://{socket.gethostname()}:8080/v1")
