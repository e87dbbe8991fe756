"""The memory note on the real SmolLM2 GGUF: facts the user told outlive the turns that said
them (a shift discards those), the note is a function of the history whichever path built the
context, it survives a session, and it is off with `memory=False`."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest

from app.brain import session
from app.brain.conversation import Conversation, LlmConfig
from app.brain.facts import Fact, extract_facts
from app.brain.history import export
from app.brain.memory import HEADER, known_facts, note_text, told_to_you
from app.brain.persona import PINNED_TIME, Persona
from app.brain.records import Message
from app.brain.sampling import SamplingConfig
from app.brain.shared_memory import SharedMemory
from app.brain.user_turn import ConfirmAtPrompt
from tests.support.conversations import assert_consistent

pytestmark = pytest.mark.slow  # many turns on the real model

FACTS = "My name is Robin. I live in Porto. My dog is called Rex."
FILLER = [
    "Name a colour of the sky.",
    "What do bees make?",
    "Tell me one word about rain.",
    "What is two plus two?",
    "Name an animal that swims.",
    "Which season is the coldest?",
]


def make(model: Path, memory: bool = True, n_ctx: int = 512) -> Conversation:
    cfg = LlmConfig(
        model, n_ctx=n_ctx, max_tokens=24, sampling=SamplingConfig(seed=5, temperature=0.7), memory=memory
    )
    return Conversation(cfg, Persona(now=PINNED_TIME))


def cache_text(c: Conversation) -> str:
    return c.llama.detokenize(c.llama.input_ids[: c.n_past].tolist(), special=True).decode("utf-8", "replace")


def talk_until_shifts(c: Conversation, shifts: int) -> None:
    """Filler turns until `shifts` more shifts have happened (bounded)."""
    goal = c.shifts + shifts
    for i in range(200):
        if c.shifts >= goal:
            return
        c.say(FILLER[i % len(FILLER)])
    raise AssertionError(f"only {c.shifts} shifts in 200 turns")


def test_the_notes_words_come_from_the_users_statements() -> None:
    """Pure: the same history gives the same note; a later fact replaces an earlier one;
    forgotten keys and the assistant's words are left out (the model's reply never becomes a
    fact about the user)."""
    history = [
        Message("user", "My name is Robin. I live in Porto."),
        Message("assistant", "Nice! My name is Max and I live in Paris."),
        Message("user", "I moved to Lisbon. I like green tea."),
    ]
    facts = known_facts(history)
    assert [f.sentence for f in facts] == [
        "The user's name is Robin.",
        "The user lives in Lisbon.",
        "The user likes green tea.",
    ]
    assert note_text(facts) == note_text(known_facts(list(history)))
    assert "Paris" not in note_text(facts) and note_text(facts).startswith(HEADER)
    assert [f.key for f in known_facts(history, forgotten={"home"})] == ["name", "taste:green tea"]
    assert note_text([]) == ""
    assert [told_to_you(f) for f in facts] == [
        "Your name is Robin.",
        "You live in Lisbon.",
        "You like green tea.",
    ]


def test_every_kind_of_fact_reads_to_the_user_as_you() -> None:
    """The window shows each fact to the user ("You live in Porto."), whatever its kind; facts
    shared across conversations before the note said "the user" read the same."""
    said = (
        "My name is Robin. I live in Porto. I'm from Braga. I was born in Faro. I work as a nurse. "
        "I work at Santa Maria. I am 34. My dog is called Rex. My birthday is on the 4th of May. "
        "I like green tea. I hate mushrooms. Remember that the code is 4512."
    )
    facts = extract_facts(said)
    assert len({f.kind for f in facts}) == 12, facts
    for fact in facts:
        told = told_to_you(fact)
        assert told.split()[0] in ("You", "Your") and "user" not in told, (fact, told)
    old = Fact("name", "name", "Robin", "Their name is Robin.")
    assert told_to_you(old) == "Your name is Robin."


def test_an_export_says_what_is_remembered(tmp_path: Path) -> None:
    history = [Message("user", "My name is Robin. I live in Porto."), Message("assistant", "Hi!")]
    assert export(history, "Sam", "Aria", tmp_path / "c.md", "md", forgotten={"home"}) is None
    text = (tmp_path / "c.md").read_text()
    assert "## What Aria remembers\n\n- The user's name is Robin.\n" in text
    assert "The user lives in" not in text
    assert export(history, "Sam", "Aria", tmp_path / "c.json", "json") is None
    remembered = json.loads((tmp_path / "c.json").read_text())["remembered"]
    assert [r["sentence"] for r in remembered] == ["The user's name is Robin.", "The user lives in Porto."]
    assert oct((tmp_path / "c.json").stat().st_mode & 0o777) == "0o600"


def test_a_fact_told_before_three_shifts_is_still_in_the_context_after_them(llm_model: Path) -> None:
    c = make(llm_model)
    c.say(FACTS)
    talk_until_shifts(c, 3)
    assert c.dropped_turns > 1  # the turn that told them is gone ...
    assert FACTS not in cache_text(c)
    text = cache_text(c)  # ... and the note says them, once
    assert text.count(HEADER) == 1, text
    for said in ("The user's name is Robin.", "The user lives in Porto.", "The user's dog is called Rex."):
        assert said in text, text
    assert c.ledger.note_in_cache and not c.note_due
    assert_consistent(c)

    # A fact told later joins a fresh note once its turn is dropped; the older note then goes
    # with the next shift that reaches it: one note again, with both facts.
    c.say("My sister is called Maria.")
    for _ in range(200):
        text = cache_text(c)
        if "Maria." in text and "My sister" not in text and c.ledger.pinned and not any(c.ledger.notes):
            break
        c.say(FILLER[c.turn_count % len(FILLER)])
    else:
        raise AssertionError("the later fact never reached a pinned note in 200 turns")
    assert text.count(HEADER) == 1, text
    assert "The user's sister is called Maria." in text and "The user's name is Robin." in text, text
    assert_consistent(c)

    # ... and it is answered: the reply the user hears (sampled, seed 5) names the dog.
    reply = c.say("What is my dog called?")
    assert "rex" in reply.lower(), reply
    c.close()


def test_without_memory_nothing_is_noted(llm_model: Path) -> None:
    c = make(llm_model, memory=False)
    c.say(FACTS)
    talk_until_shifts(c, 2)
    assert HEADER not in cache_text(c) and "The user's name is Robin." not in cache_text(c)
    assert not c.ledger.note_in_cache
    c.close()


def test_the_note_is_the_same_whichever_path_built_the_context(llm_model: Path, tmp_path: Path) -> None:
    """Retry of the turn that holds the note, a withdrawn tentative turn, a cancelled reply and
    a session resume each leave one note that says the facts; the resumed context is the saved
    one token for token."""
    c = make(llm_model)
    c.say(FACTS)
    talk_until_shifts(c, 1)
    assert HEADER in cache_text(c)

    assert c.ledger.notes[-1] > 0  # written with the next turn's primed opening (idle time)
    c.say(FILLER[1])  # that turn now holds it
    assert c.ledger.notes[-2] > 0 and cache_text(c).count(HEADER) == 1

    # Retry takes that turn out, its note with it; the next opening carries the note again.
    text = c.retract_last_turn()
    assert text == FILLER[1]
    assert c.ledger.notes[-1] > 0 and cache_text(c).count(HEADER) == 1
    c.say(text)
    assert cache_text(c).count(HEADER) == 1 and "The user's name is Robin." in cache_text(c)

    # A shift that drops that turn keeps its note, after the system prompt: not written again.
    note = cache_text(c)[cache_text(c).index(HEADER) :].split("<|im_end|>")[0]
    talk_until_shifts(c, 2)
    assert c.ledger.pinned > 0 and not any(c.ledger.notes) and not c.note_due
    assert cache_text(c).count(HEADER) == 1 and note in cache_text(c)

    # A tentative turn taken back leaves no trace; a cancelled reply keeps the note.
    before, shifts = c.llama.input_ids[: c.n_past].tolist(), c.shifts
    list(c.stream("and also", gate=ConfirmAtPrompt(lambda: False)))
    if c.shifts == shifts:
        assert c.llama.input_ids[: c.n_past].tolist() == before
    cancel = threading.Event()
    for _ in c.stream("Tell me a long story.", cancel):
        cancel.set()
    assert cache_text(c).count(HEADER) == 1 and "The user's name is Robin." in cache_text(c)
    assert_consistent(c)

    # A resumed session holds the same tokens and the same pending state.
    session.save(c, tmp_path / "s")
    other = make(llm_model)
    res = session.load(other, tmp_path / "s")
    assert res.resumed, res.message
    assert other.llama.input_ids[: other.n_past].tolist() == c.llama.input_ids[: c.n_past].tolist()
    assert other.ledger == c.ledger and other.note_due == c.note_due
    assert [f.key for f in other.remembered()] == [f.key for f in c.remembered()]
    assert_consistent(other)
    other.close()
    c.close()


def test_a_replayed_session_opens_with_the_note(llm_model: Path, tmp_path: Path) -> None:
    """A session read again (another context size) leaves out the oldest turns: the first turn
    read opens with the note, so the facts they held are still known."""
    c = make(llm_model, n_ctx=1024)
    c.say(FACTS)
    for line in FILLER * 3:
        c.say(line)
    session.save(c, tmp_path / "s")
    c.close()
    small = make(llm_model, n_ctx=512)
    res = session.load(small, tmp_path / "s")
    assert not res.resumed and 0 < res.replayed_turns < 19
    text = cache_text(small)
    assert text.count(HEADER) == 1 and "The user's name is Robin." in text
    assert_consistent(small)
    small.close()


def test_a_forgotten_fact_is_gone_from_the_next_replys_context(llm_model: Path) -> None:
    """Forgotten before a shift: never noted. Forgotten while noted: the note in the cache is
    taken out and written again without it, before the next reply; the rest stays noted."""
    c = make(llm_model)
    c.say(FACTS)
    c.forget("home")
    talk_until_shifts(c, 2)
    text = cache_text(c)
    assert "The user's name is Robin." in text and "The user lives in" not in text
    c.say(FILLER[2])  # the note now sits in a finished turn, not only in the primed opening
    c.forget("name")
    text = cache_text(c)
    assert "The user's name is" not in text and text.count(HEADER) == 1
    assert "The user's dog is called Rex." in text
    assert [f.key for f in c.remembered()] == ["relation:dog:rex"]
    assert_consistent(c)
    c.say(FILLER[3])
    assert_consistent(c)
    c.close()


def test_restating_a_fact_is_no_repetition_for_the_sampler(llm_model: Path) -> None:
    """DRY forbids extending what the model already said; a remembered fact's value and the
    assistant's own name in its earlier replies are sequence breakers in what the sampler reads,
    so "Your name is Robin" and "My name is Aria" may be said again. The rest of the reply is
    still read as it was."""
    c = make(llm_model)
    c.say("My name is Robin.")
    assert c.amend_last_reply("Nice to meet you, Robin! Your name is Robin.", interrupted=False)
    robin = c.llama.tokenize(b" Robin", add_bos=False, special=False)
    replies, read = c.own_replies(), c.sampler_history()
    text = c.llama.detokenize(read).decode()
    assert "Robin" in c.llama.detokenize(replies).decode() and "Robin" not in text
    assert text == "Nice to meet you,\n! Your name is\n.", text
    assert all(t not in read for t in robin)
    off = make(llm_model, memory=False)
    off.say("My name is Robin.")
    off.amend_last_reply("Your name is Robin.", interrupted=False)
    assert off.sampler_history() == off.own_replies()  # memory off: the user's facts read as said
    off.say("What is your name?")
    off.amend_last_reply(f"My name is {off.persona.bot}.", interrupted=False)
    mine = off.llama.detokenize(off.sampler_history()).decode()
    assert mine.endswith("My name is\n.") and off.persona.bot not in mine, mine  # the name: always
    off.close()
    c.close()


def test_a_question_about_a_fact_opens_with_just_that_fact(llm_model: Path, tmp_path: Path) -> None:
    """ "What is my dog called?" opens its turn with a recall note holding the dog alone (a small
    model took a wrong name out of the whole note); a question about nothing remembered gets
    none. The recall note survives a session and goes with Forget; a shift's note is still due
    when only recall notes are in the cache."""
    c = make(llm_model, n_ctx=2048)
    c.say(FACTS)
    c.say("What do I need to bake bread?")  # about the user, but about nothing remembered
    assert not any(c.ledger.recalls) and not c.ledger.note_in_cache
    c.say("What is my dog called?")
    assert c.ledger.recalls[-2] > 0 and sum(1 for r in c.ledger.recalls if r) == 1
    assert c.last_stats.primed_tokens > 0  # the note follows the question: the opening stays
    text = cache_text(c)
    # after the closed question, right before the reply's header (a small model reads what is near)
    note = f"<|im_start|>system\n{HEADER} The user's dog is called Rex.<|im_end|>\n"
    assert f"What is my dog called?<|im_end|>\n{note}<|im_start|>assistant\n" in text, text
    assert text.count("The user's dog is called Rex.") == 1 and text.count(HEADER) == 1
    assert "The user's name is Robin." not in text and not c.ledger.note_in_cache
    c.say("What is your name?")
    assert "You are Aria." in cache_text(c) and HEADER not in cache_text(c).split("You are Aria.")[-1]
    assert_consistent(c)

    session.save(c, tmp_path / "s")
    other = make(llm_model, n_ctx=2048)
    assert session.load(other, tmp_path / "s").resumed
    assert other.ledger.recalls == c.ledger.recalls and cache_text(other) == cache_text(c)
    other.close()

    c.forget("relation:dog:rex")  # Forget reaches the recall notes too
    assert "The user's dog is called Rex." not in cache_text(c) and not any(c.ledger.recalls)
    assert_consistent(c)
    c.say(FILLER[0])
    assert_consistent(c)
    c.close()


def test_memory_shared_across_conversations_is_opt_in_private_and_forgettable(
    llm_model: Path, tmp_path: Path
) -> None:
    """With a SharedMemory, what one conversation was told opens the next one's context as a
    note (before any shift); the file is private; Forget takes the fact out of it; a conversation
    without one knows nothing of it; an unreadable file is set aside, not fatal."""
    store = tmp_path / "memory.json"
    c = make(llm_model)
    c.say("My name is Robin.")
    c.share_memory(SharedMemory(store))  # turned on after the fact was told: it joins
    c.say("I live in Porto.")
    assert [f.key for f in SharedMemory(store).facts] == ["name", "home"]
    assert oct(store.stat().st_mode & 0o777) == "0o600"

    c.reset()  # a new conversation
    assert [f.key for f in c.remembered()] == ["name", "home"] and not c.history
    text = cache_text(c)
    assert "The user's name is Robin." in text and "The user lives in Porto." in text
    assert c.ledger.note_in_cache
    assert_consistent(c)
    c.say("I like green tea.")
    c.forget("home")
    assert [f.key for f in SharedMemory(store).facts] == ["name", "taste:green tea"]
    assert "The user lives in Porto." not in cache_text(c)

    alone = make(llm_model)  # sharing off: nothing from the others
    assert alone.remembered() == [] and "Robin" not in cache_text(alone)
    alone.close()

    store.write_text("{not json")
    c.share_memory(SharedMemory(store))
    assert store.with_name("memory.json.bad").read_text() == "{not json"  # kept aside, as it was
    assert [f.key for f in c.remembered()] == ["taste:green tea"]  # this conversation's own stay
    c.close()
