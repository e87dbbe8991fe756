"""Talking in another language (issue #32): the setting picks the models, whisper's language
follows the turn to the model (tagged in the turn, never in the evaluated system prompt) and to
the voice, and a French, a Chinese and a Japanese question go the whole way: heard, answered,
spoken by a voice of the language. The clips are said by the most person-like voice installed for
the language (tests/support/voices.py: MBROLA's French, Open JTalk's Japanese, Piper's English;
espeak-ng's Mandarin, the only one there is)."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path

import pytest
import soundfile as sf

from app.brain.conversation import Conversation
from app.brain.persona import PINNED_TIME, Persona
from app.brain.records import LlmConfig
from app.brain.sampling import SamplingConfig
from app.brain.session import replay
from app.brain.turn_language import read_as
from app.catalog import catalog
from app.catalog.languages import (
    AUTO,
    MULTILINGUAL_WHISPER,
    language_name,
    normalize,
    whisper_choice,
    whisper_model_for,
)
from app.ears.transcriber import SttConfig, Transcriber
from app.loop.settings import AppSettings, assistant_config
from app.voice.mbrola_voices import usable
from app.voice.speaker import Speaker, SpeakerConfig, SpeakerEvent
from app.voice.synthesizer import Synthesizer
from tests.support.assistant_rig import spoken_turn
from tests.support.voices import people_like

FRENCH = "Quelle est la capitale de la France ?"


def clip_wav(text: str, language: str, out: Path) -> Path:
    """The most person-like voice installed for `language` saying `text`, as a 16 kHz WAV (a
    test tool, not the app's engine)."""
    sf.write(out, people_like(language).say(text), 16000)
    return out


def test_the_language_setting_names_a_code_and_the_model_that_hears_it(tmp_path: Path) -> None:
    assert [normalize(x) for x in ("fr", "FR", "fr-CA", "fr_FR", "French", "", "Automatic")] == [
        "fr", "fr", "fr", "fr", "fr", AUTO, AUTO,
    ]  # fmt: skip
    with pytest.raises(ValueError, match="unknown language 'xx'"):
        normalize("xx")
    english = catalog.default_model_path("whisper")
    assert ".en" in english.name and whisper_model_for("en") == english
    multilingual = catalog.models_dir() / catalog.find_entry(MULTILINGUAL_WHISPER).file
    assert whisper_model_for("fr") == whisper_model_for(AUTO) == multilingual
    assert whisper_model_for("fr", str(tmp_path / "mine.bin")) == tmp_path / "mine.bin"  # the user's choice
    cfg = assistant_config(AppSettings(language="French"), tmp_path)
    assert cfg.stt.model_path == multilingual and cfg.stt.language == "fr"
    assert cfg.persona.language == "fr" and "answer in French" in cfg.persona.render()
    assert cfg.speaker.language == "fr"
    cfg = assistant_config(AppSettings(language="xx"), tmp_path)  # a hand-edited file: automatic, not a crash
    assert cfg.persona.language == AUTO and "the language User speaks" in cfg.persona.render()


def test_a_turn_in_another_language_is_tagged_in_the_turn_only(llm_model: Path, tmp_path: Path) -> None:
    persona = Persona("Sam", "Max", now=PINNED_TIME)  # English conversation
    assert read_as("Bonjour", "fr", persona) == "[Answer in French] Bonjour"
    assert read_as("Hello", "en", persona) == read_as("Hello", "", persona) == "Hello"
    assert read_as("Bonjour", "fr", Persona(language="fr")) == "Bonjour"  # its own language
    config = LlmConfig(llm_model, n_ctx=1024, max_tokens=16, sampling=SamplingConfig(temperature=0))
    conv = Conversation(config, persona)
    try:
        system = conv.llama.input_ids[: conv.ledger.n_keep].tolist()
        conv.say("What time is it?")
        conv.say("Quelle heure est-il ?", language="fr")
        assert conv.llama.input_ids[: conv.ledger.n_keep].tolist() == system  # never re-evaluated
        cache = conv.llama.detokenize(conv.llama.input_ids[: conv.n_past].tolist()).decode()
        assert "[Answer in French] Quelle heure est-il ?" in cache
        assert cache.count("[Answer in") == 1  # the English turn has no tag
        users = [m for m in conv.history if m.role == "user"]
        assert [(m.text, m.language) for m in users] == [
            ("What time is it?", ""),
            ("Quelle heure est-il ?", "fr"),
        ]
        again = Conversation(config, persona)  # a saved conversation replayed reads it alike
        try:
            replay(again, list(conv.history))
            replayed = again.llama.detokenize(again.llama.input_ids[: again.n_past].tolist()).decode()
            assert "[Answer in French] Quelle heure est-il ?" in replayed
        finally:
            again.close()
    finally:
        conv.close()


def test_an_english_only_model_asked_for_another_language_says_what_hears_it(tmp_path: Path) -> None:
    """Automatic, or any language but English, means the multilingual model everywhere; an
    English-only model chosen for it gives way to that model when it is there, and says so."""
    models = tmp_path / "models"
    models.mkdir()
    multilingual = models / catalog.find_entry(MULTILINGUAL_WHISPER).file
    mine = tmp_path / "ggml-tiny.en.bin"
    assert whisper_choice("en", mine, models) == (mine, "")  # English: the user's model, silently
    model, said = whisper_choice("es", mine, models)  # the multilingual model is not here
    assert model == mine and "hears English only" in said and f"models fetch {MULTILINGUAL_WHISPER}" in said
    assert "Spanish" in said
    multilingual.write_bytes(b"present")
    model, said = whisper_choice(AUTO, mine, models)
    heard_with = f"every language (Automatic) is heard with {multilingual.name}"
    assert model == multilingual and said == f"ggml-tiny.en.bin hears English only: {heard_with}."
    assert whisper_choice("fr", multilingual, models) == (multilingual, "")
    assert whisper_choice(AUTO, None, models) == (multilingual, "")  # the same as for chat and the window


def test_transcribe_on_automatic_hears_spanish_as_spanish(multilingual_whisper: Path, tmp_path: Path) -> None:
    spanish = clip_wav("Hola, ¿cómo estás? Me llamo Ana.", "es", tmp_path / "es.wav")
    r = subprocess.run(
        [sys.executable, "-m", "app", "transcribe", "--json", "-l", "auto", str(spanish)],
        capture_output=True,
        text=True,
        timeout=300,
        stdin=subprocess.DEVNULL,
    )
    assert r.returncode == 0, r.stderr[-2000:]
    row = json.loads(r.stdout.splitlines()[-1])
    assert row["language"] == "es" and "hola" in row["text"].lower(), row


def test_automatic_reports_the_language_of_each_utterance(multilingual_whisper: Path, tmp_path: Path) -> None:
    """Automatic finds the language in every utterance (it is not kept from the first one)."""
    stt = Transcriber(SttConfig(multilingual_whisper, language=AUTO))
    english = clip_wav("What is the weather like in London today?", "en", tmp_path / "en.wav")
    french = clip_wav("Raconte-moi une histoire de dragon.", "fr", tmp_path / "fr.wav")
    heard = [stt.transcribe(sf.read(w, dtype="float32")[0]) for w in (english, french, english)]
    assert [t.language for t in heard] == ["en", "fr", "en"], [(t.text, t.language) for t in heard]
    fixed = Transcriber(SttConfig(multilingual_whisper, language="fr")).transcribe(
        sf.read(french, dtype="float32")[0]
    )
    assert fixed.language == "fr" and "histoire" in fixed.text.lower()


def test_automatic_finds_each_utterances_language_while_it_is_spoken(
    virtual_audio, llm_model: Path, multilingual_whisper: Path, tmp_path: Path
) -> None:
    """Hands-free on Automatic, whisper finds an utterance's language in its first second while
    the rest is said, and transcribes the utterance in it: a switch from French to English is
    followed, each utterance found while spoken."""
    french = clip_wav(
        "Bonjour, je voudrais savoir quel temps il fera demain à Paris.", "fr", tmp_path / "f.wav"
    )
    english = clip_wav("What is the weather like in London today?", "en", tmp_path / "e.wav")
    stt = SttConfig(multilingual_whisper, language=AUTO)
    rec, a, _ = spoken_turn(virtual_audio, llm_model, multilingual_whisper, [french, english], stt=stt)
    users = rec.of("user")
    assert [u.language for u in users] == ["fr", "en"], rec.story()
    assert "bonjour" in users[0].text.lower() and "london" in users[1].text.lower(), rec.story()
    assert a.hearing.languages_found >= 2


def test_a_reply_is_spoken_by_a_voice_of_its_language(virtual_audio) -> None:
    events: list[SpeakerEvent] = []
    done = threading.Event()

    def on_event(e: SpeakerEvent) -> None:
        events.append(e)
        if e.kind == "queue_empty":
            done.set()

    sp = Speaker(SpeakerConfig(language="en"), on_event=on_event)
    try:
        english = sp._engine_for("en")
        french = sp._engine_for("fr")
        assert french is not english and french is sp._engine_for("fr")  # opened once
        assert french.voice is not None and "fr" in french.voice  # espeak-ng's French voice
        sp.say("Bonjour, je m'appelle Max.", language="fr")
        assert done.wait(30)
        assert [e.kind for e in events if e.kind.startswith("sentence")] == [
            "sentence_started",
            "sentence_finished",
        ]
    finally:
        sp.close()


def test_each_language_is_spoken_by_mbrolas_or_espeak_ngs_own_voice_for_it() -> None:
    """pyttsx3 lists one language per voice; espeak-ng's voice files say more (Mandarin's voice
    is `cmn` and speaks whisper's `zh`) and which voice a language prefers (France's French).
    An installed MBROLA voice for the language comes first (mbrola_voices.py)."""
    synth = Synthesizer.get()
    assert synth.find_voice("zh").id.endswith("/cmn")  # (MBROLA's cn1 cannot load: left out)
    for language, database in (("fr", "fr1"), ("de", "de6")):
        own = "mb/mb-" + database if usable(database) else "/" + language
        assert synth.find_voice(language).id.endswith(own), (language, synth.find_voice(language))
    assert synth.find_voice("gmw/en-us").id == "gmw/en-us"  # an id is still an id
    assert synth.find_voice("roa/fr").id == "roa/fr"


def han(text: str) -> bool:
    return any("\u4e00" <= c <= "\u9fff" for c in text)


@pytest.mark.parametrize(
    ("language", "question", "heard"),
    [
        ("fr", FRENCH, lambda text: "capitale" in text.lower()),
        # espeak-ng's Mandarin is far from a person's: whisper base writes few of its words
        # right (bench/languages), but it writes them in Han characters, and they go the whole way
        ("zh", "法国的首都是哪里", han),
        ("ja", "一週間は何日ですか", lambda text: "何日" in text),
    ],
    ids=["French", "Chinese", "Japanese"],
)
def test_a_question_is_heard_answered_and_spoken_in_its_language(
    virtual_audio,
    llm_model: Path,
    multilingual_whisper: Path,
    tmp_path: Path,
    language: str,
    question: str,
    heard: Callable[[str], bool],
) -> None:
    said_by = people_like(language)
    if language == "ja" and not said_by.people_like:
        pytest.skip(
            "no Japanese voice to say the question (packaging/debian-deps.sh test installs Open JTalk)"
        )
    wav = tmp_path / "q.wav"
    sf.write(wav, said_by.say(question), 16000)
    rec, a, turn = spoken_turn(
        virtual_audio,
        llm_model,
        multilingual_whisper,
        wav,
        after_s=0.5,
        stt=SttConfig(multilingual_whisper, language=language),
        persona=Persona("Sam", "Max", now=PINNED_TIME, language=language),
        speaker=SpeakerConfig(language=language),
    )
    user = rec.of("user")[-1]
    assert heard(user.text) and user.language == language, rec.story()
    assert a.llm.brain is not None
    assert f"answer in {language_name(language)}" in a.llm.brain.system_prompt
    spoken_by = a.speaker.voice  # the configured voice: the system's for the language
    assert spoken_by is not None and spoken_by.id == Synthesizer.get().find_voice(language).id
    assert spoken_by.id.endswith("/cmn") or any(x.split("-")[0] == language for x in spoken_by.languages)
    spoken = [e for e in rec.of("sentence") if e.progress == "sentence_started"]
    assert spoken and turn, rec.story()
