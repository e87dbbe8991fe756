"""One user turn travelling through the assistant, and its latency report.

Stamps are `time.perf_counter()` values set by the thread that reaches each point (stt, llm,
speaker); the report gives them in ms after the end of speech, plus the conversation counters.

A tentative turn (hands-free: started on the transcript of a pause, before the end of speech is
certain) carries a pending `Decision`: the llm thread evaluates its prompt, then waits for it;
the stt thread confirms it at the end of the utterance, or it is withdrawn (the user went on
talking, barge-in, shutdown) and the conversation takes the turn back.
"""

from __future__ import annotations

import dataclasses
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from app.brain.records import Message, TurnStats
from app.loop.events import TurnReported
from app.loop.heard import HeardReply


class Decision:
    """A yes/no made once (the first call wins) and awaited by another thread."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._made = threading.Event()
        self.value: bool | None = None

    def decide(self, value: bool) -> bool:
        """Make the decision unless it is made already; True if this call made it."""
        with self._lock:
            if self.value is not None:
                return False
            self.value = value
            self._made.set()
            return True

    def wait(self) -> bool:
        """Block until decided; the decision."""
        self._made.wait()
        return bool(self.value)


@dataclass
class Turn:
    text: str
    t_speech_end: float  # perf_counter when the user stopped talking (or pressed Enter)
    t_transcript: float | None = None
    stt_ms: float = 0.0  # time whisper took (the rest of t_transcript is VAD and queueing)
    cancel: threading.Event = field(default_factory=threading.Event)
    stamps: dict[str, float] = field(default_factory=dict)  # confirmed, first_token, ..., first_audio
    pending: Decision | None = None  # set on a tentative turn; see the module docstring
    typed: bool = False  # typed (the report counts from Enter), not spoken
    language: str = ""  # the whisper code it was heard in ("": typed or not known)
    reply: str = ""  # the reply as generated so far (llm thread; its pieces joined)
    heard: HeardReply = field(default_factory=HeardReply)  # what of it the listener heard
    settled: bool = False  # its memory was set to what was heard (after a barge-in)
    voice_off: bool = False  # the speaker went away mid-reply: the rest is shown, not spoken
    earlier: list[str] = field(default_factory=list)  # a Retry: the answers the turn had before
    end_sample: int = -1  # tentative: the segmenter position where the words before the pause end
    end_of_turn: float | None = None  # tentative: the model's P(the words are a finished turn)
    end_silence_ms: int | None = None  # tentative: the silence that then ends the turn
    pitch_end: float | None = None  # tentative: the voice's last pitch over the speaker's floor
    audio_end: float | None = None  # tentative: the audio turn model's P(the turn is finished)
    audio_pending: bool = False  # tentative: the turn model is scoring it (the silence waits for it)
    sound_asked: bool = False  # tentative: the turn model was asked to score it (once)
    action: dict[str, Any] | None = None  # an action answered it (actions/skills.Outcome.record)

    def confirm(self) -> bool:
        """The end of speech came with no more words: go on. False if already withdrawn."""
        if self.pending is not None:
            self.pending.decide(True)
        ok = self.pending is None or self.pending.value is True
        if ok:
            self.stamps.setdefault("confirmed", time.perf_counter())
        return ok

    def withdraw(self) -> bool:
        """Take a tentative turn back (no effect once decided); True if this call withdrew it."""
        return self.pending is not None and self.pending.decide(False)

    @property
    def withdrawn(self) -> bool:
        return self.pending is not None and self.pending.value is False

    def wait_first_audio(self, busy: Callable[[], bool], limit_s: float = 30.0) -> None:
        """Block until the reply's first audio played, the voice went quiet, or the turn was cut."""
        deadline = time.monotonic() + limit_s
        while "first_audio" not in self.stamps and busy() and not self.cancel.is_set():
            if time.monotonic() > deadline:
                return
            time.sleep(0.01)

    def final_report(
        self, reply: str, message: Message | None, stats: TurnStats | None, context: dict[str, int]
    ) -> TurnReported:
        """The `turn` event as the turn ended; its record becomes the reply message's details
        (saved with the session), and a Retry's versions join the event."""
        report = dataclasses.replace(
            self.report(reply, stats, context),
            action=self.action,
            unspoken=message.unspoken if message is not None and self.settled else "",
            settled=self.settled,  # cut and already remembered as heard: no `Heard` follows
        )
        if message is None:
            return report
        message.details = {k: v for k, v in report.record().items() if k not in ("user", "reply")}
        if message.versions:
            report = dataclasses.replace(report, versions=tuple(message.versions), version=message.version)
        return report

    def _after_speech_ms(self, t: float | None) -> float | None:
        return round((t - self.t_speech_end) * 1000, 1) if t is not None else None

    def report(self, reply: str, stats: TurnStats | None, context: dict[str, int]) -> TurnReported:
        """The `turn` event (its `record()` is also the `--jsonl` record of voice chat)."""
        after = self._after_speech_ms
        report = TurnReported(
            user=self.text,
            reply=reply,
            typed=self.typed,
            interrupted=self.cancel.is_set(),
            t_speech_end=self.t_speech_end,
            t_transcript_ms=after(self.t_transcript),
            stt_ms=round(self.stt_ms, 1),
            t_confirmed_ms=after(self.stamps.get("confirmed")),
            t_first_token_ms=after(self.stamps.get("first_token")),
            t_first_sentence_ms=after(self.stamps.get("first_sentence")),
            t_first_audio_ms=after(self.stamps.get("first_audio")),
            t_end_of_turn_ms=after(self.stamps.get("end_of_turn")),
            end_of_turn=None if self.end_of_turn is None else round(self.end_of_turn, 5),
            end_silence_ms=self.end_silence_ms,
            pitch_end=None if self.pitch_end is None else round(self.pitch_end, 3),
            audio_end=None if self.audio_end is None else round(self.audio_end, 4),
            stats=dict(context),
        )
        if stats is None:  # no model turn (an action answered, or the brain failed)
            return report
        return dataclasses.replace(
            report,
            turn=stats.turn,
            prompt_tokens=stats.prompt_tokens,
            gen_tokens=stats.gen_tokens,
            t_prompt_ms=round(stats.t_prompt_ms, 1),
            t_gen_ms=round(stats.t_gen_ms, 1),
            thinking=stats.thinking,
        )
