"""Which speaker speaks: the built-in voice (synthesizer + sounddevice) or the user's speak
command (talk-llama's `-s` script, external_speaker.py). Both take the same sentences and send
the same events; only the built-in one plays through PortAudio (the echo guard can hear it)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from app.voice.external_speaker import ExternalSpeaker
from app.voice.speaker import Speaker, SpeakerConfig, SpeakerEvent


def open_speaker(
    config: SpeakerConfig,
    speak_command: str | None,
    speak_file: Path,
    on_event: Callable[[SpeakerEvent], None],
) -> Speaker | ExternalSpeaker:
    """The speaker for these settings; check `.available` / `.problem` before relying on it."""
    if speak_command:
        return ExternalSpeaker(speak_command, speak_file, on_event=on_event)
    return Speaker(config, on_event=on_event)
