"""Sentence splitting for streamed speech and speakable text (pure functions)."""

import pytest

from app.voice.sentences import SentenceSplitter, speakable


def split_streamed(text: str, step: int = 3, **kw) -> list[str]:
    s = SentenceSplitter(**kw)
    out: list[str] = []
    for i in range(0, len(text), step):
        out += s.feed(text[i : i + step])
    return out + s.flush()


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Hello there! How are you? I am fine.", ["Hello there!", "How are you?", "I am fine."]),
        ("Dr. Smith arrived. He sat down.", ["Dr. Smith arrived.", "He sat down."]),
        ("Pi is about 3.14 today. Yes.", ["Pi is about 3.14 today.", "Yes."]),
        ("Meet me at 10:30 tomorrow. Bring tea.", ["Meet me at 10:30 tomorrow.", "Bring tea."]),
        ("Use tools, e.g. a hammer. Then rest.", ["Use tools, e.g. a hammer.", "Then rest."]),
        ("The U.S. Army is large. It is old.", ["The U.S. Army is large.", "It is old."]),
        ("Well... I think so. Maybe.", ["Well... I think so.", "Maybe."]),
        ("Hmm… not sure. Okay.", ["Hmm… not sure.", "Okay."]),
        ('She said "Stop. Now." and left. Fine.', ['She said "Stop. Now." and left.', "Fine."]),
        ("Really?! Wow. Great.", ["Really?!", "Wow.", "Great."]),
        ("First line\nSecond line", ["First line", "Second line"]),
        ("It costs $4.50, i.e. cheap. Buy it.", ["It costs $4.50, i.e. cheap.", "Buy it."]),
        (
            "Mr. and Mrs. Jones came at 5 p.m. today. Good.",
            ["Mr. and Mrs. Jones came at 5 p.m. today.", "Good."],
        ),
        ("J. R. R. Tolkien wrote books. Many.", ["J. R. R. Tolkien wrote books.", "Many."]),
        ("No terminal punctuation at the end", ["No terminal punctuation at the end"]),
        ("Version 2.0 is out. Get it.", ["Version 2.0 is out.", "Get it."]),
        ("(It works.) Next.", ["(It works.)", "Next."]),
        ("Größe ist relativ. Ja!", ["Größe ist relativ.", "Ja!"]),
        # every script's own sentence ends (issue #32 point 4)
        ("今天天气很好。明天会下雨！你呢？", ["今天天气很好。", "明天会下雨！", "你呢？"]),
        (
            "はい、わかりました。「それは本当？」と彼は言った。次です。",
            ["はい、わかりました。", "「それは本当？」と彼は言った。", "次です。"],
        ),
        ("मेरा नाम राम है। आप कैसे हैं?", ["मेरा नाम राम है।", "आप कैसे हैं?"]),
        ("كيف حالك؟ أنا بخير.", ["كيف حالك؟", "أنا بخير."]),
        ("یہ اچھا ہے۔ شکریہ۔", ["یہ اچھا ہے۔", "شکریہ۔"]),
        ("¿Qué tal? ¡Muy bien! Gracias.", ["¿Qué tal?", "¡Muy bien!", "Gracias."]),
        ("Τι κάνεις; Καλά.", ["Τι κάνεις;", "Καλά."]),
        ("I came; I saw. Done.", ["I came; I saw.", "Done."]),
        ("Ça va ? Oui.", ["Ça va ?", "Oui."]),
        (
            "Il a dit « Bonjour. Ça va ? » puis il est parti. Fin.",
            ["Il a dit « Bonjour. Ça va ? » puis il est parti.", "Fin."],
        ),
    ],
)
def test_sentences(text: str, expected: list[str]) -> None:
    assert split_streamed(text) == expected
    assert split_streamed(text, step=1) == expected
    assert split_streamed(text, step=len(text)) == expected


def test_sentence_emitted_as_soon_as_complete() -> None:
    s = SentenceSplitter()
    assert s.feed("Hello world.") == []  # could still be "world.com" or a decimal
    assert s.feed(" Next") == ["Hello world."]
    assert s.flush() == ["Next"]


def test_run_on_sentence_cut_at_clause() -> None:
    text = (
        "This sentence goes on and on without stopping, because the model likes to talk, "
        "and it keeps adding clauses, one after another, until the listener is tired"
    )
    out = split_streamed(text, max_chars=80, min_chars=30)
    assert len(out) >= 2
    assert all(len(x) <= 100 for x in out)
    assert " ".join(out) == text
    assert out[0].endswith(",")


def test_flush_remainder() -> None:
    s = SentenceSplitter()
    assert s.feed("One. Two") == ["One."]
    assert s.flush() == ["Two"]
    assert s.flush() == []


@pytest.mark.parametrize(
    ("raw", "spoken"),
    [
        ("**Bold** and __strong__ text", "Bold and strong text"),
        ("# Heading", "Heading"),
        ("- first item", "first item"),
        ("1. numbered item", "numbered item"),
        ("Use `pip install` now", "Use pip install now"),
        ("```python", ""),
        ("See https://www.example.com/some/path?q=1 for more", "See example.com for more"),
        ("Visit http://docs.python.org/3/", "Visit docs.python.org"),
        ("Read [the docs](http://x.y/z) today", "Read the docs today"),
        ("Great job 🎉👍!", "Great job !"),
        ("Weather ☀️ is nice", "Weather is nice"),
        ("Café naïve 東京", "Café naïve 東京"),
        ("snake_case_name stays", "snake_case_name stays"),
        ("2 * 3 = 6", "2 * 3 = 6"),
    ],
)
def test_speakable(raw: str, spoken: str) -> None:
    assert speakable(raw) == spoken


def test_first_chunk_may_end_at_a_clause() -> None:
    text = "Well, the moon is about 384,000 kilometres away, which is far. It is bright."
    out = split_streamed(text, first_clause_chars=20)
    assert out[0] == "Well, the moon is about 384,000 kilometres away,"
    assert out[1:] == ["which is far.", "It is bright."]
    assert split_streamed(text)[0] == "Well, the moon is about 384,000 kilometres away, which is far."
    # the assistant's setting: a short opener is spoken on its own, the rest as sentences
    assert split_streamed("I'm sorry, I can't do that. Try again.", first_clause_chars=5) == [
        "I'm sorry,",
        "I can't do that.",
        "Try again.",
    ]


def test_first_chunk_may_end_after_some_words() -> None:
    """The natural voice's setting: a first sentence without a clause break is cut after four
    words, so its synthesis (which waits for the whole chunk) is short; later ones stay whole."""
    words = {"first_clause_chars": 5, "first_words": 4}
    assert split_streamed("The capital of France is Paris. It is big.", **words) == [
        "The capital of France",
        "is Paris.",
        "It is big.",
    ]
    assert split_streamed("Sure. The capital of France is Paris.", **words)[0] == "Sure."
    assert split_streamed("Yes, it is. Paris is the capital of France.", **words) == [
        "Yes, it is.",
        "Paris is the capital of France.",
    ]
    # a short sentence is not cut before its end
    assert split_streamed("It is Paris.", **words) == ["It is Paris."]


def test_a_long_cjk_sentence_is_cut_at_a_comma() -> None:
    """No spaces anywhere: the run-on rule still finds the clause breaks (，、)."""
    text = "我们今天去了公园，看到了很多花和树，" * 8 + "然后回家了。"
    pieces = SentenceSplitter(max_chars=40, min_chars=10).feed(text)
    assert pieces and all(len(p) <= 60 and p.endswith("，") for p in pieces)


def test_speakable_keeps_every_script() -> None:
    text = "Привет, мир! 你好。नमस्ते। مرحبا بكم. Γειά σου; こんにちは、世界。"
    assert speakable(text) == text
