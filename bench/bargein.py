"""Voice barge-in: does talking over the assistant stop it, fast, and only when a person talks?

On the virtual devices (faint -50 dBFS room noise in the microphone throughout), for three
microphones: `headset` (no echo path), `room-20` and `room-10` (the speaker looped into the
microphone at -20 / -10 dB, one clock for both, as one sound card), and on request
`room-20-drift` (the loopback's rate adjusted as it goes: two devices' clocks). The hands-free
path is wired as in the app (tests/support/echo_rig: Speaker, Microphone in 40 ms blocks,
EchoGuard, Segmenter) without the language model, which plays no part in the decision.
- 20 barge-in trials per microphone: the assistant reads a story; 0.8-2.5 s into it one of 10
  utterances ("Stop.", "Stop. What is two plus two?", ...) is played into the microphone at
  0 or -6 dB (espeak-ng's own level, ~-19 dBFS while voiced, is 0 dB). Measured: detected (a
  barge-in before the utterance ends), speech start -> decision (located in the captured audio
  by cross-correlation, on the microphone's sample clock), decision -> silence on the speaker
  (the speaker's monitor, tests/support/monitor), and whether the words after the barge-in were
  heard (whisper on the segmenter's utterance, at least half of them).
- 20 uninterrupted replies per microphone: false barge-ins and false turns (utterances).
Targets (issue #20): >= 95% detected, speech start -> silence p50 <= 300 ms, p90 <= 500 ms,
0 false barge-ins.
The assistant speaks with the app's default voice (the natural one) unless `--voice` names another.
Run: .venv/bin/python -m bench.bargein [--trials 20] [--mics headset,room-20,room-10] [--record DIR]
(--record keeps what each guard was given, for `bench/echo_replay.py`: other settings, same audio.)
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

import numpy as np
import soundfile as sf

from bench.common import ROOT, emit, words
from bench.echo_replay import EchoRecorder
from bench.idle import noise_wav
from tests.support.echo_rig import EchoRig, onset_position, room
from tests.support.monitor import Monitor
from tests.support.pulse import VirtualAudio
from tests.support.speech import speak_16k

MICS = {"headset": None, "room-20": -20.0, "room-10": -10.0, "room-20-drift": -20.0}
DEFAULT_MICS = "headset,room-20,room-10"  # room-20-drift: two devices' clocks (known limit)
UTTERANCES = [
    "Stop.",
    "Wait.",
    "Stop. What is two plus two?",
    "Hold on, I have a question.",
    "Wait, wait, please stop talking and listen to me for a moment.",
    "No, that is not what I asked.",
    "What time is it?",
    "Tell me about the moon instead.",
    "Okay, thanks, that is enough.",
    "Hey, one more question.",
]
STORY = [
    "Once upon a time there was a small dragon who lived by a quiet river in the mountains.",
    "Every morning he brewed a pot of green tea and watched the fish jump in the sunlight.",
    "One day a traveller arrived with a strange map and a story about a hidden valley.",
]
REPLIES = [
    "The moon is about three hundred and eighty four thousand kilometres away from the Earth.",
    "A good cup of tea needs fresh water, a warm pot, and a few minutes of patience.",
    "Paris is the capital of France, and it is famous for its museums and its cafes.",
    "Bicycles are a simple way to travel, and they are good for your health as well.",
]


def silence_after(times: np.ndarray, rms: np.ndarray, t: float) -> float | None:
    """First monitor time after `t` from which the speaker stays silent for 100 ms."""
    after = times > t
    quiet = rms < 0.003
    for i in np.nonzero(after)[0]:
        window = (times >= times[i]) & (times < times[i] + 0.1)
        if quiet[window].all():
            return float(times[i])
    return None


def barge_trial(rig: EchoRig, audio: VirtualAudio, wav: Path, text: str, delay: float, transcriber) -> dict:
    utterance = sf.read(wav, dtype="float32")[0]
    rig.utterances.clear()
    rig.got_utterance.clear()
    rig.say(STORY)
    rig.started.wait(30)
    time.sleep(delay)
    n_barges, start = len(rig.barges), rig.mic.position
    player = audio.play_into_mic(wav)
    player.wait(30)
    time.sleep(0.3)
    detected = len(rig.barges) > n_barges
    rig.got_utterance.wait(3.0) if detected else None
    rig.speaker.stop()
    rig.guard.playback_stopped()
    rig.quiet()
    captured = rig.mic.read(start)
    onset = onset_position(captured, start, utterance)
    result: dict = {"text": text, "detected": detected, "onset": onset}
    if detected and onset is not None:
        pos, t_barge = rig.barges[n_barges]
        result["decision_ms"] = round((pos - onset) / 16, 1)
        result["t_barge"] = t_barge
    heard = " ".join(transcriber.transcribe(u).text for u in rig.utterances) if rig.utterances else ""
    want = set(words(text))
    result["heard"] = heard
    result["heard_ok"] = bool(detected and len(want & set(words(heard))) * 2 >= len(want))
    return result


def run_mic(
    name: str,
    audio: VirtualAudio,
    trials: int,
    tmp: Path,
    transcriber,
    seed: int,
    record: Path | None,
    voice: str | None = None,
) -> dict:
    rng = np.random.default_rng(seed)
    rig = EchoRig(voice=voice)
    recorder = EchoRecorder(rig.guard, lambda: rig.mic.position) if record else None
    monitor = Monitor(tmp / f"monitor-{name}")
    out: dict = {"barge": [], "false_barges": 0, "false_turns": 0, "replies": trials}
    try:
        with room(audio, MICS[name], drift=name.endswith("-drift")):
            for i in range(trials):
                text = UTTERANCES[i % len(UTTERANCES)]
                level = 0.0 if (i // len(UTTERANCES)) % 2 == 0 else -6.0
                wav = tmp / f"utt-{i}.wav"
                sf.write(wav, speak_16k(text) * 10 ** (level / 20), 16000, subtype="PCM_16")
                begin = recorder.begin() if recorder else 0
                r = barge_trial(rig, audio, wav, text, float(rng.uniform(0.8, 2.5)), transcriber)
                r["level_db"] = level
                onset = r.pop("onset")
                if recorder:
                    recorder.mark(
                        begin, kind="barge", onset=onset, text=text, level_db=level, live=r["detected"]
                    )
                out["barge"].append(r)
                print(f"# {name} {i}: {r}", flush=True)
            for i in range(trials):
                n_barges, n_utts = len(rig.barges), len(rig.utterances)
                begin = recorder.begin() if recorder else 0
                rig.say([REPLIES[i % len(REPLIES)]])
                rig.started.wait(30)
                rig.quiet(60)
                time.sleep(0.5)
                if recorder:
                    recorder.mark(
                        begin, kind="reply", text=REPLIES[i % len(REPLIES)], live=len(rig.barges) - n_barges
                    )
                out["false_barges"] += len(rig.barges) - n_barges
                out["false_turns"] += len(rig.utterances) - n_utts
    finally:
        times, rms = monitor.stop()
        rig.close()
        if recorder:
            record.mkdir(parents=True, exist_ok=True)
            recorder.save(record / f"{name}.npz")
    for r in out["barge"]:
        if "t_barge" in r:
            t_barge = r.pop("t_barge")
            t_silent = silence_after(times, rms, t_barge)
            r["stop_ms"] = None if t_silent is None else round((t_silent - t_barge) * 1000, 1)
    return out


def summarize(mic: dict) -> dict:
    barge = mic["barge"]
    timed = [r for r in barge if r.get("stop_ms") is not None and "decision_ms" in r]
    totals = [r["decision_ms"] + r["stop_ms"] for r in timed]
    return {
        "detected": sum(r["detected"] for r in barge),
        "trials": len(barge),
        "heard": sum(r["heard_ok"] for r in barge),
        "to_silence_p50_ms": round(float(np.percentile(totals, 50)), 1) if totals else None,
        "to_silence_p90_ms": round(float(np.percentile(totals, 90)), 1) if totals else None,
        "decision_p50_ms": round(float(np.median([r["decision_ms"] for r in barge if "decision_ms" in r])), 1)
        if any("decision_ms" in r for r in barge)
        else None,
        "false_barges": mic["false_barges"],
        "false_turns": mic["false_turns"],
        "replies": mic["replies"],
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--trials", type=int, default=20)
    ap.add_argument("--mics", default=DEFAULT_MICS, help=f"any of {', '.join(MICS)}")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--record", type=Path, help="keep each guard's input here (bench/echo_replay.py)")
    ap.add_argument("--voice", help="the assistant's voice (default: the app's, the natural voice)")
    args = ap.parse_args()
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    from app.ears.transcriber import SttConfig, Transcriber

    transcriber = Transcriber(SttConfig(ROOT / "models" / "ggml-tiny.en-q4_0.bin"))
    audio = VirtualAudio().start()
    result: dict = {"bench": "bargein", "trials": args.trials, "voice": args.voice or "default", "mics": {}}
    try:
        with tempfile.TemporaryDirectory() as tmp:
            feed = audio.play_into_mic(noise_wav(Path(tmp) / "noise.wav", 3600))
            try:
                for name in args.mics.split(","):
                    raw = run_mic(
                        name, audio, args.trials, Path(tmp), transcriber, args.seed, args.record, args.voice
                    )
                    result["mics"][name] = {"summary": summarize(raw), "trials": raw["barge"]}
                    print(f"# {name}: {result['mics'][name]['summary']}", flush=True)
            finally:
                feed.terminate()
    finally:
        audio.stop()
    emit("bargein", result)


if __name__ == "__main__":
    main()
