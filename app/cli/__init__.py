"""`talk-llama` command line: the GUI by default, plus chat, transcribe, say, models, doctor.

Each subcommand lives in its own module with `add_parser(subparsers)` and `run(args) -> int`.
Heavy libraries are imported inside `run`, so `--help` and `--version` stay instant.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence

from app import __version__
from app.cli import chat, doctor, models_cmd, say, self_test, transcribe
from app.system import frozen, logs

SUBCOMMANDS = [chat, transcribe, say, models_cmd, doctor, self_test]
# Commands that run llama.cpp or whisper.cpp (None: the window). The others (models, doctor,
# self-test, say) work on any CPU and report the problem themselves.
RUN_MODELS = {None, "chat", "transcribe"}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="talk-llama",
        description="Offline voice assistant. With no command, opens the desktop window.",
    )
    parser.add_argument("--version", action="version", version=f"talk-llama {__version__}")
    parser.add_argument("-v", "--verbose", action="count", default=0, help="more logging (-vv: debug)")
    parser.add_argument("--minimized", action="store_true", help="open the window minimized (e.g. at login)")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for module in SUBCOMMANDS:
        module.add_parser(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    # whisper and llama both use OpenMP; busy-waiting threads starve each other on small CPUs.
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    frozen.prepare()
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command in RUN_MODELS and (problem := frozen.cpu_problem()):
        print(f"talk-llama: {problem}", file=sys.stderr)
        return 3
    logs.setup(args.verbose)
    if args.command is None:
        from app.gui.app import leave, run_gui

        leave(run_gui(minimized=args.minimized))
    return int(args.run(args) or 0)
