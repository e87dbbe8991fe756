"""A worker process that loads model files the way the app does and says how each went.

    python -m tests.support.model_probe llm|whisper [CLIP.wav]

Reads one file path per stdin line; for each prints one JSON line: {"ok": "<what it said>"},
{"refused": "<the message the app shows>"} for the errors the app reports as such (ModelError,
BrainError, ValueError), or {"unexpected": "<type>: <message>"} for any other exception (the
app would still show it, but as a raw library error). Before each file it prints
{"start": path}, so a parent that sees the worker die of a signal knows which file killed it.
The local brain is opened with a small context and answers one short turn; whisper transcribes
CLIP (the model must also work, not only load).
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

_ANSWERS = sys.stdout  # replaced in main: the libraries' own prints go to stderr


def _emit(**record: str) -> None:
    print(json.dumps(record), file=_ANSWERS, flush=True)


def _try_llm(path: Path) -> str:
    from app.brain.brain import open_brain
    from app.brain.persona import Persona
    from app.brain.records import LlmConfig

    brain = open_brain(LlmConfig(path, n_ctx=256, n_threads=1, max_tokens=6), None, Persona())
    try:
        return "".join(brain.stream("Hi!"))
    finally:
        brain.close()


def _try_whisper(path: Path, clip: Path) -> str:
    from app.ears.audio_file import read_audio
    from app.ears.transcriber import SttConfig, Transcriber

    transcript = Transcriber(SttConfig(path, n_threads=1, language="en")).transcribe(read_audio(clip))
    return transcript.text or f"[rejected: {transcript.reason}]"


def main(argv: list[str]) -> int:
    from app.brain.records import BrainError
    from app.catalog.catalog import ModelError

    global _ANSWERS
    _ANSWERS = os.fdopen(os.dup(1), "w")  # the answers keep the real stdout...
    os.dup2(2, 1)  # ...and anything a library prints there goes to stderr
    kind = argv[0]
    for line in sys.stdin:
        path = Path(line.strip())
        _emit(start=str(path))
        try:
            said = _try_llm(path) if kind == "llm" else _try_whisper(path, Path(argv[1]))
        except (ModelError, BrainError, ValueError) as exc:
            _emit(refused=str(exc))
        except Exception as exc:
            _emit(unexpected=f"{type(exc).__name__}: {exc}")
        else:
            _emit(ok=said)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
