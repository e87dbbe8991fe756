"""What the assistant tells its front ends: its state, and events from its worker threads."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Any


class State(enum.Enum):
    LOADING = "loading"
    IDLE = "idle"
    LISTENING = "listening"
    TRANSCRIBING = "transcribing"
    THINKING = "thinking"
    SPEAKING = "speaking"


@dataclass
class Event:
    """kind: state | level | output_level | loading | transcript | user | token | sentence | heard | turn |
    history | reset | switched | retracted | error | notice | unanswered."""

    kind: str
    data: dict[str, Any] = field(default_factory=dict)


def unanswered(text: str, why: str) -> Event:
    """The user's words found no answer (`why`): front ends hand them back, never drop them."""
    return Event("unanswered", {"text": text, "message": why})
