"""Voice-to-voice latency and turn-taking through the virtual devices (issues #15, #33).

Spoken questions are fed into the virtual microphone; "heard" is the first sample on the virtual
speaker (a level monitor in another process): the true voice-to-voice time. The assistant runs as
the app does (the turn model and the speech model in the path). Per voice family (espeak-ng's
en-us; MBROLA's us2, a man's recorded diphones; the natural voice, Piper's joe, as people
sound), in one run, same models:
- hands-free, complete questions, for (a) the earlier words rule (the words' end-of-turn
  probability on the 0.001-0.2 scale, no turn model) and (b) today's rule (the words and the
  turn model, loop/turn_end.py); stages in ms after the end of speech, and the CPU each thread
  used per turn (bench/thread_cpu.py);
- hands-free, utterances with a 500-800 ms pause mid-sentence ("What is the capital of ...
  France?"), both rules, said two ways (`through`: one sentence, the voice up at the pause;
  `apart`: the head said alone, ending like a finished sentence): how often the turn ended at the
  pause (premature), and how often the conversation is left with it in two turns (split: speech
  soon after a turn's end continues it, continuation.py);
- (c) a remote brain (llama.cpp's own `llama-server` as users run it, or llama-cpp-python's
  server where it is not built; the same model, over HTTP; the result names it) with today's rule,
  the words read by the local default model as the app does (brain/words_reader.py), complete
  questions and paused utterances; and complete questions without the reader (the sound decides
  alone). The server stands in for another machine: it runs at the lowest CPU priority (nice
  19), so it takes the cycles the app leaves and not the ones it needs (at equal priority on two
  cores its generation delays the first sentence's synthesis);
- push-to-talk: release -> first sample heard;
- (d) the sequential baseline (talk-llama's order): wait the fixed silence, transcribe, generate
  the whole reply, then speak, on the same utterances.
Each question starts a fresh conversation (greedy decoding: replies repeat run to run); the
reply is stopped once heard. The machine it ran on is printed with the result.
Targets (#33): per family, paused utterances ended early <= 10% for both ways; today's rule's
hands-free p50 <= 1.0x the earlier rule's; the remote brain's <= 1.1x the local one's; hands-free
and push-to-talk >= 2.5x faster than the sequential baseline.
Run: .venv/bin/python -m bench.latency [--questions 12] [--families espeak,mbrola,natural]
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import tempfile
import time
from pathlib import Path

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import numpy as np
import soundfile as sf

from app.brain.records import RemoteConfig
from app.loop.turn_end import TurnEndConfig
from bench.common import emit, pct, until_quiet
from bench.latency_rig import Rig
from bench.phrases import PAUSED, PHRASES
from bench.thread_cpu import cpu_by_thread, spent
from bench.voices import MBROLA_EN, PIPER, available, said_apart, said_through, speak
from tests.support.pulse import VirtualAudio

LOUD = 0.003
STAGES = ("transcript", "end_of_turn", "confirmed", "first_token", "first_sentence", "first_audio", "heard")


def first_heard(times: np.ndarray, rms: np.ndarray, after: float) -> float | None:
    t = times[(rms > LOUD) & (times > after)]
    return float(t[0]) if len(t) else None


def hands_free(audio: VirtualAudio, rig: Rig, wavs: list[Path]) -> tuple[dict[str, list[float]], list[dict]]:
    from tests.support.monitor import Monitor

    stages: dict[str, list[float]] = {k: [] for k in STAGES}
    samples = []
    for i, wav in enumerate(wavs):
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
            continue
        for name, seconds in cpu.items():
            stages.setdefault(f"cpu:{name}", []).append(seconds * 1000)
        heard = first_heard(times, rms, turn["t_speech_end"])  # perf_counter == monotonic on Linux
        turn["t_heard_ms"] = round((heard - turn["t_speech_end"]) * 1000) if heard else None
        for k in STAGES:
            if turn.get(f"t_{k}_ms") is not None:
                stages[k].append(turn[f"t_{k}_ms"])
        keys = ("user", "end_of_turn", "end_silence_ms", "t_transcript_ms", "t_confirmed_ms", "t_heard_ms")
        samples.append({"question": i} | {k: turn.get(k) for k in keys})
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


# the rule before the turn model joined (words alone, 0.001-0.2 over 1.2-0.2 s; its pitch hold,
# which only made complete questions wait, left out): today's rule is compared with it
EARLIER = TurnEndConfig(combine="words", trailing_at=0.001, long_ms=1200)
FAMILIES = {"espeak": "en-us", "mbrola": MBROLA_EN, "natural": PIPER}


def question_wavs(tmp: Path, voice: str, n: int) -> list[Path]:
    """The first `n` PHRASES said by `voice`, as files for the virtual microphone."""
    out = []
    for i in range(n):
        out.append(tmp / f"q{i}-{voice.replace(':', '_')}.wav")
        sf.write(out[-1], speak(PHRASES[i % len(PHRASES)], voice), 16000)
    return out


def paused_wavs(tmp: Path, voice: str) -> dict[str, list[tuple[Path, int]]]:
    """PAUSED utterances with 500, 600, 700, 800 ms of silence between head and tail, with the
    head's word count, said `through` and `apart` (bench/voices.py) by `voice`."""
    out: dict[str, list[tuple[Path, int]]] = {"through": [], "apart": []}
    name = voice.replace(":", "_")
    for i, (head, tail) in enumerate(PAUSED):
        pause_s = 0.5 + 0.1 * (i % 4)
        for way, say in (("through", said_through), ("apart", said_apart)):
            wav = tmp / f"paused{i}-{way}-{name}.wav"
            sf.write(wav, say(head, tail, pause_s, voice), 16000)
            out[way].append((wav, len(head.split())))
    return out


def hands_free_rule(
    audio: VirtualAudio, tmp: Path, wavs: list[Path], paused_by_way: dict | None, **rig
) -> dict:
    """Complete questions (and the paused utterances, when given) with one Rig."""
    r = Rig(tmp, hands_free=True, **rig)
    try:
        stages, samples = hands_free(audio, r, wavs)
        cpu = {k.removeprefix("cpu:"): v for k, v in stages.items() if k.startswith("cpu:")}
        out: dict = {
            "stages_ms": summary({k: v for k, v in stages.items() if not k.startswith("cpu:")}),
            "cpu_ms_per_turn": summary(cpu),  # from the question's first sound to the reply heard
            "samples": samples,
        }
        if paused_by_way:
            out["paused"] = {way: paused(audio, r, items) for way, items in paused_by_way.items()}
        return out
    finally:
        r.close()


def run(
    audio: VirtualAudio,
    n_questions: int,
    tmp: Path,
    threads: int | None = None,
    full: bool = False,
    voice: str = "en-us",
    remote: RemoteConfig | None = None,
) -> dict:
    """Hands-free voice-to-voice with today's rule on questions said by `voice`; `full` adds the
    earlier rule, the paused utterances, push-to-talk, the sequential baseline and (given
    `remote`) a server as the brain. `threads`: None = automatic."""
    from app.ears.vad import VadConfig

    wavs = question_wavs(tmp, voice, n_questions)
    result: dict = {"questions": n_questions, "voice": voice, "rules": {}}
    pauses = paused_wavs(tmp, voice) if full else None
    result["rules"]["today"] = hands_free_rule(audio, tmp, wavs, pauses, threads=threads)
    heard = result["rules"]["today"]["stages_ms"]["heard"]["p50"]
    result["voice_to_voice_p50_ms"] = heard
    if not full:
        return result
    result["rules"]["earlier"] = hands_free_rule(
        audio, tmp, wavs, pauses, threads=threads, turn_end=EARLIER, turn_model=False
    )
    result["today_over_earlier_p50"] = round(
        heard / result["rules"]["earlier"]["stages_ms"]["heard"]["p50"], 2
    )
    if remote:
        alone = dataclasses.replace(remote, words_model=None)
        for name, config, paused_too in (("remote", remote, pauses), ("remote_sound", alone, None)):
            r = hands_free_rule(audio, tmp, wavs, paused_too, threads=threads, remote=config)
            result["rules"][name] = r
            result[f"{name}_over_local_p50"] = round(r["stages_ms"]["heard"]["p50"] / heard, 2)
    rig = Rig(tmp, hands_free=False, threads=threads)
    try:
        ptt, samples = push_to_talk(audio, rig, wavs)
        ptt_ms = summary({"heard": ptt})["heard"]
        result["push_to_talk"] = {"release_to_heard_ms": ptt_ms, "samples": samples}
        utterances = [speak(PHRASES[i % len(PHRASES)], voice) for i in range(n_questions)]
        result["sequential_ms"] = summary(sequential(rig, utterances, VadConfig().end_silence_ms))
    finally:
        rig.close()
    seq = result["sequential_ms"]["heard"]["p50"]
    result["speedup_vs_sequential_p50"] = round(seq / heard, 2)
    result["ptt_speedup_vs_sequential_p50"] = round(seq / ptt_ms["p50"], 2)
    return result


def main() -> None:
    from app.brain.records import RemoteConfig
    from app.catalog.catalog import default_model_path
    from tests.support.servers import CppServer, LlamaServer, llama_cpp_bin

    ap = argparse.ArgumentParser()
    ap.add_argument("--questions", type=int, default=12)
    ap.add_argument("--families", default=",".join(FAMILIES), help="voice families, comma-separated")
    args = ap.parse_args()
    families = [f for f in args.families.split(",") if f]
    families = [f for f in families if FAMILIES[f] in available()]  # (MBROLA, Piper: when installed)
    audio = VirtualAudio().start()
    out: dict = {"questions": args.questions, "families": {}}
    try:
        with tempfile.TemporaryDirectory() as d:
            model, log, bin_dir = default_model_path("llm"), Path(d) / "server.log", llama_cpp_bin()
            server: CppServer | LlamaServer
            if bin_dir is not None:  # the server users run (per token it is faster than the Python one)
                server = CppServer(bin_dir, model, log, n_ctx=2048, nice=19)
            else:
                server = LlamaServer(model, log, n_ctx=2048, nice=19)
            out["server"] = server.name
            try:
                words = default_model_path("llm")  # the app's default reader of the words
                remote = RemoteConfig(
                    server.url, max_tokens=48, temperature=0.0, n_ctx=2048, words_model=words
                )
                for family in families:
                    out["families"][family] = run(
                        audio, args.questions, Path(d), full=True, voice=FAMILIES[family], remote=remote
                    )
            finally:
                server.stop()
    finally:
        audio.stop()
    emit("latency", out)


if __name__ == "__main__":
    main()
