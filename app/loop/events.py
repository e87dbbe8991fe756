"""What the assistant tells its front ends: its state, and events from its worker threads.

Every event is a frozen dataclass; `Event` is their union, and a front end matches on the
class (`match ev: case Transcript(text=t): ...`). `kind` is each class's stable short name, for
logs, records and tests that wait for "the next transcript". Events are made on the worker
threads (stt, llm, speaker, PortAudio's callback) and handed to the front end's callback there;
a front end marshals them to its own thread. Events hold nothing a worker thread changes later:
messages and lists are copies, the `stats` mappings fresh dicts.
"""

from __future__ import annotations

import dataclasses
import enum
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

from app.actions.reminders import Reminder
from app.actions.timers import TimerView
from app.brain.records import Message


class State(enum.Enum):
    LOADING = "loading"
    IDLE = "idle"
    LISTENING = "listening"
    TRANSCRIBING = "transcribing"
    THINKING = "thinking"
    SPEAKING = "speaking"


Stats = Mapping[str, Any]  # the brain's context counters for the memory gauge (Brain.context_stats)


@dataclass(frozen=True)
class StateChanged:
    kind: ClassVar[str] = "state"
    state: State


@dataclass(frozen=True)
class Level:
    """The microphone's level (only while a front end asks for levels)."""

    kind: ClassVar[str] = "level"
    rms: float
    peak: float


@dataclass(frozen=True)
class OutputLevel:
    """The voice's level as it plays (only while a front end asks for levels)."""

    kind: ClassVar[str] = "output_level"
    rms: float


@dataclass(frozen=True)
class Loaded:
    """A part finished loading: "whisper" or "llm" (with the context's counters)."""

    kind: ClassVar[str] = "loading"
    part: str
    done: bool = True
    stats: Stats = field(default_factory=dict)


@dataclass(frozen=True)
class Transcript:
    """Whisper's reading of an utterance; `rejected` ones (noise, hallucination) say why."""

    kind: ClassVar[str] = "transcript"
    text: str
    rejected: bool = False
    reason: str = ""
    prob: float = 0.0
    language: str = ""

    def why_dropped(self) -> str:
        """A rejected transcript, for people: the words that were dropped and why (or that
        nothing was heard), so a real request dropped by mistake is seen, not lost silently."""
        words = self.text.strip()
        if not words or self.reason == "nothing heard":
            return f"Nothing heard ({self.reason})"
        return f"Not taken as a turn: “{words}” ({self.reason})"


@dataclass(frozen=True)
class UserTurn:
    """The user's turn is certain and is being answered."""

    kind: ClassVar[str] = "user"
    text: str
    language: str = ""


@dataclass(frozen=True)
class Token:
    """A piece of the reply being generated."""

    kind: ClassVar[str] = "token"
    text: str


@dataclass(frozen=True)
class SentenceProgress:
    """A sentence of the reply: `progress` is "queued" (handed to the voice), or the speaker's
    sentence_started | sentence_finished | sentence_cut (with `heard`) | queue_empty | error."""

    kind: ClassVar[str] = "sentence"
    progress: str
    index: int
    text: str = ""
    heard: str = ""


@dataclass(frozen=True)
class Heard:
    """After a barge-in: the reply is remembered as `text` (what was heard); `unspoken` was not."""

    kind: ClassVar[str] = "heard"
    text: str
    unspoken: str


@dataclass(frozen=True)
class TurnReported:
    """A turn is over (its speech started, was cut, or there is no voice): latency stamps in ms
    after the end of speech (None: not reached), and the conversation's counters. `record()` is
    the flat form written to `--jsonl` and kept with the reply's message."""

    kind: ClassVar[str] = "turn"
    user: str
    reply: str
    typed: bool = False
    interrupted: bool = False
    t_speech_end: float = 0.0
    t_transcript_ms: float | None = None
    stt_ms: float = 0.0
    t_confirmed_ms: float | None = None
    t_first_token_ms: float | None = None
    t_first_sentence_ms: float | None = None
    t_first_audio_ms: float | None = None
    t_end_of_turn_ms: float | None = None
    end_of_turn: float | None = None
    end_silence_ms: int | None = None
    pitch_end: float | None = None
    audio_end: float | None = None
    turn: int | None = None
    prompt_tokens: int | None = None
    gen_tokens: int | None = None
    t_prompt_ms: float | None = None
    t_gen_ms: float | None = None
    thinking: str = ""
    unspoken: str = ""
    settled: bool = False  # cut and already remembered as heard: no `Heard` follows
    versions: tuple[str, ...] = ()
    version: int = 0
    action: Mapping[str, Any] | None = None  # the action that answered it (actions/skills.Outcome.record)
    stats: Stats = field(default_factory=dict)

    def record(self) -> dict[str, Any]:
        """The flat record: every field but `stats`, whose counters join it at the top level;
        `thinking` and `versions` only when there are some."""
        out = {
            k: getattr(self, k)
            for k in self.__dataclass_fields__
            if k not in ("stats", "versions", "version")
        }
        if not self.thinking:
            del out["thinking"]
        if self.action is None:
            del out["action"]
        else:
            out["action"] = dict(self.action)
        if self.turn is None:  # no stats: the brain never answered
            for k in ("turn", "prompt_tokens", "gen_tokens", "t_prompt_ms", "t_gen_ms"):
                del out[k]
        out.update(self.stats)
        if self.versions:
            out.update(versions=list(self.versions), version=self.version)
        return out


@dataclass(frozen=True)
class History:
    """The conversation resumed at start (messages as saved)."""

    kind: ClassVar[str] = "history"
    messages: tuple[Message, ...]


@dataclass(frozen=True)
class Reset:
    """The conversation was forgotten; a new one starts."""

    kind: ClassVar[str] = "reset"
    stats: Stats


@dataclass(frozen=True)
class Switched:
    """Another saved conversation is now the current one (`message`: why it was re-read, if)."""

    kind: ClassVar[str] = "switched"
    messages: tuple[Message, ...]
    ms: float = 0.0
    resumed: bool = False
    replayed_turns: int = 0
    message: str = ""
    stats: Stats = field(default_factory=dict)


@dataclass(frozen=True)
class Retracted:
    """The newest exchange left the conversation: a Retry, or (`continued`) the user went on."""

    kind: ClassVar[str] = "retracted"
    text: str
    continued: bool = False
    stats: Stats = field(default_factory=dict)


@dataclass(frozen=True)
class VersionChosen:
    """After a Retry: answer `version` of `versions` is the newest reply."""

    kind: ClassVar[str] = "version"
    text: str
    version: int
    versions: tuple[str, ...]


@dataclass(frozen=True)
class MemoryFacts:
    """What the memory note holds: (key, the fact as told to the user)."""

    kind: ClassVar[str] = "memory"
    facts: tuple[tuple[str, str], ...]


@dataclass(frozen=True)
class DeviceChanged:
    """A microphone ("input") or speaker ("output") was "lost" or came back."""

    kind: ClassVar[str] = "device"
    direction: str
    change: str
    message: str


@dataclass(frozen=True)
class Error:
    """Something failed; `source` names the part (microphone, tts, llm, whisper, brain, session)."""

    kind: ClassVar[str] = "error"
    message: str
    source: str = ""


@dataclass(frozen=True)
class Notice:
    """Something worth a line in the status bar."""

    kind: ClassVar[str] = "notice"
    message: str


@dataclass(frozen=True)
class Unanswered:
    """The user's words found no answer (`message` says why): front ends hand them back."""

    kind: ClassVar[str] = "unanswered"
    text: str
    message: str


@dataclass(frozen=True)
class ActionTaken:
    """The assistant did what the words asked (or looked it up) instead of the model answering:
    `intent` (HassStartTimer, TalkCalculate, ...), its slots as said, the answer it speaks, and
    whether it `failed` (the answer says why: no such timer)."""

    kind: ClassVar[str] = "action"
    intent: str
    slots: Mapping[str, str]
    reply: str
    failed: bool = False


@dataclass(frozen=True)
class Announcement:
    """The assistant speaks up on its own: a timer ended, a reminder or an alarm came (`source`:
    "timer", "reminder", "alarm"); `text` is what it says ("The pasta timer is done.")."""

    kind: ClassVar[str] = "announcement"
    text: str
    source: str = "timer"


@dataclass(frozen=True)
class TimersChanged:
    """The running and paused timers changed (set, paused, cancelled, ended): all of them now,
    each able to count down on its own (`TimerView.left(time.monotonic())`)."""

    kind: ClassVar[str] = "timers"
    timers: tuple[TimerView, ...]


@dataclass(frozen=True)
class RemindersChanged:
    """The reminders and alarms to come changed (set, cancelled, said): all of them now."""

    kind: ClassVar[str] = "reminders"
    reminders: tuple[Reminder, ...]


Event = (
    StateChanged
    | Level
    | OutputLevel
    | Loaded
    | Transcript
    | UserTurn
    | Token
    | SentenceProgress
    | Heard
    | TurnReported
    | History
    | Reset
    | Switched
    | Retracted
    | VersionChosen
    | MemoryFacts
    | DeviceChanged
    | Error
    | Notice
    | Unanswered
    | ActionTaken
    | Announcement
    | TimersChanged
    | RemindersChanged
)


def messages_of(history: list[Message]) -> tuple[Message, ...]:
    """A copy of `history` for an event (the llm thread goes on changing its own)."""
    return tuple(dataclasses.replace(m) for m in history)
