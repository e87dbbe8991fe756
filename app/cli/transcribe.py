"""`talk-llama transcribe [--json] [--model PATH] [--language L] FILE...`"""

from __future__ import annotations

import argparse
import json
import logging
from pathlib import Path

log = logging.getLogger(__name__)


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("transcribe", help="transcribe audio files (WAV, FLAC, OGG; any sample rate)")
    p.add_argument("files", nargs="+", metavar="FILE")
    p.add_argument("--json", action="store_true", help="one JSON object per line")
    p.add_argument("-m", "--model", help="ggml Whisper model (default: the catalog default)")
    p.add_argument("-l", "--language", default="auto", help="language code, or auto (.en models: en)")
    p.add_argument("-t", "--threads", type=int, default=None, help="default: the cores left free")
    p.add_argument("-ac", "--audio-ctx", type=int, default=0, help="encoder context (0 = sized to the clip)")
    p.add_argument("--no-gate", action="store_true", help="run whisper even when no speech is detected")
    p.set_defaults(run=run)


def load_audio(path: Path):
    """Decode any soundfile-readable file to 16 kHz mono float32."""
    import numpy as np
    import soundfile as sf
    import soxr

    data, sr = sf.read(str(path), dtype="float32", always_2d=True)
    mono = data.mean(axis=1) if data.shape[1] > 1 else data[:, 0]
    if sr != 16000:
        mono = soxr.resample(mono, sr, 16000)
    return np.ascontiguousarray(mono, dtype=np.float32)


def run(args: argparse.Namespace) -> int:
    from app.catalog.catalog import ModelError, default_model_path
    from app.ears.transcriber import SttConfig, Transcriber

    model = Path(args.model) if args.model else default_model_path("whisper")
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
        try:
            audio = load_audio(Path(name))
        except Exception as exc:  # soundfile raises several types for unreadable files
            failed += 1
            msg = f"cannot read {name}: {exc}"
            if args.json:
                print(json.dumps({"file": name, "error": msg}), flush=True)
            else:
                print(f"{name}: ERROR {msg}", flush=True)
            continue
        result = tr.transcribe(audio)
        if args.json:
            print(json.dumps({"file": name, **result.as_json()}, ensure_ascii=False), flush=True)
        else:
            shown = f"[rejected: {result.reason}]" if result.rejected else result.text
            print(f"{name}: {shown}", flush=True)
    return 1 if failed else 0
