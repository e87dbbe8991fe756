"""STT benchmark: automatic audio_ctx vs whisper's full 30 s window, same clips, same run.

Reports per-clip RTF (transcription time / clip length) and WER over a synthesized set
(espeak-ng: 20 phrases in six voices, 120 clips of 2-3.5 s) for each model in `--models`
(default: the f16 tiny.en and its q4_0 quantization), both settings interleaved clip by clip.
Targets (tiny.en, 2 cores): RTF <= 0.15 for 2-5 s clips with automatic audio_ctx; its WER at
most 1 point above the full window's. `wer_vs_f16_full` is each setting's cost against the
unquantized model with the full window (what quantization costs on top of audio_ctx).
Also measures end-of-speech detection latency of the hands-free segmenter (p50 <= 500 ms) and
of talk-llama's rule (vad_simple over the last 1250 ms) on the same clips.
Run: .venv/bin/python -m bench.stt [--models tiny.en,tiny.en-q4_0]
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import argparse

import numpy as np

from app.catalog.catalog import default_entry, find_entry, models_dir
from app.ears.transcriber import FULL_AUDIO_CTX, SttConfig, Transcriber
from app.ears.vad import RATE, Segmenter, VadConfig, talk_llama_vad
from bench.common import emit, pct, wer
from tests.support.phrases import PHRASES, STT_EXTRA
from tests.support.speech import speak_16k

VOICES = ("en-us", "en-gb", "en-gb-x-rp", "en-029", "en-gb-scotland", "en-gb-x-gbclan")
SETTINGS = (("auto", None), ("full", FULL_AUDIO_CTX))


def eos_latency(clip: np.ndarray, tail_s: float = 2.0) -> tuple[float | None, float | None]:
    """ms from the end of speech to the segmenter closing the utterance (ours, talk-llama's)."""
    rng = np.random.default_rng(0)
    noise = (rng.standard_normal(int(tail_s * RATE)) * 0.002).astype(np.float32)
    lead = (rng.standard_normal(RATE // 2) * 0.002).astype(np.float32)
    audio = np.concatenate([lead, clip, noise])
    speech_end = len(lead) + int(np.nonzero(np.abs(clip) > 0.02)[0][-1])
    ours = None
    seg = Segmenter(VadConfig())
    for i in range(0, len(audio), 320):
        if any(e.kind == "utterance" for e in seg.feed(audio[i : i + 320])):
            ours = (i + 320 - speech_end) / RATE * 1000
            break
    theirs = None
    for i in range(speech_end, len(audio), 320):  # talk-llama polls every 100 ms in its loop
        if talk_llama_vad(audio[: i + 320], 1250, 0.6, 100.0):
            theirs = (i + 320 - speech_end) / RATE * 1000
            break
    return ours, theirs


def _wer_pct(rows: list[dict]) -> float:
    return round(100 * sum(r["edits"] for r in rows) / sum(r["words"] for r in rows), 2)


def run_model(name: str, clips: list[tuple[str, np.ndarray]]) -> dict[str, list[dict]]:
    tr = Transcriber(SttConfig(models_dir() / find_entry(name).file))
    rows: dict[str, list[dict]] = {s: [] for s, _ in SETTINGS}
    for phrase, clip in clips:
        for setting, ctx in SETTINGS:
            r = tr.transcribe(clip, audio_ctx=ctx)
            e, n = wer(phrase, r.text)
            dur = len(clip) / RATE
            rows[setting].append(
                {"rtf": r.transcribe_s / dur, "edits": e, "words": n, "ctx": r.audio_ctx, "text": r.text}
            )
    return rows


def summarize(rows: dict[str, list[dict]], reference_full: list[dict]) -> dict:
    out: dict = {}
    for setting, rs in rows.items():
        out[setting] = {
            "rtf_p50": round(pct([r["rtf"] for r in rs], 50), 3),
            "rtf_p90": round(pct([r["rtf"] for r in rs], 90), 3),
            "wer_pct": _wer_pct(rs),
            "audio_ctx_mean": round(float(np.mean([r["ctx"] for r in rs])), 1),
            "errors": [r["text"] for r in rs if r["edits"]],
        }
    ref = _wer_pct(reference_full)
    out["speedup_auto_vs_full"] = round(out["full"]["rtf_p50"] / out["auto"]["rtf_p50"], 2)
    out["wer_delta_points"] = round(out["auto"]["wer_pct"] - out["full"]["wer_pct"], 2)
    out["wer_vs_f16_full"] = {s: round(out[s]["wer_pct"] - ref, 2) for s in rows}
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--models", default="tiny.en,tiny.en-q4_0", help="catalog names; the first is the f16 reference"
    )
    args = ap.parse_args()
    names = args.models.split(",")
    phrases = PHRASES + STT_EXTRA
    clips = [(p, speak_16k(p, v)) for v in VOICES for p in phrases]
    per_model = {name: run_model(name, clips) for name in names}
    reference_full = per_model[names[0]]["full"]
    result: dict = {
        "clips": len(clips),
        "clip_s_mean": round(float(np.mean([len(c) / RATE for _, c in clips])), 2),
        "default_model": default_entry("whisper").name,
        "models": {name: summarize(rows, reference_full) for name, rows in per_model.items()},
    }
    eos = [eos_latency(c) for _, c in clips]
    for key, vals in (("eos_ms_ours", [a for a, _ in eos]), ("eos_ms_talk_llama", [b for _, b in eos])):
        hits = [v for v in vals if v is not None]
        missed = len(vals) - len(hits)
        result[key] = {"p50": round(pct(hits, 50)), "p90": round(pct(hits, 90)), "missed": missed}
    emit("stt", result)


if __name__ == "__main__":
    main()
