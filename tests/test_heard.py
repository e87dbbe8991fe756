"""Memory = what was heard: after a barge-in the assistant remembers the part of its reply that
was spoken, not the text generated ahead of the voice (issue #19, point 1)."""

from __future__ import annotations

import time

import pytest

from app.loop.heard import HeardReply
from app.voice.speaker import SpeakerConfig, SpeakerEvent
from app.voice.synthesizer import Synthesizer
from tests.support.assistant_rig import Recorder, make


def test_speech_knows_which_words_had_started() -> None:
    speech = Synthesizer.get().render("Once upon a time, there was a fox.")
    assert len(speech.words) >= 7, speech.words
    samples = [sample for _char, sample in speech.words]
    assert samples == sorted(samples) and samples[-1] < len(speech.pcm)
    assert speech.heard(0) == ""
    assert speech.heard(samples[1] + 1) == "Once upon"
    assert speech.heard(samples[3] + 1) == "Once upon a time,", speech.words
    assert speech.heard(len(speech.pcm)) == "Once upon a time, there was a fox."


def test_heard_reply_maps_speaker_events_onto_the_reply_text() -> None:
    """Pure bookkeeping, fed hand-made speaker events (the real ones are in the tests below)."""
    reply = "**Hello** there. This is the *second* sentence. And a third."
    h = HeardReply()
    h.queued(1, "**Hello** there.", reply)
    h.queued(2, "This is the *second* sentence.", reply)
    h.queued(3, "And a third.", reply)
    assert h.text(reply) == ""
    h.on_speaker(SpeakerEvent("sentence_finished", "Hello there.", 1))
    assert h.text(reply) == "**Hello** there."
    # the spoken form had its markdown removed: words are counted, not characters
    h.on_speaker(SpeakerEvent("sentence_cut", "This is the second sentence.", 2, heard="This is the second"))
    assert h.text(reply) == "**Hello** there. This is the *second*"
    h.on_speaker(SpeakerEvent("sentence_cut", "Other", 99, heard="Other"))  # not this reply's
    assert h.text(reply) == "**Hello** there. This is the *second*"


@pytest.mark.parametrize(
    ("max_tokens", "voice"),
    [(400, "joe"), (70, "joe"), (400, "gmw/en-us")],
    ids=["while-generating", "after-generation", "while-generating-system-voice"],
)
def test_barge_in_remembers_only_what_was_spoken(
    virtual_audio, llm_model, whisper_model, natural_voice_model, max_tokens, voice
) -> None:
    """With either engine (the natural voice's word timings come from its phoneme durations)."""
    rec = Recorder()
    a = make(
        llm_model,
        whisper_model,
        rec,
        max_tokens=max_tokens,
        use_microphone=False,
        speaker=SpeakerConfig(voice=voice),
    )
    try:
        a.send_text("Tell me a long story about a dragon who loves tea.")
        started = lambda e: e.progress == "sentence_started"  # noqa: E731
        first = rec.wait_for("sentence", 60, started)
        rec.wait_for("sentence", 60, lambda e: started(e) and e.index > first.index)
        time.sleep(0.5)  # a few words into the second sentence
        a.interrupt()
        cut = rec.wait_for("sentence", 10, lambda e: e.progress == "sentence_cut")
        heard = rec.wait_for("heard", 60)
        a.send_text("What did you just say?")  # the conversation goes on from there
        nxt = rec.wait_for("turn", 90, lambda e: e.user == "What did you just say?")
        conv = a.conversation
        assert conv is not None
        said = conv.history[1]
        assert said.role == "assistant" and said.interrupted
        assert said.text == heard.text and said.unspoken == heard.unspoken
        # what the model has in its context for that reply is exactly the heard text
        start, end = conv.reply_spans()[-2]
        in_cache = conv.llama.detokenize(conv.llama.input_ids[start:end].tolist()).decode().strip()
    finally:
        a.shutdown()
    report = rec.of("turn")[0].record()
    if report["unspoken"]:  # cut while written: reported as remembered, the rest apart
        assert report["reply"] == said.text and report["unspoken"] == said.unspoken
    generated = " ".join(part for part in (report["reply"], report["unspoken"]) if part)
    assert generated.startswith(said.text) and len(said.text) < len(generated)
    assert said.unspoken and generated.endswith(said.unspoken)
    assert said.text.endswith(cut.heard.split()[-1])  # to the word the voice had started
    assert in_cache == said.text
    assert nxt.reply
    assert conv.cache_pos_max() == conv.n_past - 1
