"""User settings, persisted as JSON in the platform's config folder.

`AppSettings.load()` never fails: a missing or corrupt file gives the defaults (a corrupt file is
kept aside as `settings.json.bad`). `save()` is atomic. $TALK_LLAMA_CONFIG overrides the folder.
Qt-free; the GUI's settings dialog edits an `AppSettings` and asks for a save.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import logging
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from app.brain.persona import default_prompt
from app.brain.sampling import SamplingConfig
from app.system.paths import config_dir, data_dir, private_dir, write_private
from app.system.typed_json import typed_fields

if TYPE_CHECKING:  # imported where used: the loop's modules load the models' libraries
    from app.loop.assistant_config import AssistantConfig

log = logging.getLogger(__name__)


@dataclass
class AppSettings:
    llm_model: str = ""  # empty: the catalog default
    llm_url: str = ""  # an OpenAI-compatible server instead of the local model ("" = local)
    llm_remote_model: str = ""  # its model ("" = the server's first)
    whisper_model: str = ""
    input_device: str = ""  # empty: system default
    output_device: str = ""
    hands_free: bool = False
    vad_thold: float = 0.6
    freq_thold: float = 100.0
    end_silence_ms: int = 400  # the fixed end-of-turn rule's silence
    turn_end: str = "words"  # "words": the model says how long to wait (loop/turn_end.py); "fixed"
    continue_ms: int = 1500  # speech this soon after a turn ended continues it (0: never)
    turn_model: str = ""  # the audio turn model: "" the catalog's, a file, or "none" (the words alone)
    speech_model: str = ""  # hands-free speech detector beside WebRTC's: "" the catalog's, a file, or "none"
    server_words: str = ""  # with a server: the local model reading the words for the turn end ("" default)
    language: str = "en"
    person: str = "User"
    bot: str = "Aria"
    prompt: str = field(default_factory=default_prompt)
    voice: str = ""
    rate: int = 175
    n_ctx: int = 2048
    threads: int = 0  # 0: automatic (the cores other programs leave free, checked each turn)
    ptt_key: str = "Space"
    global_ptt: bool = False
    window_geometry: str = ""
    theme: str = "system"  # "system" (follow the desktop's light/dark), "light" or "dark"
    close_to_tray: bool = False  # closing the window hides it to the tray (when there is one)
    first_run_done: bool = False  # the welcome note was shown
    conversation: str = ""  # the open conversation's id (conversation_store); it opens at start
    sidebar: bool = True  # the conversations sidebar is shown (when the window is wide enough)
    shared_memory: bool = False  # what the user tells one conversation, the others know too
    thinking: str = "auto"  # a reasoning model's thinking: auto (off: replies are spoken), on, off
    # Sampler settings the user changed (SamplingConfig field -> value); the rest follow the
    # defaults, so improved defaults reach everyone who did not tune them.
    sampling: dict[str, float] = field(default_factory=dict)

    @classmethod
    def path(cls) -> Path:
        return config_dir() / "settings.json"

    @classmethod
    def load(cls) -> AppSettings:
        """The saved settings; entries of the wrong type fall back to their defaults (the file
        is copied aside first, as it is when it cannot be read at all)."""
        path = cls.path()
        if not path.exists():
            return cls()
        bad = path.with_suffix(".json.bad")
        try:
            kept, wrong = typed_fields(cls, json.loads(path.read_text(encoding="utf-8")))
        except (OSError, ValueError, RecursionError) as exc:
            log.warning(
                "settings file %s unreadable (%s); using defaults, the file kept as %s", path, exc, bad
            )
            with contextlib.suppress(OSError):
                path.replace(bad)
            return cls()
        if wrong:
            log.warning(
                "settings %s: ignoring %s (wrong type); a copy kept as %s", path, ", ".join(wrong), bad
            )
            with contextlib.suppress(OSError):
                shutil.copyfile(path, bad)
        return cls(**kept)

    def save(self) -> None:
        path = self.path()
        private_dir(path.parent)
        write_private(path, json.dumps(dataclasses.asdict(self), indent=1, ensure_ascii=False))

    def model_reload_needed(self, other: AppSettings) -> bool:
        keys = (
            "llm_model",
            "llm_url",
            "llm_remote_model",
            "whisper_model",
            "n_ctx",
            "thinking",
            "threads",
            "language",
            "input_device",
            "output_device",
            "vad_thold",
            "freq_thold",
            "end_silence_ms",
            "turn_end",
            "turn_model",
            "speech_model",
            "server_words",
            "continue_ms",
            "sampling",
        )
        return any(getattr(self, k) != getattr(other, k) for k in keys)

    def persona_change_needed(self, other: AppSettings) -> bool:
        """The names or the prompt changed: the brain goes on under the new persona."""
        return (self.person, self.bot, self.prompt) != (other.person, other.bot, other.prompt)

    def voice_change_needed(self, other: AppSettings) -> bool:
        """The voice or its rate changed: the speaker is replaced, the models stay."""
        return (self.voice, self.rate) != (other.voice, other.rate)


def sampling_config(overrides: dict[str, float]) -> SamplingConfig:
    """SamplingConfig defaults with the user's overrides; unknown or mistyped entries are
    ignored with a warning (a hand-edited settings file must not stop the app)."""
    defaults = SamplingConfig()
    kept = {}
    for key, value in overrides.items():
        default = getattr(defaults, key, None)
        if default is None or not isinstance(value, int | float) or isinstance(value, bool):
            log.warning("settings: ignoring sampling entry %s=%r", key, value)
            continue
        kept[key] = type(default)(value)
    return dataclasses.replace(defaults, **kept)


LEGACY_SESSION = "session"  # the one session folder before conversations had a folder each
SHARED_MEMORY = "memory.json"  # the facts kept across conversations (brain/shared_memory.py)


def conversations_dir() -> Path:
    """Where the window keeps its conversations (conversation_store)."""
    return data_dir() / "conversations"


def assistant_config(s: AppSettings, session_dir: Path | None = None) -> AssistantConfig:
    """The AssistantConfig these settings describe (catalog defaults for empty model paths;
    `session_dir`: the conversation to continue)."""
    from app.brain.persona import Persona
    from app.brain.records import LlmConfig, RemoteConfig
    from app.brain.thinking import thinking_for
    from app.catalog.catalog import default_model_path, optional_model_path
    from app.catalog.languages import base_language, setting_language, whisper_model_for
    from app.ears.transcriber import SttConfig, names_prompt
    from app.ears.vad import VadConfig
    from app.loop.assistant_config import AssistantConfig
    from app.loop.turn_end import RULES, TurnEndConfig
    from app.voice.speaker import SpeakerConfig

    def device(v: str) -> int | str | None:
        return int(v) if v.isdigit() else (v or None)

    language = setting_language(s.language)
    persona = Persona(s.person, s.bot, s.prompt, language=language)
    sampling = sampling_config(s.sampling)
    go_on = max(0, s.continue_ms) if isinstance(s.continue_ms, int) else TurnEndConfig.continue_ms
    remote = (
        RemoteConfig(
            s.llm_url,
            s.llm_remote_model,
            temperature=sampling.temperature,
            top_p=sampling.top_p,
            words_model=optional_model_path(s.server_words, "llm"),
        )
        if s.llm_url
        else None
    )
    return AssistantConfig(
        llm=LlmConfig(
            Path(s.llm_model) if s.llm_model else default_model_path("llm"),
            n_ctx=s.n_ctx,
            n_threads=s.threads or None,
            sampling=sampling,
            thinking=thinking_for(s.thinking, voice=True),
        ),
        remote=remote,
        stt=SttConfig(
            whisper_model_for(language, s.whisper_model),
            n_threads=s.threads or None,
            language=language,
            initial_prompt=names_prompt(s.bot),
        ),
        persona=persona,
        vad=VadConfig(
            vad_thold=s.vad_thold,
            freq_thold=s.freq_thold,
            end_silence_ms=s.end_silence_ms,
            speech_model=optional_model_path(s.speech_model, "vad"),
        ),
        speaker=SpeakerConfig(
            voice=s.voice or None,
            rate=s.rate,
            device=device(s.output_device),
            language=base_language(language),
        ),
        input_device=device(s.input_device),
        hands_free=s.hands_free,
        turn_end=TurnEndConfig(rule=s.turn_end if s.turn_end in RULES else "words", continue_ms=go_on),
        turn_model=optional_model_path(s.turn_model, "turn"),
        session_dir=session_dir if session_dir is not None else data_dir() / LEGACY_SESSION,
        shared_memory=data_dir() / SHARED_MEMORY if s.shared_memory else None,
    )
