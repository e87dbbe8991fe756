"""Shared rig for assistant tests: an event recorder and an assistant on the real models with
the pinned persona (replies repeat run to run)."""

from __future__ import annotations

import queue
import time
from pathlib import Path

from app.brain.conversation import LlmConfig
from app.brain.persona import PINNED_TIME, Persona
from app.brain.sampling import SamplingConfig
from app.ears.transcriber import SttConfig
from app.loop.assistant import Assistant, AssistantConfig
from app.loop.events import Event, State


class Recorder:
    def __init__(self) -> None:
        self.events: list[Event] = []
        self.q: queue.Queue[Event] = queue.Queue()
        self.max_level = 0.0

    def __call__(self, ev: Event) -> None:
        if ev.kind == "level":
            self.max_level = max(self.max_level, ev.rms)
        else:
            self.events.append(ev)
            self.q.put(ev)

    def wait_for(self, kind: str, timeout: float = 60, pred=lambda e: True) -> Event:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                ev = self.q.get(timeout=0.1)
            except queue.Empty:
                continue
            if ev.kind == kind and pred(ev):
                return ev
        raise AssertionError(f"no {kind} event within {timeout}s; got {self.story()}")

    def story(self, n: int = 30) -> list[str]:
        """The last `n` events but the level meters, with what the telling ones said."""
        told = ("turn", "notice", "transcript", "heard", "error", "state", "nothing_heard")
        return [repr(e)[:200] if e.kind in told else e.kind for e in self.events if e.kind != "output_level"][
            -n:
        ]

    def of(self, kind: str) -> list[Event]:
        return [e for e in self.events if e.kind == kind]


def make(llm_model: Path, whisper_model: Path, rec: Recorder, **kw) -> Assistant:
    cfg = AssistantConfig(
        llm=LlmConfig(
            llm_model, n_ctx=1024, sampling=SamplingConfig(temperature=0), max_tokens=kw.pop("max_tokens", 40)
        ),
        stt=kw.pop("stt", None) or SttConfig(whisper_model),
        persona=kw.pop("persona", None) or Persona("Sam", "Max", now=PINNED_TIME),
        **kw,
    )
    a = Assistant(cfg, rec)
    a.start()
    deadline = time.monotonic() + 60
    while {e.part for e in rec.of("loading")} != {"llm", "whisper"}:
        assert time.monotonic() < deadline, "models did not load"
        time.sleep(0.05)
    return a


def spoken_turn(
    audio, llm_model: Path, whisper_model: Path, wav: Path | list[Path], after_s: float = 0.0, **kw
):
    """Hands-free: play `wav` (or each of a list, one turn each) into the virtual microphone of a
    fresh assistant, wait for its turn (and `after_s` more); returns (recorder, the shut-down
    assistant, the last turn event). Of a list, each next clip starts once the reply before it
    has been spoken: talking over it would be a barge-in, which is not what these turns test."""
    rec = Recorder()
    a = make(llm_model, whisper_model, rec, hands_free=True, **kw)
    wavs = [wav] if isinstance(wav, Path) else wav
    try:
        for i, w in enumerate(wavs):
            audio.play_into_mic(w).wait(30)
            turn = rec.wait_for("turn", 90)
            if i < len(wavs) - 1:
                rec.wait_for("state", 90, lambda e: e.state == State.IDLE)
        time.sleep(after_s)
    finally:
        a.shutdown()
    return rec, a, turn
