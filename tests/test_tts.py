"""Speech output on the real virtual speaker: speech is heard, stop is fast, order and gaps,
with both engines (the natural voice and espeak-ng's system voice)."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import psutil
import pytest
import soundfile as sf

from app.voice.speaker import Speaker, SpeakerConfig, SpeakerEvent
from app.voice.synthesizer import Synthesizer
from tests.support.monitor import Monitor

LOUD = 0.003


def sound_spans(times: np.ndarray, rms: np.ndarray, min_gap: float = 0.25) -> list[tuple[float, float]]:
    """(start, end) monotonic times of sound, merging gaps shorter than min_gap (word pauses)."""
    loud = times[rms > LOUD]
    if len(loud) == 0:
        return []
    spans = [[loud[0], loud[0]]]
    for t in loud[1:]:
        if t - spans[-1][1] > min_gap:
            spans.append([t, t])
        else:
            spans[-1][1] = t
    return [(a, b) for a, b in spans]


@pytest.fixture
def events() -> list[SpeakerEvent]:
    return []


ENGINES = {"natural": "joe", "system": "gmw/en-us"}


@pytest.fixture(params=sorted(ENGINES))
def speaker(request, virtual_audio, natural_voice_model, events):
    sp = Speaker(SpeakerConfig(voice=ENGINES[request.param]), on_event=events.append)
    assert sp.voice is not None and sp.voice.engine == request.param and not sp.notice
    yield sp
    sp.close()


def test_synthesizer_makes_pcm_without_files_or_aplay(tmp_path: Path) -> None:
    synth = Synthesizer.get()
    before = set(Path("/tmp").iterdir())
    pcm = synth.synthesize("Hello, this is a test of the voice.")
    assert pcm.dtype == np.float32 and len(pcm) > synth.sample_rate * 0.8
    assert np.sqrt(np.mean(pcm**2)) > 0.01
    assert not [p for p in set(Path("/tmp").iterdir()) - before if p.suffix == ".wav"]
    assert not [p for p in psutil.process_iter(["name"]) if p.info["name"] == "aplay"]
    # Calls do not stick to a file or return early: the same text gives the same audio again.
    again = synth.synthesize("Hello, this is a test of the voice.")
    assert abs(len(again) - len(pcm)) < 0.05 * len(pcm)  # espeak varies by a few ms
    assert abs(np.sqrt(np.mean(again**2)) - np.sqrt(np.mean(pcm**2))) < 0.01


def test_voices_and_lookup() -> None:
    synth = Synthesizer.get()
    assert len(synth.voices) > 10
    assert synth.find_voice("en-us").languages
    with pytest.raises(ValueError, match="list-voices"):
        synth.find_voice("no-such-voice-xyz")


def test_the_voice_and_rate_asked_for_are_the_ones_that_speak() -> None:
    """The voice, rate and volume reach espeak-ng itself (through pyttsx3's queued properties,
    every sentence was said by the default voice at 200 wpm, whatever was configured)."""
    synth = Synthesizer.get()
    text = "This is a test of the speaking rate."
    slow, fast = (synth.render(text, "gmw/en-us", rate=r) for r in (110, 330))
    assert len(slow.pcm) > 1.8 * len(fast.pcm), (len(slow.pcm), len(fast.pcm))
    french = synth.render("Bonjour, je m'appelle Max.", "roa/fr", rate=150)
    assert synth.current_voice() == "roa/fr"
    english = synth.render("Bonjour, je m'appelle Max.", "gmw/en-us", rate=150)
    assert synth.current_voice() == "gmw/en-us" and not np.array_equal(french.pcm, english.pcm)
    synth.render("Bonjour", "roa/fr")
    synth.render("Hello")  # no voice named: espeak-ng's as opened, not the last one set
    assert synth.current_voice() != "roa/fr"
    quiet = synth.render(text, "gmw/en-us", rate=200, volume=0.3)
    loud = synth.render(text, "gmw/en-us", rate=200, volume=1.0)
    assert np.abs(quiet.pcm).max() < 0.6 * np.abs(loud.pcm).max()


def test_an_installed_mbrola_voice_speaks_its_language_at_its_own_rate(multilingual_whisper) -> None:
    """MBROLA's French (made from a person's diphones) is the system voice for French when
    installed, and its sound is labelled with its database's rate (16 kHz), not espeak-ng's."""
    import soxr

    from app.ears.transcriber import SttConfig, Transcriber
    from app.voice.mbrola_voices import usable

    synth = Synthesizer.get()
    if not usable("fr1"):
        pytest.skip("no MBROLA French voice (packaging/debian-deps.sh test installs mbrola-fr1)")
    assert synth.find_voice("fr").id == "mb/mb-fr1" and synth.rate_of("fr") == 16000
    assert not synth.find_voice("en").id.startswith("mb/")  # English keeps espeak-ng's voice
    speech = synth.render("Bonjour, je m'appelle Max.", "fr", rate=150)
    assert speech.sample_rate == 16000 and synth.current_voice() == "mb/mb-fr1"
    assert speech.words and speech.words[-1][1] < len(speech.pcm)
    audio = soxr.resample(speech.pcm, speech.sample_rate, 16000).astype(np.float32)
    heard = Transcriber(SttConfig(multilingual_whisper, language="fr")).transcribe(audio).text
    assert "bonjour" in heard.lower() and "appelle" in heard.lower(), heard


def test_spoken_audio_reaches_the_speaker_in_order(speaker, events, tmp_path) -> None:
    mon = Monitor(tmp_path / "levels")
    speaker.say("The first sentence is short.")
    speaker.say("And the second sentence follows it.")
    assert speaker.wait(30)
    time.sleep(0.3)
    times, rms = mon.stop()
    kinds = [(e.kind, e.index) for e in events]
    assert kinds == [
        ("sentence_started", 1),
        ("sentence_finished", 1),
        ("sentence_started", 2),
        ("sentence_finished", 2),
        ("queue_empty", -1),
    ]
    spans = sound_spans(times, rms)
    assert spans, "nothing was heard on the virtual speaker"
    heard = sum(b - a for a, b in spans)
    assert heard > 2.0
    # The gap between the two sentences (sentence N+1 was synthesized while N played).
    finished1 = events[1].t
    started2 = events[2].t
    assert started2 - finished1 < 0.15


def test_a_sentence_said_next_up_goes_ahead_of_those_waiting(speaker, events) -> None:
    """An announcement during a reply: after the sentence playing, before the rest, all heard."""
    speaker.say("The first sentence of a reply is being spoken now.")
    speaker.say("The second sentence waits its turn.")
    speaker.say("And the third one waits too.")
    deadline = time.monotonic() + 30
    while not any(e.kind == "sentence_started" for e in events) and time.monotonic() < deadline:
        time.sleep(0.01)
    speaker.say("Your timer is done.", next_up=True)
    assert speaker.wait(60)
    started = [e.index for e in events if e.kind == "sentence_started"]
    assert started == [1, 4, 2, 3]
    assert not any(e.kind == "sentence_cut" for e in events)


def test_stop_silences_within_100ms(speaker, events, tmp_path) -> None:
    mon = Monitor(tmp_path / "levels")
    speaker.say("This is a long sentence that keeps going so that it can be interrupted in the middle.")
    speaker.say("This one must never be heard at all.")
    while not any(e.kind == "sentence_started" for e in events):
        time.sleep(0.005)
    time.sleep(1.0)
    t_stop = time.monotonic()
    t0 = time.perf_counter()
    speaker.stop()
    returned_ms = (time.perf_counter() - t0) * 1000
    time.sleep(1.5)
    times, rms = mon.stop()
    loud_after = times[(rms > LOUD) & (times > t_stop)]
    tail_ms = (loud_after.max() - t_stop) * 1000 if len(loud_after) else 0.0
    print(f"stop latency {tail_ms:.1f} ms, stop() returned in {returned_ms:.1f} ms")
    assert tail_ms <= 100, f"sound continued {tail_ms:.0f} ms after stop()"
    assert returned_ms < 250  # "returns promptly" (it aborts the stream; no waiting on threads)
    assert not speaker.busy
    assert not any(e.kind == "sentence_started" and e.index == 2 for e in events)
    # The speaker still works after a stop.
    speaker.say("Back again.")
    assert speaker.wait(20)


def test_a_pause_between_sentences_is_not_a_hole_and_a_stall_inside_one_is(
    virtual_audio, natural_voice_model, events
) -> None:
    """The real device runs dry in both cases and PortAudio reports both (late: on the next
    write but one); only the stall inside a sentence counts as a hole (and grows the buffer)."""
    sp = Speaker(SpeakerConfig(voice="joe", latency=0.2, latency_most=0.2), on_event=events.append)
    dry: list[int] = []
    sp.on_gap = lambda: dry.append(sp.holes)
    try:
        for _ in range(2):  # the next sentence is held, so the device plays out and runs dry
            first = sp.say("A short sentence.")
            sp.say("Then another one.", held=True)
            while not any(e.kind == "sentence_finished" and e.index == first for e in events):
                time.sleep(0.02)
            time.sleep(0.5)
            sp.release_held()
            assert sp.wait(30)
        assert len(dry) >= 2 and sp.holes == 0
        blocks = [0]

        def late_writer(samples, rate, latency_s) -> None:
            blocks[0] += 1
            if blocks[0] == 10:
                time.sleep(0.6)  # the playback thread stalls mid-sentence, past the 200 ms buffer

        sp.on_output = late_writer
        sp.say("A longer sentence, so that the playback thread stalls in the middle of it.")
        assert sp.wait(30)
        assert sp.holes >= 1
    finally:
        sp.close()


def test_nothing_left_running(virtual_audio) -> None:
    before = {t.name for t in threading.enumerate()}
    sp = Speaker()
    sp.say("Short.")
    sp.wait(20)
    sp.close()
    after = {t.name for t in threading.enumerate()}
    assert not {n for n in after - before if n.startswith("speaker-")}
    assert not [p for p in psutil.process_iter(["name"]) if p.info["name"] == "aplay"]


def test_output_device_failure_is_an_event_not_a_crash(virtual_audio) -> None:
    events: list[SpeakerEvent] = []
    sp = Speaker(SpeakerConfig(device=987), on_event=events.append)
    sp.say("Hello.")
    sp.wait(20)
    sp.close()
    errors = [e for e in events if e.kind == "error"]
    assert errors and "audio output failed" in errors[0].message


def test_say_cli_writes_wav_and_lists_voices(tmp_path: Path) -> None:
    out = tmp_path / "hello.wav"
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "app",
            "say",
            "--out",
            str(out),
            "--rate",
            "150",
            "**Hello** world, see https://example.com/x",
        ],
        capture_output=True,
        text=True,
    )
    assert r.returncode == 0, r.stderr
    data, sr = sf.read(out)
    assert sr == 22050 and len(data) > sr * 0.5
    v = subprocess.run([sys.executable, "-m", "app", "say", "--list-voices"], capture_output=True, text=True)
    assert v.returncode == 0 and "en-us" in v.stdout


def test_say_cli_plays_on_the_speaker(virtual_audio, tmp_path) -> None:
    mon = Monitor(tmp_path / "levels")
    r = subprocess.run(
        [sys.executable, "-m", "app", "say", "Testing the speaker. Two sentences."],
        capture_output=True,
        text=True,
        timeout=60,
    )
    times, rms = mon.stop()
    assert r.returncode == 0, r.stdout + r.stderr
    assert sound_spans(times, rms)


def test_no_tts_engine_degrades_to_text_only(monkeypatch, tmp_path) -> None:
    """Narrow unit test with a labelled fake: the synthesizer factory raises as it does when
    libespeak-ng is missing (and no natural voice is downloaded: an empty models folder). The
    real no-engine path cannot be produced with espeak installed."""
    from app.voice import voices
    from app.voice.synthesizer import TtsUnavailable

    def missing():
        raise TtsUnavailable("pyttsx3/espeak-ng unavailable (fake); install espeak-ng")

    monkeypatch.setattr(voices.Synthesizer, "get", staticmethod(missing))
    monkeypatch.setenv("TALK_LLAMA_MODELS", str(tmp_path))
    events: list[SpeakerEvent] = []
    sp = Speaker(on_event=events.append)
    assert not sp.available
    sp.say("Hello")
    sp.close()
    assert events and events[0].kind == "error" and "install espeak-ng" in events[0].message


@pytest.mark.parametrize("damage", ["truncated", "not-onnx"])
def test_a_natural_voice_that_cannot_load_falls_back_to_the_system_voice(
    natural_voice_model, tmp_path, monkeypatch, damage
) -> None:
    """The catalog voice damaged in a models folder of its own: the Speaker speaks with espeak
    and its notice says what happened and what to do."""
    folder = tmp_path / "models"
    folder.mkdir()
    model = folder / natural_voice_model.name
    data = natural_voice_model.read_bytes()
    model.write_bytes(data[: len(data) // 2] if damage == "truncated" else b"not a model at all")
    config = natural_voice_model.with_name(natural_voice_model.name + ".json")
    (folder / config.name).write_bytes(config.read_bytes())
    monkeypatch.setenv("TALK_LLAMA_MODELS", str(folder))
    events: list[SpeakerEvent] = []
    sp = Speaker(on_event=events.append)
    try:
        assert sp.available and sp.voice is None  # espeak's default voice speaks
        assert "could not load" in sp.notice and "models fetch joe" in sp.notice, sp.notice
        assert "Speaking with the system voice" in sp.notice
    finally:
        sp.close()


def test_a_users_piper_file_that_is_not_a_model_falls_back(tmp_path, natural_voice_model) -> None:
    bogus = tmp_path / "mine.onnx"
    bogus.write_bytes(b"\x08garbage")
    config = natural_voice_model.with_name(natural_voice_model.name + ".json")
    (tmp_path / "mine.onnx.json").write_bytes(config.read_bytes())
    sp = Speaker(SpeakerConfig(voice=str(bogus)))
    try:
        assert sp.available and "could not load" in sp.notice and str(bogus) in sp.notice
    finally:
        sp.close()


def test_stop_cancels_a_long_sentence_being_synthesized(natural_voice_model) -> None:
    """cancel() ends the synthesis in progress: render() raises Cancelled instead of finishing."""
    from app.voice.natural_voice import Cancelled, NaturalSynthesizer

    synth = NaturalSynthesizer.get(natural_voice_model)
    long = " ".join(["and the river ran on past the mill, the bridge and the old town"] * 8) + "."
    outcome: list[object] = []

    def work() -> None:
        try:
            outcome.append(synth.render(long))
        except Cancelled as exc:
            outcome.append(exc)

    worker = threading.Thread(target=work)
    worker.start()
    assert synth.synthesizing.wait(30)
    synth.cancel()
    worker.join(60)
    assert outcome and isinstance(outcome[0], Cancelled)
    assert len(synth.render("Back again.").pcm) > 0  # the next sentence is synthesized as usual


def test_a_long_sentence_leaves_no_hundreds_of_megabytes_behind(natural_voice_model) -> None:
    """The natural voice runs without onnxruntime's arena, which kept the largest run's memory
    for good (+455 MB after one 60-word sentence; without it 16-91 MB measured)."""
    from app.voice.natural_voice import NaturalSynthesizer

    synth = NaturalSynthesizer.get(natural_voice_model)
    from app.system import heap

    synth.render("Hello there.")
    heap.trim()  # as the app does after each turn: what is measured is memory kept, not freed heap
    before = psutil.Process().memory_info().rss
    long = " ".join(["the cat walked past the harbour, the church and the baker's house"] * 5) + "."
    for _ in range(2):
        assert len(synth.render(long).pcm) > 0
    heap.trim()
    assert psutil.Process().memory_info().rss - before < 250 * 2**20


def test_the_output_buffer_grows_after_a_hole_and_shrinks_once_calm() -> None:
    """Pure policy (app/voice/output_buffer.py); the streams that use it are the tests above."""
    from app.voice.output_buffer import OutputBuffer

    buffer = OutputBuffer(0.05, most=0.2, calm=3)
    assert buffer.latency == 0.05
    buffer.hole()
    assert buffer.latency == pytest.approx(0.1)
    buffer.hole()
    buffer.hole()
    assert buffer.latency == pytest.approx(0.2)  # never more than `most`
    for _ in range(2):
        buffer.sentence_played()
    buffer.hole()  # a hole restarts the calm count
    for _ in range(3):
        buffer.sentence_played()
    assert buffer.latency == pytest.approx(0.1)
    for _ in range(3):
        buffer.sentence_played()
    assert buffer.latency == 0.05  # back to the configured size, not below
    low = OutputBuffer("low")
    low.hole()
    assert low.latency == pytest.approx(0.02)
    # Speakers on one device share what it learned (a voice change makes a new Speaker)
    assert OutputBuffer.for_device("dev", 0.05) is OutputBuffer.for_device("dev", 0.05)
    assert OutputBuffer.for_device("dev", 0.05) is not OutputBuffer.for_device("other", 0.05)
