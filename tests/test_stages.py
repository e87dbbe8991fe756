"""Each stage of the pipeline alone, on its real models, with typed inputs and typed outputs
(tests/support/stages.py): the utterances from microphone blocks, hearing (whisper) from
utterances, the responder and the llm worker from turns, barge-in, and the end-of-turn decision.
No audio device: the real-audio tests (test_assistant, test_turn_taking, test_bargein, ...) are
the integration layer above these."""

from __future__ import annotations

import dataclasses
import threading
import time
from pathlib import Path

import numpy as np

from app.brain.records import LlmConfig
from app.ears.echo import EchoGuard
from app.ears.transcriber import SttConfig
from app.ears.vad import RATE, Segmenter
from app.loop.assistant_config import AssistantConfig
from app.loop.barge_in import BargeIn
from app.loop.continuation import Continuation
from app.loop.end_of_turn import EndOfTurn
from app.loop.events import (
    Heard,
    Loaded,
    SentenceProgress,
    State,
    Token,
    Transcript,
    TurnReported,
    Unanswered,
    UserTurn,
)
from app.loop.hearing import Hearing
from app.loop.llm_worker import LlmWorker
from app.loop.ports import SttItem, Utterance
from app.loop.responder import Responder
from app.loop.sound_scorer import SoundScorer
from app.loop.tentative_turns import TentativeTurns
from app.loop.turn import Turn
from app.loop.turn_end import end_silence_ms
from app.loop.utterances import AssistantView, Utterances
from app.loop.voice_control import VoiceControl
from app.voice.sentences import speakable
from tests.conftest import espeak, load16k
from tests.support.conversations import make as make_conversation
from tests.support.stages import Outbox, StubVoice

UNUSED = Path("/nonexistent/model.gguf")


def config(**kw) -> AssistantConfig:
    return AssistantConfig(llm=LlmConfig(UNUSED), stt=SttConfig(UNUSED), **kw)


def silence(seconds: float) -> np.ndarray:
    return np.zeros(int(seconds * RATE), np.float32)


# ----- utterances: microphone blocks in, Utterances out ------------------------------------------
def test_hands_free_blocks_become_one_utterance_for_the_stt_thread(speech_dir) -> None:
    speech = load16k(espeak("What is the weather like today?", speech_dir / "stage-weather.wav", wpm=140))
    cfg = config(hands_free=True)
    out, to_stt = Outbox(), list[SttItem]()
    report = out.report()
    view = AssistantView(
        config=lambda: cfg,
        state=lambda: out.states[-1] if out.states else State.IDLE,
        listening=lambda: False,
        voice_busy=lambda: False,
        responder=lambda: None,
        interrupt=lambda: None,
        take_back=lambda job: None,
        resumed=lambda: None,
        speaking=lambda audio: None,
        emit=report.emit,
        set_state=report.set_state,
    )
    segmenter = Segmenter(cfg.vad)
    utterances = Utterances(view, segmenter, EchoGuard(), Continuation(0), to_stt.append)
    audio = np.concatenate([silence(0.5), speech, silence(2.0)])
    for i in range(0, len(audio), 320):  # 20 ms blocks, as PortAudio delivers them
        utterances.mic_block(audio[i : i + 320])
    finals = [u for u in to_stt if isinstance(u, Utterance) and u.final]
    assert len(finals) == 1, to_stt
    heard = finals[0]
    assert len(speech) <= len(heard.audio) <= len(speech) + RATE  # the words, with the pre-roll
    assert heard.ended is not None and heard.ended.audio is heard.audio  # a turn that may go on
    assert out.states[:2] == [State.LISTENING, State.TRANSCRIBING]


# ----- hearing: Utterances in, a Transcript and turns out -------------------------------------------
def hearing_alone(whisper_model: Path, out: Outbox, submitted: list[Turn]) -> Hearing:
    cfg = config(hands_free=True)
    segmenter = Segmenter(cfg.vad)
    sound = SoundScorer(None, out.report().error)
    return Hearing(
        SttConfig(whisper_model),
        cfg.vad,
        report=out.report(),
        wake_command="",
        tentative=TentativeTurns(submitted.append),
        continuation=Continuation(0),
        sound=sound,
        end_of_turn=EndOfTurn(lambda: cfg, segmenter, sound, lambda: False),
        submit=submitted.append,
        speech_model_loaded=segmenter.hear_with,
        answering=lambda: False,
        aborting=lambda: False,
        hands_free=lambda: True,
        brain_reads_words=lambda: True,
    )


def test_a_pause_s_transcript_unchanged_at_the_end_is_confirmed_not_sent_again(whisper_model, speech_dir):
    speech = load16k(espeak("What is the weather like today?", speech_dir / "stage-weather.wav", wpm=140))
    out, submitted = Outbox(), list[Turn]()
    hearing = hearing_alone(whisper_model, out, submitted)
    stt = threading.Thread(target=hearing.run)
    stt.start()
    try:
        out.wait_for(Loaded, 120)
        t_end = time.perf_counter()
        hearing.put(Utterance(speech, t_end, len(speech), final=False))  # the pause
        deadline = time.monotonic() + 120
        while not submitted and time.monotonic() < deadline:
            time.sleep(0.02)
        assert len(submitted) == 1 and submitted[0].pending is not None  # tentative
        hearing.put(Utterance(speech, t_end, len(speech), final=True))  # nothing said after it
        transcript = out.wait_for(Transcript, 120)
    finally:
        hearing.put(None)
        stt.join(120)
        hearing.close()
    assert not transcript.rejected and "weather" in transcript.text.lower(), transcript
    assert len(submitted) == 1 and submitted[0].confirm()  # the tentative turn, confirmed
    assert submitted[0].text == transcript.text


def test_a_pause_behind_newer_audio_is_skipped(whisper_model, speech_dir) -> None:
    speech = load16k(espeak("What is the weather like today?", speech_dir / "stage-weather.wav", wpm=140))
    out, submitted = Outbox(), list[Turn]()
    hearing = hearing_alone(whisper_model, out, submitted)
    t_end = time.perf_counter()
    hearing.put(Utterance(speech[: len(speech) // 2], t_end, len(speech) // 2, final=False))
    hearing.put(Utterance(speech, t_end, len(speech), final=True))
    hearing.put(None)
    hearing.run()  # here: both are waiting before whisper loads
    hearing.close()
    assert len(out.of(Transcript)) == 1
    assert [t.pending for t in submitted] == [None]  # one plain turn: the pause was never heard


# ----- the responder: a turn in, the reply's events and sentences out -------------------------------
def test_the_responder_streams_the_reply_speaks_its_sentences_and_reports_the_turn(llm_model) -> None:
    out, voice = Outbox(), StubVoice()
    conversation = make_conversation(llm_model)
    responder = Responder(
        conversation, voice, report=out.report(), words_known=lambda turn: None, first_chunk_chars=5
    )
    voice.on_event = responder.on_speaker
    turn = Turn("What is the capital of France?", time.perf_counter(), typed=True)
    responder.run(turn)
    report = out.wait_for(TurnReported)
    order = [type(e) for e in out.events]
    assert order[0] is UserTurn and order.index(Token) < order.index(TurnReported)
    assert State.THINKING in out.states
    reply = conversation.history[-1].text
    assert report.reply.strip() == reply.strip() and "".join(t.text for t in out.of(Token)).strip() == reply
    queued = [e.text for e in out.of(SentenceProgress) if e.progress == "queued"]
    assert queued and voice.said == [speakable(s) for s in queued]
    assert report.t_first_audio_ms is not None and report.gen_tokens


# ----- the llm worker and barge-in: turns and jobs in, events out ----------------------------------
def worker(cfg: AssistantConfig, out: Outbox) -> LlmWorker:
    segmenter = Segmenter(cfg.vad)
    end_of_turn = EndOfTurn(lambda: cfg, segmenter, SoundScorer(None, out.report().error), lambda: False)
    return LlmWorker(cfg, report=out.report(), end_of_turn=end_of_turn, listening=lambda: False)


def test_a_barge_in_leaves_the_reply_remembered_as_far_as_it_was_heard(llm_model) -> None:
    cfg = dataclasses.replace(config(), llm=LlmConfig(llm_model, n_ctx=1024, max_tokens=40))
    out = Outbox()
    llm = worker(cfg, out)
    voice = StubVoice()
    voice.cut_after(0)  # the first sentence is still playing when the user talks
    voice_control = VoiceControl(EchoGuard(), voice.on_event, lambda rms: None, out.report().error)
    voice_control.speaker = voice  # type: ignore[assignment]  # the STUB in place of a Speaker
    thread = threading.Thread(target=llm.run, args=(voice,))
    thread.start()
    try:
        out.wait_state(State.IDLE, 120)
        assert llm.responder is not None
        voice.on_event = llm.responder.on_speaker
        llm.put(Turn("Tell me a long story about a dragon.", time.perf_counter(), typed=True))
        report = out.wait_for(TurnReported, 120)
        tentative = TentativeTurns(llm.put)
        barge_in = BargeIn(
            voice=voice_control,
            tentative=tentative,
            llm=llm,
            state=lambda: out.states[-1],
            set_state=out.report().set_state,
            listening=lambda: False,
        )
        barge_in.interrupt()
        heard = out.wait_for(Heard, 60)
        out.wait_state(State.IDLE)
    finally:
        llm.stop()
        thread.join(60)
    assert llm.brain is not None
    assert heard.text and heard.unspoken and report.reply.startswith(heard.text)
    assert heard.text.split()[0] == voice.said[0].split()[0]  # to the word the voice had started
    assert llm.brain.history[-1].text == heard.text and llm.brain.history[-1].interrupted
    assert out.states[-1] == State.IDLE  # after the reply was settled


def test_without_a_model_a_turn_s_words_come_back_unanswered(tmp_path) -> None:
    broken = tmp_path / "broken.gguf"
    broken.write_bytes(b"GGUF not really")
    out = Outbox()
    llm = worker(dataclasses.replace(config(), llm=LlmConfig(broken)), out)
    thread = threading.Thread(target=llm.run, args=(StubVoice(),))
    thread.start()
    llm.put(Turn("Are you there?", time.perf_counter(), typed=True))
    llm.stop()
    thread.join(60)
    assert [source for _message, source in out.errors] == ["llm"]
    assert [e.text for e in out.of(Unanswered)] == ["Are you there?"]
    assert out.states[-1] == State.IDLE


# ----- the end-of-turn decision: a turn's words (and sound) in, its end silence out ------------------
def test_the_end_silence_is_decided_once_from_the_words_when_no_sound_model_is_there() -> None:
    cfg = config(hands_free=True)
    segmenter = Segmenter(cfg.vad)
    decide = EndOfTurn(lambda: cfg, segmenter, SoundScorer(None, lambda m, s: None), lambda: False)
    for p in (0.001, 0.05, 0.9):  # trailing, unsure (the sound would count), finished
        turn = Turn("What is the weather like", time.perf_counter(), end_sample=1234, end_of_turn=p)
        decide.words_known(turn)  # not evaluated yet: nothing to decide
        assert turn.end_silence_ms is None
        turn.stamps["end_of_turn"] = time.perf_counter()
        decide.words_known(turn)
        expected = end_silence_ms(p, cfg.turn_end, cfg.vad.end_silence_ms, None, turn.text, None)
        assert turn.end_silence_ms == expected and not turn.audio_pending
        turn.end_of_turn = 1.0 - p
        decide.sound_known(turn)  # decided already: a late input changes nothing
        assert turn.end_silence_ms == expected
