"""One user turn travelling through the assistant, and its latency report.

Stamps are `time.perf_counter()` values set by the thread that reaches each point (stt, llm,
speaker); the report gives them in ms after the end of speech, plus the conversation counters.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any

from app.core.llm import TurnStats


@dataclass
class Turn:
    text: str
    t_speech_end: float  # perf_counter when the user stopped talking (or pressed Enter)
    t_transcript: float | None = None
    stt_ms: float = 0.0  # time whisper took (the rest of t_transcript is VAD and queueing)
    cancel: threading.Event = field(default_factory=threading.Event)
    stamps: dict[str, float] = field(default_factory=dict)  # first_token, first_sentence, first_audio

    def _after_speech_ms(self, t: float | None) -> float | None:
        return round((t - self.t_speech_end) * 1000, 1) if t is not None else None

    def report(self, reply: str, stats: TurnStats | None, context: dict[str, int]) -> dict[str, Any]:
        """The `turn` event's data (also the `--jsonl` record of voice chat)."""
        data: dict[str, Any] = {
            "user": self.text,
            "reply": reply,
            "interrupted": self.cancel.is_set(),
            "t_speech_end": self.t_speech_end,
            "t_transcript_ms": self._after_speech_ms(self.t_transcript),
            "stt_ms": round(self.stt_ms, 1),
            "t_first_token_ms": self._after_speech_ms(self.stamps.get("first_token")),
            "t_first_sentence_ms": self._after_speech_ms(self.stamps.get("first_sentence")),
            "t_first_audio_ms": self._after_speech_ms(self.stamps.get("first_audio")),
        }
        if stats is not None:
            data.update(
                turn=stats.turn,
                prompt_tokens=stats.prompt_tokens,
                gen_tokens=stats.gen_tokens,
                t_prompt_ms=round(stats.t_prompt_ms, 1),
                t_gen_ms=round(stats.t_gen_ms, 1),
                **context,
            )
        return data
