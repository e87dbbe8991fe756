"""What text and voice chat share: configuration from the flags and the printed dialogue."""

from __future__ import annotations

import argparse
from pathlib import Path

from app.catalog.languages import normalize


def llm_config(args: argparse.Namespace, voice: bool = True):
    """The local model's configuration from the flags; `voice`: replies are spoken (thinking,
    on `auto`, is then off: see `thinking_for`)."""
    from app.brain.records import LlmConfig
    from app.brain.thinking import thinking_for
    from app.catalog.catalog import default_model_path

    return LlmConfig(
        model_path=Path(args.model_llama) if args.model_llama else default_model_path("llm"),
        n_ctx=args.ctx_size,
        n_threads=args.threads,
        n_gpu_layers=0 if args.no_gpu else args.n_gpu_layers,
        max_tokens=args.max_tokens,
        flash_attn=args.flash_attn,
        sampling=sampling_config(args),
        memory=args.memory,
        thinking=thinking_for(getattr(args, "thinking", "auto"), voice),
    )


def remote_config(args: argparse.Namespace, voice: bool = True):
    """The remote brain asked for with --llm-url, or None (the local model). Not `voice`
    (typed turns): no local model reads the words for the end of a turn."""
    from app.brain.records import RemoteConfig
    from app.catalog.catalog import optional_model_path

    if not args.llm_url:
        return None
    return RemoteConfig(
        args.llm_url,
        model=args.llm_model,
        api_key_env=args.llm_key_env,
        n_ctx=args.llm_ctx,
        max_tokens=args.max_tokens,
        temperature=args.temp,
        top_p=args.top_p,
        seed=args.seed,
        memory=args.memory,
        words_model=optional_model_path(args.server_words, "llm") if voice else None,
    )


def sampling_config(args: argparse.Namespace):
    from app.brain.sampling import SamplingConfig

    return SamplingConfig(
        seed=args.seed,
        temperature=args.temp,
        top_k=args.top_k,
        top_p=args.top_p,
        repeat_penalty=args.repeat_penalty,
        repeat_last_n=args.repeat_last_n,
        presence_penalty=args.presence_penalty,
        frequency_penalty=args.frequency_penalty,
        dry_multiplier=args.dry_multiplier,
        dry_base=args.dry_base,
        dry_allowed_length=args.dry_allowed_length,
        history_tokens=args.sampler_history,
    )


def language_arg(value: str) -> str:
    """`-l`: a whisper language code or auto (argparse says what is wrong with anything else)."""
    try:
        return normalize(value)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from exc


def persona(args: argparse.Namespace):
    from app.brain.persona import Persona

    language = getattr(args, "language", "en")
    if args.prompt_file:
        prompt = Path(args.prompt_file).read_text(encoding="utf-8")
        return Persona(args.person, args.bot_name, prompt, language=language)
    return Persona(args.person, args.bot_name, language=language)


def turn_record(stats, user: str, reply: str) -> dict:
    return {
        "turn": stats.turn,
        "user": user,
        "reply": reply,
        "prompt_tokens": stats.prompt_tokens,
        "gen_tokens": stats.gen_tokens,
        "n_past": stats.n_past,
        "n_ctx": stats.n_ctx,
        "n_keep": stats.n_keep,
        "shifts": stats.shifts,
        "discarded": stats.discarded,
        "t_prompt_ms": round(stats.t_prompt_ms, 1),
        "t_first_token_ms": round(stats.t_first_token_ms, 1),
        "t_gen_ms": round(stats.t_gen_ms, 1),
        **({"cached_tokens": stats.cached_tokens} if stats.cached_tokens is not None else {}),
        **({"notice": stats.notice} if stats.notice else {}),
        **({"thinking": stats.thinking} if stats.thinking else {}),
    }


class Transcript:
    """Prints the dialogue (talk-llama style) to stdout and optionally a file."""

    def __init__(self, args: argparse.Namespace):
        self.args = args
        # Kept open for the whole chat (closed in close()): the dialogue is appended as it happens.
        self.file = open(args.file, "a", encoding="utf-8") if args.file else None  # noqa: SIM115
        self._first_piece = False

    def line(self, text: str, end: str = "\n") -> None:
        if not self.args.jsonl:
            print(text, end=end, flush=True)
        if self.file:
            self.file.write(text + end)
            self.file.flush()

    def begin_reply(self, bot: str) -> None:
        """Start the `Bot: ...` line; pieces follow with `reply_piece`."""
        self.line(f"{bot}:", end="")
        self._first_piece = True

    def reply_piece(self, piece: str) -> None:
        """Append streamed reply text; the first piece is set off from the name by one space."""
        if self._first_piece:
            piece = piece.lstrip()
            if not piece:
                return
            piece, self._first_piece = " " + piece, False
        self.line(piece, end="")

    def close(self) -> None:
        if self.file:
            self.file.close()
