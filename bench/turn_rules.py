"""How a hands-free turn's end is decided, compared offline on the same clips (issue #33).

For each voice (espeak-ng's four English voices, MBROLA's us2 when installed and the natural
voice, tests/support/voices.py) and each
clip: the 12 complete questions (PHRASES) and the 12 paused utterances (PAUSED) cut at their
pause, spoken two ways — `through` (one sentence, cut where the tail begins: the voice is
mid-sentence) and `apart` (the head said alone: it ends like a finished sentence, so only the
words can tell). At the pause the loop's inputs are computed once, as the loop computes them:
whisper's transcript of the audio so far, the language model's end-of-turn probability for those
words (a tentative turn, withdrawn), the voice's pitch at its end against the speaker's learnt
floor (prosody.py), and the audio turn model's probability (Smart Turn v3.2, turn_model.py) with
the 20 ms of silence the segmenter's pause has and with 200 ms.

Then every rule (loop/turn_end.py: the words on today's scale or the earlier one, the audio
model alone, both, either, their mean; a server's without the local words reader: the sound with
or without the pitch hold; with the reader a server's turns are decided as "both")
gives the silence that would end the turn. A paused utterance ends early when that silence is
shorter than its pause (500–800 ms, as bench/latency) as the loop's speech detector hears it in
the whole clip (the voice's own silence around the words and the detector's delays count); for
a complete question the silence is what the user waits before whisper's final pass starts.
Reported per voice family (espeak, mbrola, natural): early ends per kind, the complete
questions' silence p50, and the turn model's time per call.

Run: .venv/bin/python -m bench.turn_rules   (needs the default models and the smart-turn model;
`--rescore` scores the rules again on the clips of the saved result, in a second)
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import time
from pathlib import Path

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import numpy as np

from bench.common import emit
from tests.support.gates import ReadingGate
from tests.support.phrases import PAUSED, PHRASES
from tests.support.speech import until_quiet
from tests.support.voices import available, family, said_apart, said_through, speak, through_head

RESULT = Path(__file__).parent / "results" / "turn_rules.json"
PAUSE_AT_S = 0.02  # the segmenter's `pause` event comes after 20 ms of silence

PAUSED_KINDS = ("through", "apart")


def pause_s(i: int) -> float:
    return 0.5 + 0.1 * (i % 4)


def heard_pause_ms(clip: np.ndarray, model: object) -> int:
    """The longest silence inside the utterance `clip` as the hands-free segmenter hears it (the
    speech model beside WebRTC's, as the app runs): what the turn's end silence must outlast."""
    from app.ears.vad import FRAME, RATE, Segmenter, VadConfig

    seg = Segmenter(VadConfig(end_silence_ms=5000))
    seg.hear_with(model)  # type: ignore[arg-type]
    longest = run = 0
    started = False
    padded = np.concatenate([np.zeros(RATE // 2, np.float32), clip, np.zeros(RATE // 2, np.float32)])
    for i in range(0, len(padded) - FRAME + 1, FRAME):
        for ev in seg.feed(padded[i : i + FRAME]):
            started = started or ev.kind == "speech_started"
            if ev.kind == "resumed":
                longest = max(longest, run)
        run = seg._silence_run if started else 0  # the segmenter's own count
    return longest * 1000 * FRAME // RATE


def measure(voices: list[str]) -> tuple[list[dict], float]:
    from app.brain.conversation import Conversation
    from app.brain.persona import PINNED_TIME, Persona
    from app.brain.records import LlmConfig
    from app.brain.sampling import SamplingConfig
    from app.catalog.catalog import default_model_path
    from app.ears.prosody import FinalPitch
    from app.ears.silero import SpeechModel
    from app.ears.transcriber import SttConfig, Transcriber
    from app.ears.turn_model import TurnModel

    stt = Transcriber(SttConfig(default_model_path("whisper")))
    conv = Conversation(
        LlmConfig(default_model_path("llm"), n_ctx=2048, sampling=SamplingConfig(temperature=0)),
        Persona(now=PINNED_TIME),
    )
    turn_model = TurnModel(default_model_path("turn"))
    speech_model = SpeechModel(default_model_path("vad"))
    rows, model_ms = [], []
    for voice in voices:
        pitch = FinalPitch()
        for text in PHRASES:  # the speaker's statements teach where their voice ends
            pitch.learn(until_quiet(speak(text, voice)), text)
        clips = [("complete", speak(q, voice), 0.0, 0) for q in PHRASES]
        for i, (head, tail) in enumerate(PAUSED):
            p = pause_s(i)
            heard = heard_pause_ms(said_through(head, tail, p, voice), speech_model)
            clips.append(("through", through_head(head, tail, voice, p), p, heard))
            heard = heard_pause_ms(said_apart(head, tail, p, voice), speech_model)
            clips.append(("apart", until_quiet(speak(head, voice)), p, heard))
        for kind, audio, pause, heard_pause in clips:
            at_pause = np.concatenate([until_quiet(audio), np.zeros(int(16000 * PAUSE_AT_S), np.float32)])
            later = np.concatenate([at_pause, np.zeros(int(16000 * 0.18), np.float32)])
            text = stt.transcribe(at_pause).text
            gate = ReadingGate()
            list(conv.stream(text, gate=gate))
            t0 = time.perf_counter()
            audio_p = turn_model.probability(at_pause)
            model_ms.append((time.perf_counter() - t0) * 1000)
            row = {
                "voice": voice,
                "family": family(voice),
                "kind": kind,
                "pause_s": pause,
                "heard_pause_ms": heard_pause,
                "text": text,
                "words_p": gate.end_of_turn,
                "pitch_end": pitch.ending(at_pause),
                "audio_p": audio_p,
                "audio_p_200ms": turn_model.probability(later),
            }
            rows.append(row)
    conv.close()
    return rows, float(np.median(model_ms))


# name -> (TurnEndConfig changes, the brain reads the words' P). The pitch hold applies only
# where the words are not read (a server without the local words reader, brain/words_reader.py;
# with it a server's turns are decided as "both (default)": the reader's P is the local brain's).
# the rule before the model: words alone, 0.001-0.2 over 1.2 s
EARLIER_WORDS = {"combine": "words", "trailing_at": 0.001, "finished_at": 0.2, "long_ms": 1200}
RULES: dict[str, tuple[dict, bool]] = {
    "words, earlier scale (no turn model)": (EARLIER_WORDS, True),
    "words (no turn model)": ({"combine": "words"}, True),
    "both (default)": ({}, True),
    "both, the words finished from P 0.2": ({"finished_at": 0.2}, True),
    "both, the words finished from P 0.13": ({"finished_at": 0.13}, True),
    "both, the sound asked up to P 0.5": ({"words_sure_at": 0.5}, True),
    "both, the sound asked at any P": ({"words_sure_at": 1.01}, True),
    "both, the sound on its own scale": (
        {"audio_finished_beside_words": 0.5, "audio_trailing_beside_words": 0.1},
        True,
    ),
    "mean": ({"combine": "mean"}, True),
    "either": ({"combine": "either"}, True),
    "audio": ({"combine": "audio"}, True),
    "server: fixed (no turn model)": ({"rule": "fixed"}, False),
    "server, no words reader: the sound + pitch": ({}, False),
    "server, no words reader: the sound alone": ({"hold_at": 0.0}, False),
}


def score(rows: list[dict], audio_key: str = "audio_p") -> dict:
    """Per rule and voice family: paused utterances ended early per kind, and the silence that
    ends the complete questions (p50, mean). An empty transcript starts no tentative turn: the
    undecided silence applies (the fixed one for a fixed rule)."""
    from app.loop.turn_end import TurnEndConfig, end_silence_ms

    out: dict = {}
    for name, (changes, reads_words) in RULES.items():
        c = dataclasses.replace(TurnEndConfig(), **changes)
        per: dict = {}
        for fam in sorted({r["family"] for r in rows}):
            mine = [r for r in rows if r["family"] == fam]

            def ms(r: dict, c: TurnEndConfig = c, reads_words: bool = reads_words) -> int:
                if not r["text"]:
                    return c.base_ms(400)
                p = r["words_p"] if reads_words else None
                return end_silence_ms(p, c, 400, r["pitch_end"], r["text"], r[audio_key])

            early = {
                k: sum(ms(r) < r["heard_pause_ms"] for r in mine if r["kind"] == k) for k in PAUSED_KINDS
            }
            n = {k: sum(r["kind"] == k for r in mine) for k in PAUSED_KINDS}
            complete = [ms(r) for r in mine if r["kind"] == "complete"]
            per[fam] = {
                "through_early": f"{early['through']}/{n['through']}",
                "apart_early": f"{early['apart']}/{n['apart']}",
                "complete_silence_p50_ms": round(float(np.median(complete))),
                "complete_silence_mean_ms": round(float(np.mean(complete))),
            }
        out[name] = per
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rescore", action="store_true", help="score the rules again on the saved clips")
    args = ap.parse_args()
    started = time.perf_counter()
    measured_on, seconds = None, None  # this machine, this run
    if args.rescore:
        saved = json.loads(RESULT.read_text())
        voices, rows, model_ms = saved["voices"], saved["clips"], saved["turn_model_ms_p50"]
        measured_on, seconds = saved["machine"], saved.get("seconds")
    else:
        voices = available()
        rows, model_ms = measure(voices)
    emit(
        "turn_rules",
        {
            "voices": voices,
            "turn_model_ms_p50": round(model_ms, 1),
            "rules_at_20ms": score(rows),
            "rules_at_200ms": score(rows, "audio_p_200ms"),
            "clips": rows,
            "seconds": seconds or round(time.perf_counter() - started),
            "machine": measured_on,
        },
    )


if __name__ == "__main__":
    main()
