"""Whisper's inventions never become turns; short real answers always do (issue #37).

The rules (app/ears/hallucinations.py) on their own, then the real transcriber (tiny.en q4_0)
on pieces of espeak-ng questions shorter than a word and on short answers in two voices.
bench/fragments.py measures the same over more voices, Piper's natural voice among them."""

from __future__ import annotations

import numpy as np
import pytest

from app.ears.hallucinations import MIN_WORD_MS, caption_phrase, invented, stock_phrase, syllables, unloop
from tests.conftest import espeak, load16k


def test_loops_are_cut_to_one_saying_and_other_text_is_left_alone() -> None:
    assert unloop("Nope Nope Nope Nope Nope Nope") == ("Nope", True)
    assert unloop("F-F-F-F-F-F") == ("F", True)
    assert unloop("Bandit, Bandit, Bandit, Bandit, Bandit") == ("Bandit", True)
    assert unloop("go to the best, go to the best, go to the best, go to the best") == (
        "go to the best",
        True,
    )
    for said in ("No, no, no.", "What is the capital of France?", "A well-known fact.", "bye bye"):
        assert unloop(said) == (said, False)


def test_what_the_rules_drop_and_what_they_keep() -> None:
    assert invented("Okay", 500, near_silent=False, looped=True) == "whisper looped on a stock phrase"
    assert invented("Thanks for watching!", 900, near_silent=False) == "a caption phrase"
    assert invented("Thank you for watching, everyone.", 2000, near_silent=False) == "a caption phrase"
    assert invented("Thank you.", 150, near_silent=True) == "shorter than a word"
    assert invented("Thank you.", 400, near_silent=True) == "hallucination on near-silent audio"
    assert "more words than" in invented("But I'm not gonna do it, I'm not gonna do it", 600, False)
    kept = ("Okay.", "Thanks.", "Thank you.", "Five.", "No.", "Nope", "Thanks for watching the kids today.")
    for said in kept:
        assert invented(said, 260 if len(said) < 12 else 2500, near_silent=False) is None, said
    assert stock_phrase("Thank you!") and not stock_phrase("Thank you for the tea.")
    assert not caption_phrase("Thanks for watching the kids today.")
    assert syllables("Set a timer for 10 minutes.") == 10 and syllables("Как дела?") is None


def _room(rng: np.random.Generator, seconds: float) -> np.ndarray:
    return (rng.standard_normal(int(seconds * 16000)) * 1e-3).astype(np.float32)


def test_pieces_shorter_than_a_word_are_never_turns(transcriber, speech_dir) -> None:
    rng = np.random.default_rng(7)
    turns = []
    for i, question in enumerate(("Please tell me a short joke about cats.", "What time is it right now?")):
        clip = load16k(espeak(question, speech_dir / f"piece-{i}.wav", voice=("en-us", "en-gb")[i]))
        loud = np.nonzero(np.abs(clip) > 0.01)[0]
        for _ in range(12):
            length = int(rng.uniform(0.06, MIN_WORD_MS / 1000 - 0.04) * 16000)  # <= 9 frames of 20 ms
            start = int(rng.integers(loud[0], loud[-1] - length))
            piece = np.concatenate([_room(rng, 0.2), clip[start : start + length], _room(rng, 0.05)])
            result = transcriber.transcribe(piece)
            if not result.rejected:
                turns.append((question, start, result.text))
    assert turns == []


@pytest.mark.parametrize("voice", ["en-us", "en-gb"])
def test_short_real_answers_are_turns(transcriber, speech_dir, voice) -> None:
    lost = {}
    for answer in ("Okay.", "Thanks.", "Five.", "Yes.", "No.", "Sure.", "Thank you."):
        wav = espeak(answer, speech_dir / f"answer-{voice}-{answer.strip('.')}.wav", voice=voice, wpm=150)
        result = transcriber.transcribe(np.concatenate([np.zeros(3200, np.float32), load16k(wav)]))
        if result.rejected:
            lost[answer] = (result.raw_text, result.reason)
    assert lost == {}


def test_each_languages_caption_inventions_are_dropped_and_its_sentences_kept() -> None:
    """whisper's multilingual models invent their training captions in the language heard
    (issue #32 point 4); sentences that merely share a word with them are the user's."""
    for invention in (
        "Sous-titres réalisés par la communauté d'Amara.org",
        "Merci d'avoir regardé cette vidéo !",
        "Untertitel im Auftrag des ZDF, 2021",
        "Vielen Dank fürs Zuschauen!",
        "Subtítulos realizados por la comunidad de Amara.org",
        "¡Suscríbete al canal!",
        "Sottotitoli creati dalla comunità Amara.org",
        "Продолжение следует...",
        "Субтитры сделал DimaTorzok",
        "ご視聴ありがとうございました",
        "字幕由Amara.org社区提供",
        "시청해주셔서 감사합니다.",
    ):
        assert invented(invention, 2000, near_silent=False) == "a caption phrase", invention
    for said in (
        "Merci beaucoup pour ton aide, c'est gentil.",
        "Ich brauche Untertitel für meinen Film. Kannst du helfen?",
        "¿Puedes ver el video conmigo?",
        "Спасибо, а какая завтра погода?",
        "今日はありがとう。明日も話そう。",
        "Untertitel anschalten, bitte.",
        "Sous-titres en français, s'il te plaît.",
    ):
        assert invented(said, 3000, near_silent=False) is None, said
    assert stock_phrase("Merci.") and stock_phrase("Спасибо!") and stock_phrase("ありがとうございました。")
    assert invented("Danke.", 600, near_silent=True) and invented("Danke.", 600, near_silent=False) is None


def test_a_dropped_transcript_says_which_words_were_dropped() -> None:
    from app.loop.events import Transcript

    said = Transcript(
        "Tell me about the moon.", rejected=True, reason="more words than 900 ms of speech holds"
    )
    assert (
        said.why_dropped()
        == "Not taken as a turn: “Tell me about the moon.” (more words than 900 ms of speech holds)"
    )
    assert (
        Transcript("", rejected=True, reason="no speech detected").why_dropped().startswith("Nothing heard")
    )
