"""The assistant as the app runs it, for the latency benches (bench/latency.py,
bench/voice_latency.py): one Assistant on the default models with its events on a queue."""

from __future__ import annotations

import contextlib
import queue
import time
from pathlib import Path

from app.brain.records import RemoteConfig
from app.loop.turn_end import TurnEndConfig


class Rig:
    """One Assistant as the app runs it (the turn model and the speech model in the path) on the
    default models (pinned persona, greedy) and its event queue. `turn_end`: None = the app's
    rule; `turn_model`: False = the words alone; `remote`: a server as the brain; `model`: another
    GGUF than the built-in one; `actions`: the app's actions answer what they can (off: the
    model answers every request, as the latency benches measure it; bench/actions.py compares)."""

    def __init__(
        self,
        tmp: Path,
        hands_free: bool,
        turn_end: TurnEndConfig | None = None,
        turn_model: bool = True,
        remote: RemoteConfig | None = None,
        threads: int | None = None,
        voice: str | None = None,
        model: Path | None = None,
        actions: bool = False,
    ):
        from app.brain.conversation import LlmConfig
        from app.brain.persona import PINNED_TIME, Persona
        from app.brain.sampling import SamplingConfig
        from app.catalog.catalog import default_model_path
        from app.ears.transcriber import SttConfig
        from app.ears.vad import VadConfig
        from app.loop.assistant import Assistant, AssistantConfig
        from app.voice.speaker import SpeakerConfig

        self.tmp = tmp
        self.llm = LlmConfig(
            model or default_model_path("llm"),
            n_ctx=2048,
            sampling=SamplingConfig(temperature=0),
            max_tokens=48,
            n_threads=threads,
        )
        self.stt = SttConfig(default_model_path("whisper"))
        self.persona = Persona(now=PINNED_TIME)  # the prompt carries the time; pinned, replies repeat
        self.events: queue.Queue = queue.Queue()
        cfg = AssistantConfig(
            llm=self.llm,
            stt=self.stt,
            remote=remote,
            persona=self.persona,
            hands_free=hands_free,
            vad=VadConfig(speech_model=default_model_path("vad")),
            turn_end=turn_end or TurnEndConfig(),
            turn_model=default_model_path("turn") if turn_model else None,
            speaker=SpeakerConfig(voice=voice),
            actions=actions,
            actions_dir=tmp,
        )
        self.a = Assistant(cfg, self.events.put)
        self.a.start()
        loaded: set[str] = set()
        while loaded != {"llm", "whisper"}:
            ev = self.events.get(timeout=120)
            if ev.kind == "loading":
                loaded.add(ev.part)
            elif ev.kind == "error":
                raise RuntimeError(ev.message)

    def drain(self, seconds: float) -> list:
        """Events arriving within `seconds`."""
        out, end = [], time.monotonic() + seconds
        while (left := end - time.monotonic()) > 0:
            with contextlib.suppress(queue.Empty):
                out.append(self.events.get(timeout=min(left, 0.2)))
        return out

    def wait_turn(self, since: float, timeout: float = 60) -> tuple[dict | None, list]:
        """The first turn whose speech ended after `since` (perf_counter), and the events seen."""
        seen, end = [], time.monotonic() + timeout
        while time.monotonic() < end:
            try:
                ev = self.events.get(timeout=0.5)
            except queue.Empty:
                continue
            seen.append(ev)
            if ev.kind == "turn" and ev.t_speech_end >= since:
                return ev.record(), seen
        return None, seen

    def quiet_down(self) -> None:
        """Stop the reply (its latency is measured), fresh conversation for the next question."""
        self.a.interrupt()
        self.a.speaker.wait(30)
        self.a.new_conversation()
        self.drain(0.5)

    def close(self) -> None:
        self.a.shutdown()
