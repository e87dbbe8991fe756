"""Voice-to-voice latency and turn-taking through the virtual devices (issue #15).

Spoken questions (espeak-ng) are fed into the virtual microphone; "heard" is the first sample
on the virtual speaker (a level monitor in another process): the true voice-to-voice time.
In one run, same models:
- hands-free, complete questions, for (a) the fixed 400 ms end-of-turn rule and (b) the words
  rule (the model's end-of-turn probability sets the silence; the first spoken chunk is
  generated and synthesized before the turn is confirmed); stages in ms after the end of speech;
- hands-free, utterances with a 500–800 ms pause mid-sentence ("What is the capital of … France?"),
  for both rules: how often the turn ended at the pause (premature), and how often the
  conversation is left with it in two turns (split: speech soon after a turn's end continues
  it, continuation.py);
- push-to-talk: release → first sample heard;
- (c) the sequential baseline (talk-llama's order): wait the fixed silence, transcribe, generate
  the whole reply, then speak, on the same utterances.
Each question starts a fresh conversation (greedy decoding: replies repeat run to run); the
reply is stopped once heard. `--runs N` repeats everything to show the run-to-run spread.
Targets (#15): words rule voice-to-voice p50 <= 400 ms; premature <= 10%; push-to-talk p50 <= 350.
Run: .venv/bin/python -m bench.latency [--questions 12] [--runs 2]
"""

from __future__ import annotations

import argparse
import contextlib
import os
import queue
import tempfile
import time
from pathlib import Path

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import numpy as np
import soundfile as sf

from bench.common import emit, pct, speak_16k, spoken_through, until_quiet
from bench.phrases import PAUSED, PHRASES
from tests.support.pulse import VirtualAudio

LOUD = 0.003
STAGES = ("transcript", "end_of_turn", "confirmed", "first_token", "first_sentence", "first_audio", "heard")


def first_heard(times: np.ndarray, rms: np.ndarray, after: float) -> float | None:
    t = times[(rms > LOUD) & (times > after)]
    return float(t[0]) if len(t) else None


class Rig:
    """One Assistant on the default models (pinned persona, greedy) and its event queue."""

    def __init__(
        self,
        tmp: Path,
        hands_free: bool,
        rule: str = "words",
        threads: int | None = None,
        hold_at: float | None = None,
        voice: str | None = None,
    ):
        from app.brain.conversation import LlmConfig
        from app.brain.persona import PINNED_TIME, Persona
        from app.brain.sampling import SamplingConfig
        from app.catalog.catalog import default_model_path
        from app.ears.transcriber import SttConfig
        from app.loop.assistant import Assistant, AssistantConfig
        from app.loop.turn_end import TurnEndConfig
        from app.voice.speaker import SpeakerConfig

        self.tmp = tmp
        self.llm = LlmConfig(
            default_model_path("llm"),
            n_ctx=2048,
            sampling=SamplingConfig(temperature=0),
            max_tokens=48,
            n_threads=threads,
        )
        self.stt = SttConfig(default_model_path("whisper"))
        self.persona = Persona(now=PINNED_TIME)  # the prompt carries the time; pinned, replies repeat
        self.events: queue.Queue = queue.Queue()
        cfg = AssistantConfig(
            llm=self.llm,
            stt=self.stt,
            persona=self.persona,
            hands_free=hands_free,
            turn_end=TurnEndConfig(rule=rule, **({} if hold_at is None else {"hold_at": hold_at})),
            speaker=SpeakerConfig(voice=voice),
        )
        self.a = Assistant(cfg, self.events.put)
        self.a.start()
        loaded: set[str] = set()
        while loaded != {"llm", "whisper"}:
            ev = self.events.get(timeout=60)
            if ev.kind == "loading":
                loaded.add(ev.data["part"])

    def drain(self, seconds: float) -> list:
        """Events arriving within `seconds`."""
        out, end = [], time.monotonic() + seconds
        while (left := end - time.monotonic()) > 0:
            with contextlib.suppress(queue.Empty):
                out.append(self.events.get(timeout=min(left, 0.2)))
        return out

    def wait_turn(self, since: float, timeout: float = 60) -> tuple[dict | None, list]:
        """The first turn whose speech ended after `since` (perf_counter), and the events seen."""
        seen, end = [], time.monotonic() + timeout
        while time.monotonic() < end:
            try:
                ev = self.events.get(timeout=0.5)
            except queue.Empty:
                continue
            seen.append(ev)
            if ev.kind == "turn" and ev.data["t_speech_end"] >= since:
                return ev.data, seen
        return None, seen

    def quiet_down(self) -> None:
        """Stop the reply (its latency is measured), fresh conversation for the next question."""
        self.a.interrupt()
        self.a.speaker.wait(30)
        self.a.new_conversation()
        self.drain(0.5)

    def close(self) -> None:
        self.a.shutdown()


def hands_free(audio: VirtualAudio, rig: Rig, wavs: list[Path]) -> tuple[dict[str, list[float]], list[dict]]:
    from tests.support.monitor import Monitor

    stages: dict[str, list[float]] = {k: [] for k in STAGES}
    samples = []
    for i, wav in enumerate(wavs):
        mon = Monitor(rig.tmp / f"hf{id(rig)}-{i}")
        t0 = time.perf_counter()
        audio.play_into_mic(wav).wait(30)
        turn, _ = rig.wait_turn(t0)
        time.sleep(0.3)
        times, rms = mon.stop()
        rig.quiet_down()
        if turn is None:
            continue
        heard = first_heard(times, rms, turn["t_speech_end"])  # perf_counter == monotonic on Linux
        turn["t_heard_ms"] = round((heard - turn["t_speech_end"]) * 1000) if heard else None
        for k in STAGES:
            if turn.get(f"t_{k}_ms") is not None:
                stages[k].append(turn[f"t_{k}_ms"])
        keys = ("user", "end_of_turn", "end_silence_ms", "t_transcript_ms", "t_confirmed_ms", "t_heard_ms")
        samples.append({k: turn.get(k) for k in keys})
    return stages, samples


def paused(audio: VirtualAudio, rig: Rig, items: list[tuple[Path, int]]) -> dict:
    """Utterances with a pause mid-sentence. `premature`: the turn ended at the pause (a turn
    was made of the head alone: it had no more words than the head, or a second turn
    followed). `split`: what stays in the conversation is not one turn with the tail (speech
    soon after a turn's end continues it: continuation.py takes the head's turn back).
    `voice_early`: the assistant's voice started on the head before it was taken back."""
    premature = split = voice_early = 0
    samples = []
    for wav, head_words in items:
        t0 = time.perf_counter()
        audio.play_into_mic(wav).wait(30)
        turn, seen = rig.wait_turn(t0)
        seen += rig.drain(2.0)  # a turn ended at the pause shows a second turn (or a take-back)
        users = [e.data["text"] for e in seen if e.kind == "user"]
        early = len(users) != 1 or len(users[0].split()) <= head_words
        kept: list[str] = []
        spoke = False
        for e in seen:
            if e.kind == "user":
                kept.append(e.data["text"])
            elif e.kind == "retracted" and kept and kept[-1] == e.data["text"]:
                kept.pop()
                voice_early += spoke
            elif e.kind == "sentence" and e.data["event"] == "sentence_started":
                spoke = True
        two = len(kept) != 1 or len(kept[0].split()) <= head_words
        premature += early
        split += two
        end_of_turn = (turn or {}).get("end_of_turn")
        samples.append(
            {"users": users, "kept": kept, "premature": early, "split": two, "end_of_turn": end_of_turn}
        )
        rig.quiet_down()
    return {
        "premature": premature,
        "split": split,
        "voice_early": voice_early,
        "n": len(items),
        "samples": samples,
    }


def push_to_talk(audio: VirtualAudio, rig: Rig, wavs: list[Path]) -> tuple[list[float], list[dict]]:
    """Release → first sample heard; the key is let go 200 ms after the last word (espeak's own
    trailing silence is cut off the clips)."""
    from tests.support.monitor import Monitor

    out, samples = [], []
    for i, wav in enumerate(wavs):
        trimmed = rig.tmp / f"ptt-{i}.wav"
        sf.write(trimmed, until_quiet(sf.read(wav, dtype="float32")[0]), 16000)
        mon = Monitor(rig.tmp / f"ptt-{i}")
        t0 = time.perf_counter()
        rig.a.press()
        audio.play_into_mic(trimmed).wait(30)
        time.sleep(0.2)
        t_release = time.perf_counter()
        rig.a.release()
        turn, _ = rig.wait_turn(t0)
        time.sleep(0.3)
        times, rms = mon.stop()
        rig.quiet_down()
        heard = first_heard(times, rms, t_release)
        if turn is not None and heard:
            out.append((heard - t_release) * 1000)
            samples.append({"user": turn["user"], "release_to_heard_ms": round(out[-1])})
    return out, samples


def sequential(rig: Rig, utterances: list[np.ndarray], fixed_ms: int) -> dict[str, list[float]]:
    """talk-llama's order on the same utterances: silence, transcribe, whole reply, speak."""
    from app.brain.conversation import Conversation
    from app.ears.transcriber import Transcriber
    from app.voice.sentences import SentenceSplitter, speakable
    from app.voice.speaker import Speaker
    from tests.support.monitor import Monitor

    conv, stt, sp = Conversation(rig.llm, rig.persona), Transcriber(rig.stt), Speaker()
    out: dict[str, list[float]] = {k: [] for k in ("transcript", "reply_done", "heard")}
    for i, utt in enumerate(utterances):
        conv.reset()
        mon = Monitor(rig.tmp / f"seq-{i}")
        t0 = time.monotonic()
        res = stt.transcribe(utt)
        t_tr = time.monotonic()
        reply = conv.say(res.text) if not res.rejected else ""
        t_done = time.monotonic()
        splitter = SentenceSplitter()
        for s in [*splitter.feed(reply), *splitter.flush()][:1]:
            sp.say(speakable(s))
        sp.wait(60)
        time.sleep(0.3)
        times, rms = mon.stop()
        h = first_heard(times, rms, t_done)
        out["transcript"].append(fixed_ms + (t_tr - t0) * 1000)
        out["reply_done"].append(fixed_ms + (t_done - t0) * 1000)
        if h:
            out["heard"].append(fixed_ms + (h - t0) * 1000)
    sp.close()
    conv.close()
    return out


def summary(d: dict[str, list[float]]) -> dict:
    return {k: {"p50": round(pct(v, 50)), "p90": round(pct(v, 90)), "n": len(v)} for k, v in d.items() if v}


def run(
    audio: VirtualAudio,
    n_questions: int,
    tmp: Path,
    threads: int | None = None,
    full: bool = False,
    hold_at: float | None = None,
) -> dict:
    """Hands-free voice-to-voice with the default (words) rule; `full` adds the fixed rule, the
    paused utterances, push-to-talk and the sequential baseline. `threads`: None = automatic;
    `hold_at`: None = the default (TurnEndConfig.hold_at), 0 = the words alone."""
    from app.ears.vad import VadConfig

    wavs = []
    for i in range(n_questions):
        wavs.append(tmp / f"q{i}.wav")
        sf.write(wavs[-1], speak_16k(PHRASES[i % len(PHRASES)]), 16000)
    result: dict = {"questions": n_questions, "rules": {}}
    rules = ("fixed", "words") if full else ("words",)
    for rule in rules:
        rig = Rig(tmp, hands_free=True, rule=rule, threads=threads, hold_at=hold_at)
        try:
            stages, samples = hands_free(audio, rig, wavs)
            result["rules"][rule] = {"stages_ms": summary(stages), "samples": samples}
            if full:
                variants = paused_wavs(tmp)
                result["rules"][rule]["paused"] = {k: paused(audio, rig, v) for k, v in variants.items()}
        finally:
            rig.close()
    result["voice_to_voice_p50_ms"] = result["rules"]["words"]["stages_ms"]["heard"]["p50"]
    if full:
        rig = Rig(tmp, hands_free=False, threads=threads)
        try:
            ptt, samples = push_to_talk(audio, rig, wavs)
            ptt_ms = summary({"heard": ptt})["heard"]
            result["push_to_talk"] = {"release_to_heard_ms": ptt_ms, "samples": samples}
            utterances = [speak_16k(PHRASES[i % len(PHRASES)]) for i in range(n_questions)]
            result["sequential_ms"] = summary(sequential(rig, utterances, VadConfig().end_silence_ms))
        finally:
            rig.close()
        seq = result["sequential_ms"]["heard"]["p50"]
        result["speedup_vs_sequential_p50"] = round(seq / result["voice_to_voice_p50_ms"], 2)
    return result


def paused_wavs(tmp: Path) -> dict[str, list[tuple[Path, int]]]:
    """PAUSED utterances with 500, 600, 700, 800 ms of silence between head and tail, with the
    head's word count, spoken two ways: `through` (one sentence with a pause: the voice stays
    up at it, as a speaker's does mid-sentence) and `apart` (the head spoken alone, so it ends
    like a finished sentence, then the tail: only the words can tell)."""
    out: dict[str, list[tuple[Path, int]]] = {"through": [], "apart": []}
    for i, (head, tail) in enumerate(PAUSED):
        pause_s = 0.5 + 0.1 * (i % 4)
        through, apart = tmp / f"paused{i}-through.wav", tmp / f"paused{i}-apart.wav"
        sf.write(through, speak_16k(spoken_through(head, tail, pause_s)), 16000)
        gap = np.zeros(int(16000 * pause_s), np.float32)
        sf.write(apart, np.concatenate([until_quiet(speak_16k(head)), gap, speak_16k(tail)]), 16000)
        out["through"].append((through, len(head.split())))
        out["apart"].append((apart, len(head.split())))
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--questions", type=int, default=12)
    ap.add_argument("--runs", type=int, default=1)
    ap.add_argument("--hold-at", type=float, help="TurnEndConfig.hold_at (0: the words alone)")
    args = ap.parse_args()
    server = VirtualAudio().start()
    runs = []
    try:
        for _ in range(args.runs):
            with tempfile.TemporaryDirectory() as d:
                runs.append(run(server, args.questions, Path(d), full=True, hold_at=args.hold_at))
    finally:
        server.stop()
    result = runs[-1]
    result["runs"] = [
        {
            "heard_p50_fixed": r["rules"]["fixed"]["stages_ms"]["heard"]["p50"],
            "heard_p50_words": r["rules"]["words"]["stages_ms"]["heard"]["p50"],
            **{
                f"{key}_{rule}_{way}": r["rules"][rule]["paused"][way][key]
                for key in ("premature", "split")
                for rule in ("fixed", "words")
                for way in ("through", "apart")
            },
            "ptt_p50": r["push_to_talk"]["release_to_heard_ms"]["p50"],
            "sequential_p50": r["sequential_ms"]["heard"]["p50"],
        }
        for r in runs
    ]
    emit("latency", result)


if __name__ == "__main__":
    main()
