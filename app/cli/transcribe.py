"""`talk-llama transcribe [--json] [--model PATH] [--language L] FILE...`"""

from __future__ import annotations

import argparse
import json
import logging
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from app.cli.chat_shared import language_arg

if TYPE_CHECKING:
    from app.ears.transcriber import Transcriber

log = logging.getLogger(__name__)


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("transcribe", help="transcribe audio files (WAV, FLAC, OGG; any sample rate)")
    p.add_argument("files", nargs="+", metavar="FILE")
    p.add_argument("--json", action="store_true", help="one JSON object per line")
    p.add_argument("-m", "--model", help="ggml Whisper model (default: the catalog default)")
    p.add_argument(
        "-l",
        "--language",
        default="en",
        type=language_arg,
        help="spoken language as for chat: a code (en, fr, ...) or auto (other than en: multilingual)",
    )
    p.add_argument("-t", "--threads", type=int, default=None, help="default: the cores left free")
    p.add_argument("-ac", "--audio-ctx", type=int, default=0, help="encoder context (0 = sized to the clip)")
    p.add_argument("--no-gate", action="store_true", help="run whisper even when no speech is detected")
    p.set_defaults(run=run)


def transcribe_one(tr: Transcriber, name: str) -> dict:
    """One file's record: the transcript's fields, or {"error": "cannot read NAME: why"}."""
    from app.ears.audio_file import AudioFileError, read_audio

    try:
        audio = read_audio(Path(name))
    except AudioFileError as exc:
        return {"file": name, "error": f"cannot read {name}: {exc}"}
    return {"file": name, **tr.transcribe(audio).as_json()}


def run(args: argparse.Namespace) -> int:
    from app.catalog.catalog import ModelError
    from app.catalog.languages import whisper_choice
    from app.ears.transcriber import SttConfig, Transcriber

    # the same choice as chat and the window: a language other than English, or auto, needs the
    # multilingual model (an English-only one given for it says what hears it instead)
    model, notice = whisper_choice(args.language, args.model)
    if notice:
        print(f"[{notice}]", file=sys.stderr, flush=True)
    try:
        tr = Transcriber(
            SttConfig(
                model,
                n_threads=args.threads,
                language=args.language,
                audio_ctx=args.audio_ctx,
                gate=not args.no_gate,
            )
        )
    except ModelError as exc:
        print(f"error: {exc}")
        return 2
    failed = 0
    for name in args.files:
        record = transcribe_one(tr, name)
        failed += "error" in record
        if args.json:
            print(json.dumps(record, ensure_ascii=False), flush=True)
        elif "error" in record:
            print(f"{name}: ERROR {record['error']}", flush=True)
        else:
            shown = f"[rejected: {record['reason']}]" if record["rejected"] else record["text"]
            print(f"{name}: {shown}", flush=True)
    return 1 if failed else 0
