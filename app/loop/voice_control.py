"""The assistant's voice device: the Speaker (or a `-s` speak command, or a file) opened at
start, replaced in place when the voice setting changes, stopped on a barge-in; the echo guard
is told what it plays and when it stops.

Threads: `open` runs on the assistant's lifecycle thread, `replace` on the llm thread between
turns (the caller hands the new speaker to the Responder, then closes the old one); `silence`
from any thread; `speaker` is read from any thread (None before `open`).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from app.ears.echo import EchoGuard
from app.voice.external_speaker import ExternalSpeaker
from app.voice.output import open_speaker
from app.voice.sentence_queue import Voice
from app.voice.speaker import Speaker, SpeakerConfig, SpeakerEvent


class VoiceControl:
    def __init__(
        self,
        echo: EchoGuard,
        on_event: Callable[[SpeakerEvent], None],
        on_level: Callable[[float], None],
        report: Callable[[str, str], None],
    ) -> None:
        """`on_event`/`on_level`: the Speaker's callbacks (its threads); `report(message,
        source)`: how a voice that cannot speak, or fell back to another, is told."""
        self.echo = echo
        self._on_event, self._on_level, self._report = on_event, on_level, report
        self.speaker: Speaker | ExternalSpeaker | None = None

    def open(
        self, config: SpeakerConfig, command: str | None, file: Path
    ) -> Speaker | ExternalSpeaker | None:
        """Open the configured voice (it replaces `speaker`); the previous one, if any, is
        returned for the caller to close once nothing uses it."""
        old = self.speaker
        self.speaker = open_speaker(config, command, file, self._on_event)
        if isinstance(self.speaker, Speaker):
            self.echo.hear_speaker(self.speaker)
            self.speaker.on_level = self._on_level
        if notice := getattr(self.speaker, "notice", ""):  # a natural voice fell back
            self._report(notice, "tts")
        if not self.speaker.available:
            problem = self.speaker.problem
            self._report(f"No voice output: {problem}. Replies will be shown as text only.", "tts")
        return old

    @property
    def opened(self) -> Voice:
        """The voice (after `open`)."""
        if self.speaker is None:
            raise RuntimeError("no voice is open yet")
        return self.speaker

    @property
    def busy(self) -> bool:
        return self.speaker is not None and self.speaker.busy

    def silence(self) -> bool:
        """Stop the voice if it is speaking (the echo guard is told); True if it was."""
        speaker = self.speaker
        speaking = speaker is not None and speaker.busy
        if speaker is not None and speaking:
            speaker.stop()
            self.echo.playback_stopped()
        return speaking

    def close(self) -> None:
        if self.speaker is not None:
            self.speaker.close()
