"""How well is each language heard? Error rate per language and model, language detection, and
what Automatic costs against a fixed language.

Seven languages, three scripts besides Latin (Cyrillic: Russian; Han: Chinese; Japanese's kana
and kanji), five questions each, spoken by every voice this machine has for the language
(tests/support/voices.py: voices made from recordings of people, MBROLA for French, German and Spanish,
RHVoice for Russian, Open JTalk for Japanese, Piper's joe for English; and espeak-ng's own for
each but Japanese). Each clip is transcribed by every model asked for (default: the English-only
default tiny.en-q4_0 and the multilingual base-q5_1; any ggml file by path, e.g. the hub's small)
with the language fixed, and by the multilingual models on Automatic. Reported per language,
voice and model: word error rate (character error rate for Chinese and Japanese, which write no
spaces), whisper time p50 with the language fixed, and for Automatic, both ways it runs: as the
app runs it, the language found in the utterance's first second (the Segmenter's `speaking`
sample) while the rest is said, then the transcription in it; and found by whisper in the whole
utterance (what an utterance shorter than a second gets). For each: the languages found
(accuracy) and the time after the end of speech over the fixed language's, in the same run
(issue #32's target: <= 1.3x). espeak-ng's voices are far from a person's; the people-like
voices' rows are the ones that stand for users.
Run: .venv/bin/python -m bench.languages [--models tiny.en-q4_0,base-q5_1] [--per 5] [--sample-ms 1000]
"""

from __future__ import annotations

import argparse
import re
import statistics
import time
import unicodedata
from pathlib import Path

import numpy as np

from app.catalog import catalog
from app.catalog.languages import AUTO, english_only
from app.ears.vad import FRAME, RATE, Segmenter, VadConfig
from bench.common import emit, wer
from tests.support.voices import voices_for

# (language, questions)
CLIPS: list[tuple[str, list[str]]] = [
    ("en", [
        "What is the capital of France?", "Tell me a story about a dragon.",
        "How many days are there in a week?", "What time is it in Tokyo right now?",
        "Can you recommend a good book for the weekend?",
    ]),
    ("fr", [
        "Quelle est la capitale de la France ?", "Raconte-moi une histoire de dragon.",
        "Combien de jours y a-t-il dans une semaine ?", "Quel temps fait-il à Paris aujourd'hui ?",
        "Peux-tu me conseiller un bon livre ?",
    ]),
    ("de", [
        "Wie spät ist es jetzt in Berlin?", "Erzähl mir eine Geschichte über einen Drachen.",
        "Wie viele Tage hat eine Woche?", "Was ist die Hauptstadt von Deutschland?",
        "Kannst du mir ein gutes Buch empfehlen?",
    ]),
    ("es", [
        "¿Cuántos días tiene una semana?", "Cuéntame una historia sobre un dragón.",
        "¿Cuál es la capital de España?", "¿Qué hora es en Madrid ahora?",
        "¿Puedes recomendarme un buen libro?",
    ]),
    ("ru", [
        "Какая сегодня погода в Москве?", "Расскажи мне сказку о драконе.",
        "Сколько дней в неделе?", "Какая столица Франции?", "Посоветуй мне хорошую книгу.",
    ]),
    ("zh", [
        "今天天气怎么样", "给我讲一个关于龙的故事", "一个星期有几天", "法国的首都是哪里", "现在几点了",
    ]),
    ("ja", [
        "今日の天気はどうですか", "ドラゴンの話をしてください", "一週間は何日ですか",
        "フランスの首都はどこですか", "今何時ですか",
    ]),
]  # fmt: skip
NO_SPACES = {"zh", "ja"}


def tokens(language: str):
    """Words to compare (lower case, no punctuation); characters for languages without spaces."""

    def split(text: str) -> list[str]:
        text = "".join(
            c for c in unicodedata.normalize("NFC", text.lower()) if unicodedata.category(c)[0] != "P"
        )
        if language in NO_SPACES:
            return [c for c in text if not c.isspace()]
        return re.findall(r"\w+", text)

    return split


def while_speaking(stt, audio: np.ndarray, vad: VadConfig) -> tuple[str, float] | None:
    """Automatic as the app runs it: the language found in the `speaking` sample, then the
    transcription in it. (language, seconds after the end of speech): the stt thread does one
    thing at a time, so a detection still running at the end of speech delays the
    transcription. None: the utterance ended before a sample (whisper finds it at the end)."""
    seg = Segmenter(vad)
    sample_at = end_at = -1
    sample = None
    padded = np.concatenate([audio, np.zeros(RATE, np.float32)])  # the silence that ends it
    for i in range(0, len(padded) - FRAME + 1, FRAME):
        for ev in seg.feed(padded[i : i + FRAME]):
            if ev.kind == "speaking":
                sample, sample_at = ev.audio, seg.position
            elif ev.kind == "utterance" and end_at < 0:
                end_at = ev.end_sample
    if sample is None or end_at < 0:
        return None
    t0 = time.perf_counter()
    found, _ = stt.detect_language(sample)
    detect_s = time.perf_counter() - t0
    overrun = max(0.0, (sample_at - end_at) / RATE + detect_s)
    heard = stt.transcribe(audio, language=found)
    return found, overrun + heard.transcribe_s


def model_path(name: str) -> Path:
    path = Path(name)
    if path.suffix == ".bin" and path.exists():
        return path
    return catalog.models_dir() / catalog.find_entry(name).file


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", default="tiny.en-q4_0,base-q5_1")
    ap.add_argument("--per", type=int, default=5, help="questions per language (at most 5)")
    ap.add_argument(
        "--sample-ms",
        type=int,
        default=VadConfig().language_ms,
        help="speech before the language sample is taken (VadConfig.language_ms)",
    )
    args = ap.parse_args()
    from app.ears.transcriber import SttConfig, Transcriber

    clips = []  # (language, voice kind, text, audio)
    for language, questions in CLIPS:
        for voice in voices_for(language):
            if voice.kind == "espeak-ng" and language == "ja":
                continue  # espeak-ng's Japanese reads kana only: it spells kanji out in English
            clips += [(language, voice.kind, text, voice.say(text)) for text in questions[: args.per]]
    rows: dict[str, dict] = {}
    for name in args.models.split(","):
        path = model_path(name)
        stt = Transcriber(SttConfig(path, min_prob=0.0))
        multilingual = not english_only(path)
        per: dict[tuple[str, str], dict[str, list]] = {}
        for language, voice, text, audio in clips:
            r = per.setdefault((language, voice), {})
            stt.config.language = language
            stt.transcribe(audio)  # warm: the first run of a size pays for its buffers
            fixed = stt.transcribe(audio)
            errors, n = wer(text, fixed.text, tokens(language))
            r.setdefault("errors", []).append(errors)
            r.setdefault("words", []).append(n)
            r.setdefault("fixed_s", []).append(fixed.transcribe_s)
            if multilingual:
                stt.config.language = AUTO
                auto = stt.transcribe(audio)
                r.setdefault("found", []).append(auto.language == language)
                r.setdefault("auto_over_fixed", []).append(auto.transcribe_s / max(fixed.transcribe_s, 1e-6))
                if (early := while_speaking(stt, audio, VadConfig(language_ms=args.sample_ms))) is not None:
                    r.setdefault("found_early", []).append(early[0] == language)
                    r.setdefault("early_over_fixed", []).append(early[1] / max(fixed.transcribe_s, 1e-6))
            print(f"{name} {language} {voice}: {fixed.text!r}", flush=True)
        rows[name] = {
            f"{language}/{voice}": {
                "error_rate": round(sum(r["errors"]) / max(1, sum(r["words"])), 3),
                "unit": "characters" if language in NO_SPACES else "words",
                "fixed_p50_ms": round(statistics.median(r["fixed_s"]) * 1000),
                **(
                    {
                        "detected": f"{sum(r['found'])}/{len(r['found'])}",
                        "auto_over_fixed_p50": round(statistics.median(r["auto_over_fixed"]), 2),
                        "found_early": f"{sum(r['found_early'])}/{len(r['found_early'])}",
                        "early_over_fixed_p50": round(statistics.median(r["early_over_fixed"]), 2),
                    }
                    if "found" in r
                    else {}
                ),
            }
            for (language, voice), r in per.items()
        }
        print(name, rows[name], flush=True)
    emit("languages", {"clips": len(clips), "sample_ms": args.sample_ms, "models": rows})


if __name__ == "__main__":
    main()
