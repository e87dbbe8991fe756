"""STT benchmark: automatic audio_ctx vs whisper's full 30 s window, same clips, same run.

Reports per-clip RTF (transcription time / clip length) and WER over a synthesized set
(espeak-ng, two voices), for both settings. Targets (tiny.en, 2 cores): RTF <= 0.15 for 2-5 s
clips with automatic audio_ctx; its WER at most 1 point above the full window's.
Also measures end-of-speech detection latency of the hands-free segmenter (p50 <= 500 ms) and
of talk-llama's rule (vad_simple over the last 1250 ms) on the same clips.
Run: .venv/bin/python -m bench.stt
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import numpy as np

from app.core.catalog import default_model_path
from app.core.stt import FULL_AUDIO_CTX, SttConfig, Transcriber
from app.core.vad import RATE, Segmenter, VadConfig, talk_llama_vad
from bench.common import emit, pct, speak_16k, wer
from bench.phrases import PHRASES

VOICES = ("en-us", "en-gb")


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


def main() -> None:
    tr = Transcriber(SttConfig(default_model_path("whisper")))
    clips = [(p, v, speak_16k(p, v)) for v in VOICES for p in PHRASES]
    rows = {"auto": [], "full": []}
    for phrase, _voice, clip in clips:
        for name, ctx in (("auto", None), ("full", FULL_AUDIO_CTX)):
            r = tr.transcribe(clip, audio_ctx=ctx)
            e, n = wer(phrase, r.text)
            rows[name].append(
                {
                    "dur": len(clip) / RATE,
                    "rtf": r.transcribe_s / (len(clip) / RATE),
                    "edits": e,
                    "words": n,
                    "ctx": r.audio_ctx,
                    "text": r.text,
                }
            )
    eos = [eos_latency(c) for _, _, c in clips]
    ours = [a for a, _ in eos if a is not None]
    theirs = [b for _, b in eos if b is not None]
    result = {"clips": len(clips), "clip_s_mean": round(float(np.mean([r["dur"] for r in rows["auto"]])), 2)}
    for name, rs in rows.items():
        result[name] = {
            "rtf_p50": round(pct([r["rtf"] for r in rs], 50), 3),
            "rtf_p90": round(pct([r["rtf"] for r in rs], 90), 3),
            "wer_pct": round(100 * sum(r["edits"] for r in rs) / sum(r["words"] for r in rs), 2),
            "audio_ctx_mean": round(float(np.mean([r["ctx"] for r in rs])), 1),
        }
    result["speedup_auto_vs_full"] = round(result["full"]["rtf_p50"] / result["auto"]["rtf_p50"], 2)
    result["wer_delta_points"] = round(result["auto"]["wer_pct"] - result["full"]["wer_pct"], 2)
    result["eos_ms_ours"] = {
        "p50": round(pct(ours, 50)),
        "p90": round(pct(ours, 90)),
        "missed": len(eos) - len(ours),
    }
    result["eos_ms_talk_llama"] = {
        "p50": round(pct(theirs, 50)),
        "p90": round(pct(theirs, 90)),
        "missed": len(eos) - len(theirs),
    }
    result["errors_auto"] = [r["text"] for r in rows["auto"] if r["edits"]]
    result["errors_full"] = [r["text"] for r in rows["full"] if r["edits"]]
    emit("stt", result)


if __name__ == "__main__":
    main()
