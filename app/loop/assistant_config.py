"""What an Assistant is made of: its models, voice, microphone, listening mode and session
folder. A plain value, built by the front ends (settings.py for the window, cli/chat_voice.py for
the terminal) and read by the assistant's threads."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from app.brain.persona import Persona
from app.brain.records import LlmConfig, RemoteConfig
from app.ears.transcriber import SttConfig
from app.ears.vad import VadConfig
from app.loop.turn_end import TurnEndConfig
from app.voice.speaker import SpeakerConfig


@dataclass
class AssistantConfig:
    llm: LlmConfig
    stt: SttConfig
    remote: RemoteConfig | None = None  # an OpenAI-compatible server instead of the local model
    persona: Persona = field(default_factory=Persona)
    vad: VadConfig = field(default_factory=VadConfig)
    speaker: SpeakerConfig = field(default_factory=SpeakerConfig)
    input_device: int | str | None = None
    hands_free: bool = False
    wake_command: str = ""
    heard_ok: str = ""
    speak_command: str | None = None
    speak_file: Path = Path("/tmp/talk-llama-speak.txt")
    session_dir: Path | None = None
    shared_memory: Path | None = None  # facts kept across conversations (brain/shared_memory.py)
    use_microphone: bool = True
    turn_end: TurnEndConfig = field(default_factory=TurnEndConfig)  # hands-free: when a turn ends
    turn_model: Path | None = None  # the audio turn model (ears/turn_model.py); None: words alone
    actions: bool = True  # timers, the time, sums, lists answered before the model (app/actions)
    actions_dir: Path | None = None  # where lists and reminders are kept (None: the data folder)
    # The first spoken chunk may end at a clause break once it is this long ("Sure," "I'm
    # sorry,"): speech starts several tokens sooner; later chunks are whole sentences.
    first_chunk_chars: int = 5
