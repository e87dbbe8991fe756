"""Actions against the model: how soon a spoken request is heard answered when an action
answers it (app/actions: a timer, the time, a sum, units) versus when the model answers the same
words (`actions=False`, the baseline, the same run). Target (issue #67): an action is spoken at
least as fast as a model turn (p50 ratio <= 1.0), on the built-in model and a real instruct model.

Hands-free, as the app runs: the requests said into the virtual microphone by two voices (the
natural voice and espeak-ng), the first sample of the answer on the virtual speaker. The two
assistants alternate, round by round, so that both see the same machine.
Run: .venv/bin/python -m bench.actions [--rounds 2] [--models default,qwen2.5-coder-0.5b]
"""

from __future__ import annotations

import argparse
import os
import tempfile
from pathlib import Path

import soundfile as sf

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

from bench.common import emit, model_path, pct
from bench.latency_rig import Rig
from bench.latency_trials import hands_free
from tests.support.pulse import VirtualAudio
from tests.support.voices import PIPER, available, speak

REQUESTS = (
    "What time is it?",
    "What is twelve times seven?",
    "How many grams are in a pound?",
    "What time is it in Tokyo?",
    "Set a timer for ten minutes.",
    "What's the date today?",
    "What is fifteen percent of two hundred and forty?",
    "How much time is left on my timer?",
)
VOICES = (PIPER, "en-us")
SAMPLE_KEYS = ("user", "end_silence_ms", "t_transcript_ms", "t_heard_ms")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--models", default="default,qwen2.5-coder-0.5b")
    args = ap.parse_args()
    voices = [v for v in VOICES if v in available()]
    out: dict = {"rounds": args.rounds, "requests": len(REQUESTS), "voices": voices, "models": {}}
    audio = VirtualAudio().start()
    try:
        with tempfile.TemporaryDirectory() as d:
            tmp = Path(d)
            wavs = []
            for v, voice in enumerate(voices):
                for i, text in enumerate(REQUESTS):
                    wavs.append(tmp / f"r{v}-{i}.wav")
                    sf.write(wavs[-1], speak(text, voice), 16000)
            for name in args.models.split(","):
                model = model_path(None if name == "default" else name)
                out["models"][name] = measure(audio, tmp, model, wavs, args.rounds)
    finally:
        audio.stop()
    emit("actions", out)


def measure(audio: VirtualAudio, tmp: Path, model: Path, wavs: list[Path], rounds: int) -> dict:
    heard: dict[bool, list[float]] = {True: [], False: []}
    acted = turns = 0
    kept: list[dict] = []
    for r in range(rounds):
        for on in (True, False) if r % 2 == 0 else (False, True):
            rig = Rig(tmp, hands_free=True, model=model, actions=on)
            try:
                stages, samples = hands_free(audio, rig, wavs)
            finally:
                rig.close()
            heard[on] += stages["heard"]
            if on:
                turns += len(samples)
                acted += sum(1 for s in samples if s.get("action"))
                kept += [
                    {k: s.get(k) for k in SAMPLE_KEYS} | {"action": (s.get("action") or {}).get("intent")}
                    for s in samples
                ]
    action_p50, model_p50 = pct(heard[True], 50), pct(heard[False], 50)
    return {
        "model": model.name,
        "action_heard_p50_ms": round(action_p50),
        "action_heard_p90_ms": round(pct(heard[True], 90)),
        "model_heard_p50_ms": round(model_p50),
        "model_heard_p90_ms": round(pct(heard[False], 90)),
        "ratio_p50": round(action_p50 / model_p50, 2),
        "answered_by_action": f"{acted}/{turns}",
        "n": {"action": len(heard[True]), "model": len(heard[False])},
        "samples": kept,  # the turns with actions on: what was heard, what ran, its end silence
    }


if __name__ == "__main__":
    main()
