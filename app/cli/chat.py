"""`talk-llama chat`: the terminal assistant, with talk-llama's flags.

Voice (hands-free by default, `--ptt` for Enter-toggled push-to-talk) or typed (`--text`: one
user line per stdin line). Prints the dialogue as `Person: ...` / `Bot: ...`, or with `--jsonl`
one JSON object per turn. Ctrl+C ends cleanly: the session is saved and devices are closed.
"""

from __future__ import annotations

import argparse
import signal

from app.brain.sampling import SamplingConfig
from app.cli.chat_shared import language_arg
from app.loop.turn_end import TurnEndConfig


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "chat",
        help="terminal assistant (voice, or --text)",
        allow_abbrev=False,
        description="Talk to the assistant in the terminal. Flags follow whisper.cpp's talk-llama.",
    )
    a = p.add_argument
    a("--text", action="store_true", help="typed input: one user message per stdin line")
    a("--ptt", action="store_true", help="push-to-talk: Enter starts and stops listening")
    a("--jsonl", action="store_true", help="print one JSON object per turn instead of the dialogue")
    a(
        "-t",
        "--threads",
        type=int,
        default=None,
        help="threads for whisper and llama (default: the cores left free by other programs, each turn)",
    )
    a(
        "--turn-end",
        choices=("words", "fixed"),
        default="words",
        help="hands-free end of turn: from the words and the sound (the model's end-of-turn "
        "probability and the turn model's set the silence) or after a fixed 400 ms (--turn-end fixed)",
    )
    a(
        "--continue-ms",
        type=int,
        default=TurnEndConfig.continue_ms,
        help="hands-free: speech this soon after a turn ended continues it (0: never)",
    )
    a(
        "--pitch-hold",
        type=float,
        default=TurnEndConfig.hold_at,
        help="hands-free with a server as the brain: a voice this many times above where your "
        "statements end holds a pause, unless it sounds like a finished question (0: off)",
    )
    a(
        "--turn-model",
        default="",
        help="hands-free: the audio turn model that hears whether you sound finished (a file; "
        "default: the catalog's smart-turn; 'none': the words alone)",
    )
    a(
        "--server-words",
        default="",
        help="hands-free with --llm-url: a local model that reads your words for the end of your "
        "turn, as the local brain does (a file; default: the catalog's small llm; 'none': the sound alone)",
    )
    a(
        "--speech-model",
        default="",
        help="hands-free: a speech detector trained on real voices, beside WebRTC's (a file; "
        "default: the catalog's silero-vad; 'none': WebRTC's and the energy test alone)",
    )
    a("-vms", "--voice-ms", type=int, default=10000, help="longest utterance in ms (hands-free)")
    a("-c", "--capture", default=None, help="input device index or name")
    a("-o", "--output-device", default=None, help="output device index or name")
    a(
        "--voice",
        default=None,
        help="the assistant's voice: a natural voice (joe, a .onnx file), a system voice or a language",
    )
    a("--rate", type=int, default=None, help="speaking rate in words per minute (175: the voice's own)")
    a("-mt", "--max-tokens", type=int, default=256, help="maximum tokens per reply")
    a("-ac", "--audio-ctx", type=int, default=0, help="whisper encoder context (0 = sized to the clip)")
    a("-ngl", "--n-gpu-layers", type=int, default=0, help="layers to offload to a GPU")
    a("-vth", "--vad-thold", type=float, default=0.6, help="voice activity threshold (talk-llama)")
    a("-fth", "--freq-thold", type=float, default=100.0, help="high-pass cut-off in Hz")
    a("-tr", "--translate", action="store_true", help="translate speech to English")
    a("-ps", "--print-special", action="store_true", help="print special tokens of the context")
    a("-pe", "--print-energy", action="store_true", help="print the input level")
    a("-vp", "--verbose-prompt", action="store_true", help="print the system prompt at start")
    a("-ng", "--no-gpu", action="store_true", help="never use a GPU")
    a("-fa", "--flash-attn", action="store_true", help="flash attention")
    a("-p", "--person", default="User", help="the user's name")
    a("-bn", "--bot-name", default="Aria", help="the assistant's name")
    a("-w", "--wake-command", default="", help="utterances must start with this phrase")
    a("-ho", "--heard-ok", default="", help="phrase spoken before generating a reply")
    a(
        "-l",
        "--language",
        default="en",
        type=language_arg,
        help="spoken language: a code (en, fr, ja, ...) or auto; other than en uses a multilingual whisper",
    )
    a("-mw", "--model-whisper", default=None, help="ggml Whisper model file")
    a("-ml", "--model-llama", default=None, help="GGUF model file")
    a("-s", "--speak", default=None, help="external command to speak replies (instead of pyttsx3)")
    a("-sf", "--speak-file", default=None, help="file the external speak command reads text from")
    a("--prompt-file", default=None, help="system prompt file ({person} {bot} {time} {year})")
    a("--session", default=None, help="session folder: resume from it and save after each turn")
    a("-f", "--file", default=None, help="also append the dialogue to this text file")
    a("--ctx-size", type=int, default=2048, help="llama context size in tokens")
    a(
        "--memory",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="keep the facts you tell in a note the model still sees after old turns are shifted out",
    )
    a(
        "--actions",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="timers, the time, sums, units and the shopping list done by the app, not the model",
    )
    a(
        "--thinking",
        choices=("auto", "on", "off"),
        default="auto",
        help="a reasoning model's thinking (never spoken): auto is off when replies are spoken",
    )
    add_remote_flags(p)
    add_sampling_flags(p)
    p.set_defaults(run=run)


def add_remote_flags(p: argparse.ArgumentParser) -> None:
    """An OpenAI-compatible server as the language model (docs/servers.md)."""
    group = p.add_argument_group("remote language model (speech stays local)")
    g = group.add_argument
    g("--llm-url", default=None, help="OpenAI-compatible API base, e.g. http://gpu-box:8080/v1")
    g("--llm-model", default="", help="model name on that server (default: its first model)")
    g("--llm-ctx", type=int, default=0, help="the server's context in tokens (default: ask the server)")
    g(
        "--llm-key-env",
        default="TALK_LLAMA_API_KEY",
        help="environment variable holding the API key (default: %(default)s; never stored)",
    )


def add_sampling_flags(p: argparse.ArgumentParser) -> None:
    """llama.cpp's sampling flags (same names as its CLI), defaults from SamplingConfig."""
    d = SamplingConfig()
    group = p.add_argument_group("sampling (docs/conversation.md: long conversations)")

    def g(*flags: str, help: str, **kw) -> None:
        group.add_argument(*flags, help=f"{help} (default: %(default)s)", **kw)

    g("--seed", type=int, default=d.seed, help="sampling seed")
    g("--temp", type=float, default=d.temperature, help="temperature (0 = greedy)")
    g("--top-k", type=int, default=d.top_k, help="keep the k most likely tokens")
    g("--top-p", type=float, default=d.top_p, help="nucleus sampling threshold")
    g("--repeat-penalty", type=float, default=d.repeat_penalty, help="1.0 = off")
    g("--repeat-last-n", type=int, default=d.repeat_last_n, help="tokens the repeat penalty looks back")
    g("--presence-penalty", type=float, default=d.presence_penalty, help="0 = off")
    g("--frequency-penalty", type=float, default=d.frequency_penalty, help="0 = off")
    g("--dry-multiplier", type=float, default=d.dry_multiplier, help="DRY repetition penalty (0 = off)")
    g("--dry-base", type=float, default=d.dry_base, help="DRY penalty growth per repeated token")
    g("--dry-allowed-length", type=int, default=d.dry_allowed_length, help="repeats this long are free")
    g(
        "--sampler-history",
        type=int,
        default=d.history_tokens,
        help="tokens of the assistant's earlier replies the penalties see (0 = the current reply only)",
    )


def interrupt_on_signals() -> None:
    """Ctrl+C and SIGTERM end the chat through KeyboardInterrupt (clean shutdown), even when the
    process was started with SIGINT ignored (as shells do for background jobs)."""

    def stop(signum: int, _frame) -> None:
        raise KeyboardInterrupt

    signal.signal(signal.SIGINT, stop)
    signal.signal(signal.SIGTERM, stop)


def run(args: argparse.Namespace) -> int:
    interrupt_on_signals()
    if args.text:
        from app.cli.chat_text import run_text

        return run_text(args)
    from app.cli.chat_voice import run_voice

    return run_voice(args)
