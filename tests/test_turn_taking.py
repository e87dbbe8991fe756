"""Turn-taking (#15): the end of a turn from the words and the silence, the first words prepared
before the turn is certain (and never heard if it is withdrawn), push-to-talk transcribing at
pauses while the key is held. Real models, the virtual microphone and speaker."""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import soundfile as sf

from app.brain.persona import PINNED_TIME, Persona
from app.ears.transcriber import SttConfig
from app.ears.vad import VadConfig
from app.loop.events import State
from app.loop.ports import Utterance
from app.loop.turn_end import TurnEndConfig, end_silence_ms
from tests.conftest import espeak, load16k
from tests.support.assistant_rig import Recorder, make, spoken_turn
from tests.support.conversations import assert_consistent
from tests.support.pulse import envelope, stop_recording
from tests.support.sounds import noise
from tests.support.voices import said_apart


def paused_wav(head: str, tail: str, pause_s: float, out: Path, voice: str = "en-us") -> Path:
    """`head` said alone by espeak-ng at 140 wpm, `pause_s` of silence, then `tail`, as `out`."""
    sf.write(out, said_apart(head, tail, pause_s, voice, wpm=140), 16000)
    return out


def users_after(virtual_audio, a, rec: Recorder, wav: Path, last_word: str) -> list[str]:
    """Play `wav` into the assistant's microphone, wait for the turn that heard `last_word` and
    for the reply to end; the user's turns the conversation keeps (shuts the assistant down)."""
    try:
        virtual_audio.play_into_mic(wav).wait(30)
        rec.wait_for("turn", 90, lambda e: last_word in e.user.lower())
        rec.wait_for("state", 90, lambda e: e.state == State.IDLE)
    finally:
        a.shutdown()
    assert a.conversation is not None
    return [m.text for m in a.conversation.history if m.role == "user"]


def test_the_rule_maps_probability_to_silence() -> None:
    c = TurnEndConfig()
    assert end_silence_ms(0.6, c, 400) == c.short_ms and end_silence_ms(1e-5, c, 400) == c.long_ms
    assert c.short_ms < end_silence_ms(0.08, c, 400) < c.long_ms
    assert end_silence_ms(None, c, 400) == 400  # a server: the fixed rule
    assert end_silence_ms(0.9, TurnEndConfig(rule="fixed"), 400) == 400


def test_a_paused_utterance_is_one_turn(virtual_audio, llm_model, whisper_model, speech_dir) -> None:
    """ "I was wondering if … [700 ms] … you could tell me a joke.": the fixed 400 ms rule cut it
    in two; the words trail off, so the model's end-of-turn probability asks for a long silence."""
    wav = paused_wav("I was wondering if", "you could tell me a joke.", 0.7, speech_dir / "joke.wav")
    # 1.5 s more: a second turn would come from the tail
    rec, a, _ = spoken_turn(virtual_audio, llm_model, whisper_model, wav, after_s=1.5, max_tokens=8)
    users = [e.text for e in rec.of("user")]
    assert len(users) == 1 and "could tell" in users[0].lower(), users
    assert a.tentative.counts["withdrawn"] >= 1  # the pause's turn was taken back when speech resumed


def test_a_paused_french_utterance_is_one_turn(
    virtual_audio, llm_model, multilingual_whisper, speech_dir
) -> None:
    """Turn-taking in another language (the turn model is multilingual; the words' probability
    comes from the chat model): "Raconte-moi une histoire … [700 ms] … sur la capitale de la
    France." is one turn in the conversation, whether the pause held it or the speech that
    followed continued it."""
    wav = paused_wav(
        "Raconte-moi une histoire",
        "sur la capitale de la France.",
        0.7,
        speech_dir / "fr-paused.wav",
        voice="fr",
    )
    stt = SttConfig(multilingual_whisper, language="fr")
    persona = Persona("Sam", "Max", now=PINNED_TIME, language="fr")
    rec = Recorder()
    a = make(llm_model, multilingual_whisper, rec, hands_free=True, stt=stt, persona=persona, max_tokens=8)
    users = users_after(virtual_audio, a, rec, wav, "capital")
    assert len(users) == 1 and "histoire" in users[0].lower() and "capital" in users[0].lower(), rec.story()
    assert a.conversation is not None
    assert all(m.language == "fr" for m in a.conversation.history if m.role == "user")


def test_noise_never_starts_a_turn(
    virtual_audio, llm_model, whisper_model, speech_model_file, tmp_path
) -> None:
    """Hands-free through the whole loop (speech detectors, WebRTC's and Silero, early
    transcription at pauses, the turn model, the transcriber's gate and filters): steady noise,
    mains hum and typing at a desk's level (-30 dBFS, bench/vad's sounds) never become a turn,
    a reply or a sound."""
    rng = np.random.default_rng(3)
    kinds = ("white", "pink", "brown", "hum", "keyboard")
    wav = tmp_path / "noise.wav"
    sf.write(wav, np.concatenate([noise(kind, 3.0, rng) for kind in kinds]), 16000)
    rec = Recorder()
    vad = VadConfig(speech_model=speech_model_file)
    a = make(llm_model, whisper_model, rec, hands_free=True, max_tokens=8, vad=vad)
    try:
        virtual_audio.play_into_mic(wav).wait(30)
        assert a.segmenter.classify.with_model, rec.story()
        deadline = time.monotonic() + 30  # what was heard is judged: the queue drains, idle again
        quiet_since = time.monotonic()
        while time.monotonic() - quiet_since < 2.0:
            assert time.monotonic() < deadline, rec.story()
            if a.state != State.IDLE or a.hearing.busy:
                quiet_since = time.monotonic()
            time.sleep(0.05)
    finally:
        a.shutdown()
    assert not rec.of("user") and not rec.of("turn") and not rec.of("sentence"), rec.story()


def test_a_finished_sounding_head_said_with_a_falling_voice_is_one_turn(
    virtual_audio, llm_model, whisper_model, turn_model_file, speech_dir
) -> None:
    """ "Tell me something interesting. [700 ms] about the ocean.": the head is a complete
    sentence said alone (its voice falls, the turn model hears it finished), so only the words
    can hold it (their P ~0.05 waits ~1.1 s; a loaded machine has read it at ~0.4, which
    ends it soon). Either way the conversation holds one turn with both parts: the pause held
    it, or the speech that followed continued it (continuation.py)."""
    wav = paused_wav("Tell me something interesting.", "about the ocean.", 0.7, speech_dir / "ocean.wav")
    rec = Recorder()
    a = make(llm_model, whisper_model, rec, hands_free=True, max_tokens=8, turn_model=turn_model_file)
    users = users_after(virtual_audio, a, rec, wav, "ocean")
    assert len(users) == 1 and "interesting" in users[0].lower() and "ocean" in users[0].lower(), rec.story()


def test_a_complete_question_ends_on_a_short_silence(
    virtual_audio, llm_model, whisper_model, speech_dir
) -> None:
    wav = espeak("What is the weather like today?", speech_dir / "weather.wav", wpm=140)
    # the words' P is the model's: actions off (an action would answer the weather)
    _, a, turn = spoken_turn(virtual_audio, llm_model, whisper_model, wav, max_tokens=8, actions=False)
    d = turn.record()
    assert d["end_of_turn"] >= 0.2 and d["end_silence_ms"] == TurnEndConfig().short_ms, d
    assert a.tentative.counts["confirmed"] == 1  # (pauses between words withdrew earlier ones)
    assert d["t_confirmed_ms"] <= d["t_first_audio_ms"]  # prepared before, heard only after


def test_a_withdrawn_speculative_reply_never_sounds(
    virtual_audio, llm_model, whisper_model, speech_dir, tmp_path
) -> None:
    """The first words of a tentative turn are synthesized and held; the user goes on talking:
    they are dropped unheard, and only the real turn's reply is heard."""
    first = load16k(espeak("Tell me a story", speech_dir / "story-a.wav", wpm=140))
    whole = load16k(espeak("Tell me a story about a cat.", speech_dir / "story-b.wav", wpm=140))
    rec = Recorder()
    a = make(llm_model, whisper_model, rec, hands_free=True, use_microphone=False, max_tokens=24)
    out = tmp_path / "speaker.wav"
    recording = virtual_audio.record_speaker(out)
    try:
        n0 = a.conversation.n_past
        t0 = time.monotonic()
        a.hearing.put(Utterance(first, time.perf_counter(), len(first), False))  # a pause after "story"
        deadline = time.monotonic() + 60
        while not (a.responder._gate is not None and a.responder._gate.ready and a.speaker.busy):
            assert time.monotonic() < deadline, "no speculative first words"
            time.sleep(0.01)
        time.sleep(0.5)  # held: synthesized, not played
        a.hearing.resumed()  # the user goes on talking
        while a.conversation.n_past != n0:  # the brain took the turn back
            assert time.monotonic() < deadline
            time.sleep(0.01)
        t_withdrawn = time.monotonic()
        time.sleep(0.5)
        a.hearing.put(Utterance(whole, time.perf_counter(), len(whole), True))
        turn = rec.wait_for("turn", 90)
        assert a.speaker.wait(60)
        time.sleep(0.3)
    finally:
        samples, sr = stop_recording(recording, out)
        a.shutdown()
    assert a.tentative.counts == {"confirmed": 0, "withdrawn": 1}
    assert [e.text for e in rec.of("user")] == [turn.user] and "cat" in turn.user
    env = envelope(samples, sr)  # 10 ms windows from the start of the recording (~t0)
    held_window = env[: int((t_withdrawn - t0 + 0.4) * 100)]
    assert held_window.size and held_window.max() < 0.003, "the withdrawn words were heard"
    assert np.count_nonzero(env > 0.003) > 20, "the real reply was not heard"
    assert_consistent(a.conversation)


def test_push_to_talk_transcribes_at_a_pause_while_held(
    virtual_audio, llm_model, whisper_model, speech_dir
) -> None:
    """The key held a moment after the last word: whisper and the prompt ran at that pause, the
    release confirms that turn. A pause mid-sentence while held is not the end: its turn is
    withdrawn when speech resumes, and the turn is the whole sentence."""
    done = espeak("What is the capital of France?", speech_dir / "ptt-done.wav", wpm=140)
    more = paused_wav("I was wondering if", "you could tell me a joke.", 0.6, speech_dir / "ptt-more.wav")
    rec = Recorder()
    a = make(llm_model, whisper_model, rec, max_tokens=8)
    try:
        a.press()
        virtual_audio.play_into_mic(done).wait(30)
        deadline = time.monotonic() + 60
        while a.tentative.current is None:  # the pause after the question started a turn
            assert time.monotonic() < deadline, "no transcription while the key was held"
            time.sleep(0.01)
        a.release()
        first = rec.wait_for("turn", 90)
        assert a.hearing.early.reused == 1 and a.tentative.counts["confirmed"] == 1
        assert "france" in first.user.lower()

        a.press()
        virtual_audio.play_into_mic(more).wait(30)
        time.sleep(0.3)
        a.release()
        second = rec.wait_for("turn", 90, lambda e: e.user != first.user)
    finally:
        a.shutdown()
    user = second.user.lower()
    assert "wondering" in user and "could tell" in user, user
    assert a.tentative.counts["withdrawn"] >= 1  # "I was wondering if" was not the end
