"""Cut speech and short answers through the transcriber: which of them become turns.

A push-to-talk key that ends a hold too early hands whisper pieces of a question; whisper tiny
turns pieces into its stock phrases ("Thanks for watching.", "Okay, okay, okay…"). Three sets,
each in every voice of tests/support/voices.py (espeak-ng voices, and Piper's natural voice when
installed), through the app's own `Transcriber` (default model, default settings):
- `subword`: slices of 60-180 ms at random places inside the questions' speech: shorter than
  any word (the shortest answers below hold 260 ms or more), never a turn (target 0);
- `cut`: each question split at 1-3 random points into pieces of >= 250 ms (what spurious
  release/press pairs did): pieces that come out as one of whisper's stock phrases (target 0);
  other pieces that become turns hold words of the question and are listed;
- `answers`: short real answers ("Okay.", "Thanks.", "Five." …): every one a turn (target all).
Run: .venv/bin/python -m bench.fragments [--seed 1] [--questions 12]
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import argparse
import itertools
import logging

import numpy as np

from app.catalog.catalog import default_model_path
from app.ears.hallucinations import caption_phrase, stock_phrase, unloop
from app.ears.transcriber import SttConfig, Transcriber
from bench.common import emit
from tests.support import voices
from tests.support.phrases import PHRASES

RATE = 16000
ANSWERS = ("Okay.", "Thanks.", "Five.", "Yes.", "No.", "Sure.", "Thank you.", "Bye.", "Seven.", "Nope.")


def speech_span(x: np.ndarray) -> tuple[int, int]:
    loud = np.nonzero(np.abs(x) > 0.01)[0]
    return int(loud[0]), int(loud[-1]) + 1


def room(rng: np.random.Generator, seconds: float) -> np.ndarray:
    return (rng.standard_normal(int(seconds * RATE)) * 10 ** (-60 / 20)).astype(np.float32)


def framed(rng: np.random.Generator, piece: np.ndarray) -> np.ndarray:
    """A piece as push-to-talk records it: the pre-roll before, a little after."""
    return np.concatenate([room(rng, 0.2), piece, room(rng, 0.05)])


def subword(rng: np.random.Generator, clip: np.ndarray, n: int = 4) -> list[np.ndarray]:
    a, b = speech_span(clip)
    out = []
    for _ in range(n):
        length = int(rng.uniform(0.06, 0.18) * RATE)
        start = int(rng.integers(a, max(a + 1, b - length)))
        out.append(clip[start : start + length])
    return out


def cuts(rng: np.random.Generator, clip: np.ndarray) -> list[np.ndarray]:
    a, b = speech_span(clip)
    min_piece = int(0.25 * RATE)
    for _ in range(50):
        points = sorted(rng.integers(a + min_piece, b - min_piece, size=int(rng.integers(1, 4))).tolist())
        edges = [a, *points, b]
        if all(e1 - e0 >= min_piece for e0, e1 in itertools.pairwise(edges)):
            return [clip[e0:e1] for e0, e1 in itertools.pairwise(edges)]
    return [clip[a:b]]


def whisper_stock(text: str) -> bool:
    """One of whisper's stock inventions: an everyday stock phrase, a caption phrase, a loop."""
    return bool(text) and (stock_phrase(text) or caption_phrase(text) or unloop(text)[1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--questions", type=int, default=12)
    args = ap.parse_args()
    logging.basicConfig(level=logging.WARNING)
    rng = np.random.default_rng(args.seed)
    tr = Transcriber(SttConfig(default_model_path("whisper")))
    rows: dict[str, list[dict]] = {"subword": [], "cut": [], "answers": []}
    for voice in voices.available():
        for q in PHRASES[: args.questions]:
            clip = voices.speak(q, voice)
            for kind, pieces in (("subword", subword(rng, clip)), ("cut", cuts(rng, clip))):
                for piece in pieces:
                    t = tr.transcribe(framed(rng, piece))
                    rows[kind].append(
                        {
                            "voice": voice,
                            "question": q,
                            "ms": round(len(piece) / 16),
                            "text": t.text,
                            "turn": not t.rejected,
                            "reason": t.reason,
                            "raw": t.raw_text,
                            "speech_ms": t.speech.speech_ms if t.speech else 0,
                        }
                    )
        for answer in ANSWERS:
            t = tr.transcribe(framed(rng, voices.speak(answer, voice)))
            rows["answers"].append(
                {"voice": voice, "said": answer, "text": t.text, "turn": not t.rejected, "reason": t.reason}
            )
    sub_turns = [r for r in rows["subword"] if r["turn"]]
    cut_turns = [r for r in rows["cut"] if r["turn"]]
    stock = [r for r in cut_turns + sub_turns if whisper_stock(r["text"])]
    raw_stock = [r for r in rows["cut"] + rows["subword"] if whisper_stock(r["raw"])]
    answers_lost = [r for r in rows["answers"] if not r["turn"]]
    emit(
        "fragments",
        {
            "voices": voices.available(),
            "subword_pieces": len(rows["subword"]),
            "subword_turns": len(sub_turns),
            "subword_turn_texts": [f"{r['voice']}: {r['text']}" for r in sub_turns],
            "cut_pieces": len(rows["cut"]),
            "cut_turns": len(cut_turns),
            "whisper_stock_phrases": len(raw_stock),
            "whisper_stock_phrase_texts": [f"{r['raw']} ({r['reason'] or 'turn'})" for r in raw_stock],
            "stock_phrase_turns": len(stock),
            "stock_phrase_turn_texts": [r["text"] for r in stock],
            "cut_turn_texts": [f"{r['voice']}: {r['text']} ({r['speech_ms']} ms)" for r in cut_turns],
            "cut_rejected": [f"{r['raw']!r}: {r['reason']}" for r in rows["cut"] if not r["turn"]],
            "answers": len(rows["answers"]),
            "answers_heard": len(rows["answers"]) - len(answers_lost),
            "answers_lost": [
                f"{r['voice']}: {r['said']} -> {r['text']!r} ({r['reason']})" for r in answers_lost
            ],
        },
    )


if __name__ == "__main__":
    main()
