"""Voice-to-voice latency with the natural voice vs the system voice (espeak-ng), same run.

The hands-free words rule of bench/latency.py (spoken questions into the virtual microphone,
the first sample of the reply on the virtual speaker), once per voice and round, the voices
alternating so that both see the same machine. Target (issue #31): the natural voice's p50 <=
1.15x the system voice's.
Run: .venv/bin/python -m bench.voice_latency [--questions 12] [--rounds 2]
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

import soundfile as sf

from bench.common import emit, pct
from bench.latency_rig import Rig
from bench.latency_trials import hands_free
from tests.support.phrases import PHRASES
from tests.support.pulse import VirtualAudio
from tests.support.speech import speak_16k

VOICES = {"natural": "joe", "system": "gmw/en-us"}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--questions", type=int, default=12)
    ap.add_argument("--rounds", type=int, default=2)
    args = ap.parse_args()
    heard: dict[str, list[float]] = {name: [] for name in VOICES}
    first_audio: dict[str, list[float]] = {name: [] for name in VOICES}
    audio = VirtualAudio().start()
    try:
        with tempfile.TemporaryDirectory() as d:
            tmp = Path(d)
            wavs = []
            for i in range(args.questions):
                wavs.append(tmp / f"q{i}.wav")
                sf.write(wavs[-1], speak_16k(PHRASES[i % len(PHRASES)]), 16000)
            for r in range(args.rounds):
                order = list(VOICES) if r % 2 == 0 else list(reversed(VOICES))
                for name in order:
                    rig = Rig(tmp, hands_free=True, voice=VOICES[name])
                    try:
                        stages, _ = hands_free(audio, rig, wavs)
                    finally:
                        rig.close()
                    heard[name] += stages["heard"]
                    first_audio[name] += stages["first_audio"]
    finally:
        audio.stop()
    out: dict = {"questions": args.questions, "rounds": args.rounds, "voices": {}}
    for name in VOICES:
        out["voices"][name] = {
            "heard_p50_ms": round(pct(heard[name], 50)),
            "heard_p90_ms": round(pct(heard[name], 90)),
            "first_audio_p50_ms": round(pct(first_audio[name], 50)),
            "n": len(heard[name]),
        }
    v = out["voices"]
    out["natural_over_system_p50"] = round(v["natural"]["heard_p50_ms"] / v["system"]["heard_p50_ms"], 3)
    emit("voice_latency", out)


if __name__ == "__main__":
    main()
