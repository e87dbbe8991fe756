"""One trial of each kind for the latency benches (bench/latency.py, bench/voice_latency.py),
on an assistant `Rig` and the virtual devices: a complete question hands-free, an utterance
with a pause mid-sentence, push-to-talk, and talk-llama's sequential order. Each blocks until
its turn is heard (or times out) and leaves the rig quiet, on a fresh conversation."""

from __future__ import annotations

import re
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import soundfile as sf

from bench.latency_rig import Rig
from bench.thread_cpu import cpu_by_thread, spent
from tests.support.pulse import VirtualAudio
from tests.support.speech import until_quiet

LOUD = 0.003
STAGES = ("transcript", "end_of_turn", "confirmed", "first_token", "first_sentence", "first_audio", "heard")


def first_heard(times: np.ndarray, rms: np.ndarray, after: float) -> float | None:
    t = times[(rms > LOUD) & (times > after)]
    return float(t[0]) if len(t) else None


def ask(
    audio: VirtualAudio, rig: Rig, i: int, wav: Path, stages: dict[str, list[float]], samples: list
) -> None:
    """Complete question `i` said into `rig` hands-free: its stages, the CPU each thread used
    and a sample appended (nothing when no turn came)."""
    from tests.support.monitor import Monitor

    mon = Monitor(rig.tmp / f"hf{id(rig)}-{i}")
    t0 = time.perf_counter()
    cpu_before = cpu_by_thread()
    audio.play_into_mic(wav).wait(30)
    turn, _ = rig.wait_turn(t0)
    time.sleep(0.3)
    cpu = spent(cpu_before, cpu_by_thread())
    times, rms = mon.stop()
    rig.quiet_down()
    if turn is None:
        return
    for name, seconds in cpu.items():
        stages.setdefault(f"cpu:{name}", []).append(seconds * 1000)
    heard = first_heard(times, rms, turn["t_speech_end"])  # perf_counter == monotonic on Linux
    turn["t_heard_ms"] = round((heard - turn["t_speech_end"]) * 1000) if heard else None
    for k in STAGES:
        if turn.get(f"t_{k}_ms") is not None:
            stages.setdefault(k, []).append(turn[f"t_{k}_ms"])
    keys = (
        "user",
        "reply",
        "action",
        "end_of_turn",
        "end_silence_ms",
        "t_transcript_ms",
        "t_confirmed_ms",
        "t_heard_ms",
    )
    samples.append({"question": i} | {k: turn.get(k) for k in keys})


def hands_free(audio: VirtualAudio, rig: Rig, wavs: list[Path]) -> tuple[dict[str, list[float]], list[dict]]:
    """The complete questions `wavs` into one `rig`: stages (ms, per turn) and samples."""
    stages: dict[str, list[float]] = {k: [] for k in STAGES}
    samples: list[dict] = []
    for i, wav in enumerate(wavs):
        ask(audio, rig, i, wav, stages, samples)
    return stages, samples


def n_words(text: str) -> int:
    """Words in a transcript; whisper's hyphenated mishearings count each part ("What is the
    cup-it-look, friends?" for "What is the capital of France?" holds the whole question)."""
    return len(re.findall(r"\w+(?:'\w+)?", text))


@dataclass(frozen=True)
class PausedClip:
    """An utterance with a pause mid-sentence, as a file for the virtual microphone."""

    wav: Path
    head_words: int  # words before the pause
    mid_pause_s: float  # the middle of the pause, from the file's start


def paused_one(audio: VirtualAudio, rig: Rig, clip: PausedClip) -> dict:
    """One utterance with a pause mid-sentence. `premature`: the turn ended at the pause (a turn
    was made of the head alone: it was heard before the middle of the pause, or a second turn
    followed). `split`: what stays in the conversation is not one turn with the tail (speech
    soon after a turn's end continues it: continuation.py takes the head's turn back).
    `voice_early`: the assistant's voice started on the head before it was taken back."""
    t0 = time.perf_counter()
    audio.play_into_mic(clip.wav).wait(30)
    turn, seen = rig.wait_turn(t0)
    seen += rig.drain(2.0)  # a turn ended at the pause shows a second turn (or a take-back)
    turns = [e.record() for e in seen if e.kind == "turn"]
    users = [e.text for e in seen if e.kind == "user"]
    early = len(users) != 1 or not holds_tail(users[0], turns, t0, clip)
    kept: list[str] = []
    spoke = voice_early = False
    for e in seen:
        if e.kind == "user":
            kept.append(e.text)
        elif e.kind == "retracted" and kept and kept[-1] == e.text:
            kept.pop()
            voice_early |= spoke
        elif e.kind == "sentence" and e.progress == "sentence_started":
            spoke = True
    two = len(kept) != 1 or not holds_tail(kept[0], turns, t0, clip)
    rig.quiet_down()
    end_of_turn = (turn or {}).get("end_of_turn")
    return {
        "users": users,
        "kept": kept,
        "premature": early,
        "split": two,
        "end_of_turn": end_of_turn,
        "voice_early": voice_early,
    }


def holds_tail(text: str, turns: list[dict], t0: float, clip: PausedClip) -> bool:
    """Whether the turn of `text` was made after the tail began: its speech ended after the
    middle of the pause (whisper may merge the tail's words: "What is the capitol friends?" for
    "What is the capital of" ... "France?"); by its word count when its turn's report has not
    come yet."""
    made = next((t for t in turns if t["user"] == text), None)
    if made is not None:
        return made["t_speech_end"] - t0 > clip.mid_pause_s
    return n_words(text) > clip.head_words


def paused_summary(samples: list[dict]) -> dict:
    """Counts over `paused_one`'s samples (see there)."""
    return {
        "premature": sum(x["premature"] for x in samples),
        "split": sum(x["split"] for x in samples),
        "voice_early": sum(x.pop("voice_early") for x in samples),
        "n": len(samples),
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
