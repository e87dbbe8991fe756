"""Voice-to-voice latency through the virtual devices: the streaming assistant vs talk-llama's order.

For each spoken question (espeak-ng, fed into the virtual mic, hands-free):
- streaming (ours): the Assistant: whisper from a short pause, the prompt evaluated on that
  transcript while the end of speech is confirmed, the reply streamed, each sentence (the first
  clause) spoken as soon as it is complete;
- sequential baseline, same models and components: transcribe, generate the WHOLE reply, then
  speak it (talk-llama's order), started from the same end-of-speech point.
Both answer each question in a fresh conversation (greedy decoding, same replies).
Stages are in ms after the end of speech; "heard" is the first sample on the virtual speaker
(level monitor), the true voice-to-voice time. Targets: p50 <= 800 ms; >= 2x faster than baseline.
Run: .venv/bin/python -m bench.latency [--questions 12]
"""

from __future__ import annotations

import argparse
import os
import queue
import tempfile
import time
from pathlib import Path

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import numpy as np
import soundfile as sf

from bench.common import emit, pct, speak_16k
from bench.phrases import PHRASES
from tests.support.pulse import VirtualAudio

LOUD = 0.003


def first_heard(times: np.ndarray, rms: np.ndarray, after: float) -> float | None:
    t = times[(rms > LOUD) & (times > after)]
    return float(t[0]) if len(t) else None


def run(audio: VirtualAudio, n_questions: int, tmp: Path, threads: int | None = None) -> dict:
    """`threads`: None = the app's default (the cores other programs leave free, per turn)."""
    from app.brain.conversation import Conversation, LlmConfig
    from app.brain.persona import PINNED_TIME, Persona
    from app.brain.sampling import SamplingConfig
    from app.catalog.catalog import default_model_path
    from app.ears.transcriber import SttConfig, Transcriber
    from app.ears.vad import VadConfig
    from app.loop.assistant import Assistant, AssistantConfig
    from app.voice.sentences import SentenceSplitter, speakable
    from app.voice.speaker import Speaker
    from tests.support.monitor import Monitor

    llm_cfg = LlmConfig(
        default_model_path("llm"),
        n_ctx=2048,
        sampling=SamplingConfig(temperature=0),
        max_tokens=64,
        n_threads=threads,
    )
    stt_cfg = SttConfig(default_model_path("whisper"))
    events: queue.Queue = queue.Queue()
    persona = Persona(now=PINNED_TIME)  # the prompt carries the time; pinned, replies repeat
    a = Assistant(AssistantConfig(llm=llm_cfg, stt=stt_cfg, persona=persona, hands_free=True), events.put)
    a.start()
    loaded = set()
    while loaded != {"llm", "whisper"}:
        ev = events.get(timeout=60)
        if ev.kind == "loading":
            loaded.add(ev.data["part"])
    # the baseline's own components (same models, separate context)
    base_conv, base_stt, base_sp = Conversation(llm_cfg, persona), Transcriber(stt_cfg), Speaker()

    ours: dict[str, list[float]] = {
        k: [] for k in ("transcript", "confirmed", "first_token", "first_sentence", "first_audio", "heard")
    }
    base: dict[str, list[float]] = {k: [] for k in ("transcript", "reply_done", "heard")}
    samples: list[dict] = []
    for i in range(n_questions):
        phrase = PHRASES[i % len(PHRASES)]
        wav = tmp / f"q{i}.wav"
        sf.write(wav, speak_16k(phrase), 16000)
        # --- streaming assistant. Each question starts a fresh conversation in both pipelines:
        # with greedy decoding the small model otherwise starts repeating its previous answer.
        a.new_conversation()
        base_conv.reset()
        mon = Monitor(tmp / f"m{i}")
        audio.play_into_mic(wav).wait(30)
        turn = None
        deadline = time.monotonic() + 60
        while turn is None and time.monotonic() < deadline:
            try:
                ev = events.get(timeout=0.5)
            except queue.Empty:
                continue
            if ev.kind == "turn":
                turn = ev.data
        a.speaker.wait(60)
        time.sleep(0.3)
        times, rms = mon.stop()
        if turn is None:
            continue
        # perf_counter -> monotonic: both are CLOCK_MONOTONIC on Linux
        t_end = turn["t_speech_end"]
        heard = first_heard(times, rms, t_end)
        for k in ("transcript", "confirmed", "first_token", "first_sentence", "first_audio"):
            if turn[f"t_{k}_ms"] is not None:
                ours[k].append(turn[f"t_{k}_ms"])
        if heard:
            ours["heard"].append((heard - t_end) * 1000)
        samples.append(
            {
                "user": turn["user"],
                "reply": turn["reply"],
                "stt_ms": turn["stt_ms"],
                "t_transcript_ms": turn["t_transcript_ms"],
                "t_confirmed_ms": turn["t_confirmed_ms"],
                "t_prompt_ms": turn.get("t_prompt_ms"),
                "heard_ms": round((heard - t_end) * 1000) if heard else None,
            }
        )
        # --- sequential baseline on the utterance the assistant segmented (same audio)
        utt = a.last_utterance
        vad_delay = VadConfig().end_silence_ms  # talk-llama's order: wait for the end, then transcribe
        mon = Monitor(tmp / f"b{i}")
        t0 = time.monotonic()
        res = base_stt.transcribe(utt)
        t_tr = time.monotonic()
        reply = base_conv.say(res.text) if not res.rejected else ""
        t_done = time.monotonic()
        splitter = SentenceSplitter()
        for s in [*splitter.feed(reply), *splitter.flush()]:
            base_sp.say(speakable(s))
        base_sp.wait(60)
        time.sleep(0.3)
        times, rms = mon.stop()
        h = first_heard(times, rms, t_done)
        base["transcript"].append(vad_delay + (t_tr - t0) * 1000)
        base["reply_done"].append(vad_delay + (t_done - t0) * 1000)
        if h:
            base["heard"].append(vad_delay + (h - t0) * 1000)
    a.shutdown()
    base_sp.close()
    base_conv.close()

    def summary(d: dict[str, list[float]]) -> dict:
        return {k: {"p50": round(pct(v, 50)), "p90": round(pct(v, 90)), "n": len(v)} for k, v in d.items()}

    result = {"questions": n_questions, "ours_ms": summary(ours), "sequential_ms": summary(base)}
    result["voice_to_voice_p50_ms"] = result["ours_ms"]["heard"]["p50"]
    result["speedup_vs_sequential_p50"] = round(pct(base["heard"], 50) / pct(ours["heard"], 50), 2)
    result["samples"] = samples
    return result


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--questions", type=int, default=12)
    args = ap.parse_args()
    server = VirtualAudio().start()
    try:
        with tempfile.TemporaryDirectory() as d:
            emit("latency", run(server, args.questions, Path(d)))
    finally:
        server.stop()


if __name__ == "__main__":
    main()
