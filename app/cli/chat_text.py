"""Typed mode of `talk-llama chat --text`: one user message per stdin line, replies streamed to
stdout (`Person: ...` / `Bot: ...`, or one JSON object per turn with `--jsonl`)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from app.actions.skills import open_actions
from app.cli.chat_shared import Transcript, llm_config, persona, remote_config, turn_record


def run_text(args: argparse.Namespace) -> int:
    from app.brain.brain import BrainError, load_session, open_brain
    from app.brain.conversation import Conversation
    from app.catalog.catalog import ModelError

    try:
        conv = open_brain(llm_config(args, voice=False), remote_config(args, voice=False), persona(args))
    except (ModelError, BrainError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    out = Transcript(args)
    session_dir = Path(args.session) if args.session else None
    if session_dir:
        res = load_session(conv, session_dir)
        if res.message:
            print(f"warning: {res.message}", file=sys.stderr)
    if args.verbose_prompt:
        print(conv.system_prompt, file=sys.stderr)
    bot, person = conv.persona.bot, conv.persona.person
    actions = open_actions(args.language, None, _announce) if args.actions else None
    if actions is not None:
        actions.start()
    try:
        for raw in sys.stdin:
            text = raw.strip()
            if not text:
                continue
            out.line(f"{person}: {text}")
            out.begin_reply(bot)
            if actions is not None and (request := actions.pick(text)) is not None:
                _act(conv, actions.do(request), text, out, args)
                continue
            pieces = []
            try:
                for piece in conv.stream(text):
                    pieces.append(piece)
                    out.reply_piece(piece)
            except BrainError as exc:  # the server failed: say so, keep going
                out.line("")
                print(f"error: {exc}", file=sys.stderr, flush=True)
                continue
            out.line("")
            reply = "".join(pieces).strip()
            if conv.last_stats is not None and conv.last_stats.notice:
                print(f"notice: {conv.last_stats.notice}", file=sys.stderr, flush=True)
            if args.jsonl:
                print(json.dumps(turn_record(conv.last_stats, text, reply), ensure_ascii=False), flush=True)
            if args.print_special and isinstance(conv, Conversation):  # the local model's tokens
                ids = conv.llama.input_ids[: conv.n_past].tolist()
                print(conv.llama.detokenize(ids, special=True).decode("utf-8", "replace"), file=sys.stderr)
            if session_dir:
                _save(conv, session_dir)
    except KeyboardInterrupt:
        print("", file=sys.stderr)
    finally:
        if session_dir and conv.history:
            _save(conv, session_dir)
        out.close()
        conv.close()
        if actions is not None:
            actions.close()
    return 0


def _act(conv, outcome, text: str, out: Transcript, args: argparse.Namespace) -> None:
    """An action answered the line (app/actions): its answer is the reply, and joins the
    conversation; `--jsonl` has it as the record's `action`."""
    out.reply_piece(outcome.reply)
    out.line("")
    if outcome.reply:
        conv.record_exchange(text, outcome.reply)
    if args.jsonl:
        record = {"user": text, "reply": outcome.reply, "action": outcome.record()}
        print(json.dumps(record, ensure_ascii=False), flush=True)


def _announce(text: str, language: str, source: str) -> None:
    """A timer ended, a reminder or an alarm came (their thread) while the chat waits for a line."""
    print(f"[{source}: {text}]", file=sys.stderr, flush=True)


def _save(conv, directory: Path) -> None:
    """Save the session; a failure (disk full, no permission) is said and the chat goes on (the
    previous session files stay as they were: saves are atomic)."""
    from app.brain.brain import save_session

    try:
        save_session(conv, directory)
    except OSError as exc:
        print(
            f"warning: could not save the session in {directory} ({exc}); the chat goes on", file=sys.stderr
        )
