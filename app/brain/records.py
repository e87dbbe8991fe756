"""Plain values the Conversation takes and hands out: its configuration, the history's messages
and one turn's counters. No behaviour; safe to pass between threads once made."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from app.brain.model_aids import Aids
from app.brain.sampling import SamplingConfig
from app.system.typed_json import typed_fields


class BrainError(RuntimeError):
    """The language model could not answer; the message says why and what to do."""


@dataclass
class LlmConfig:
    """Model and sampling settings (defaults follow talk-llama)."""

    model_path: Path
    n_ctx: int = 2048
    n_threads: int | None = None  # None: the cores other programs leave free (app.system.cpu), per turn
    n_gpu_layers: int = 0
    sampling: SamplingConfig = field(default_factory=SamplingConfig)
    max_tokens: int = 256
    n_batch: int = 512
    flash_attn: bool = False
    discard_share: float = 0.5  # share of the non-kept space freed by one shift
    max_user_share: float = 0.75  # a user turn is trimmed (head dropped) beyond this share
    memory: bool = True  # the memory note keeps the user's facts after a shift (memory.py)
    # A reasoning model's thinking (thinking.py): None the template's default, False off where
    # the template can (Qwen3's enable_thinking), True on.
    thinking: bool | None = None
    aids: Aids | None = None  # small-model aids (model_aids.py); None: as measured for the model


@dataclass
class RemoteConfig:
    """An OpenAI-compatible server as the language model (see `remote.py`)."""

    url: str  # the API base, e.g. http://127.0.0.1:8080/v1
    model: str = ""  # "" = the server's first (or only) model
    api_key_env: str = "TALK_LLAMA_API_KEY"  # the key is read from this variable, never stored
    n_ctx: int = 0  # the server's context; 0 = ask the server, else 4096
    max_tokens: int = 256
    temperature: float = 0.3
    top_p: float = 0.8
    seed: int | None = 0
    connect_timeout_s: float = 5.0
    stall_timeout_s: float = 30.0  # no byte for this long: the server is not answering
    discard_share: float = 0.5  # share of the space freed when exchanges are left out
    memory: bool = True  # a memory note of the user's facts after a trim (memory.py)
    words_model: Path | None = None  # a local model reading the words for a turn's end (words_reader.py)


@dataclass
class LoadResult:
    """What resuming a saved session did."""

    resumed: bool  # True: the saved state was used as it was (no re-evaluation)
    replayed_turns: int = 0  # turns re-evaluated from history instead
    message: str = ""  # why the saved state was not used, in plain words ("" = resumed or none)
    seconds: float = 0.0


@dataclass
class Message:
    """One line of the history. `text` is what the model has in its context (for a reply cut
    by a barge-in: what was heard); `unspoken` the rest of that reply, for display only."""

    role: str  # "user" | "assistant"
    text: str
    time: float = field(default_factory=time.time)
    interrupted: bool = False
    unspoken: str = ""
    name: str = ""  # who said it, as named when it was said (a later rename keeps it)
    details: dict[str, Any] = field(default_factory=dict)  # the turn's report (latency, tokens), replies only
    # Replies answered again (Retry): every answer the turn got, oldest first, and which of them
    # `text` is (the one in the conversation). Empty: the only answer.
    versions: list[str] = field(default_factory=list)
    version: int = 0
    language: str = ""  # a user turn's language as whisper heard it ("": not known, e.g. typed)
    thinking: str = ""  # a reasoning model's thinking before this reply (never spoken; thinking.py)

    @classmethod
    def from_dict(cls, data: Any) -> Message:
        """From a saved session; fields this version does not know are ignored. Raises
        ValueError for anything but a user or assistant message with text."""
        kept, wrong = typed_fields(cls, data)
        if wrong or kept.get("role") not in ("user", "assistant") or "text" not in kept:
            raise ValueError(f"not a message of a conversation: {', '.join(wrong) or 'role or text'}")
        return cls(**kept)


@dataclass
class Exchange:
    """One user turn and the reply as it stands in a remote conversation; `tokens`: its cost in
    a request (the server's count once known, else an estimate)."""

    user: str
    reply: str
    tokens: int


@dataclass
class TurnStats:
    """Counters of one turn; `prompt_tokens` is exactly what was evaluated for the user segment."""

    turn: int
    prompt_tokens: int = 0
    gen_tokens: int = 0
    t_prompt_ms: float = 0.0
    t_wait_ms: float = 0.0  # a tentative turn blocked waiting to be confirmed
    end_of_turn: float | None = None  # tentative turns: the model's P(the user's words are finished)
    primed_tokens: int = 0  # of prompt_tokens, evaluated ahead of the turn (see `prime`)
    t_first_token_ms: float = 0.0
    t_gen_ms: float = 0.0
    n_past: int = 0
    n_ctx: int = 0
    n_keep: int = 0
    shifts: int = 0
    discarded: int = 0
    shifts_in_reply: int = 0  # shifts made while generating (the reply outgrew the space)
    stop_reason: str = ""
    user_trimmed: int = 0
    # remote: prompt tokens the server served from its cache (None: the server does not say)
    cached_tokens: int | None = None
    notice: str = ""  # something about this turn the user should be told, in one sentence
    thinking: str = ""  # a reasoning model's thought before the reply (never spoken; thinking.py)
