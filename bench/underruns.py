"""Does the voice play smoothly on a busy desktop? Output underruns and gaps per output buffer.

The Speaker plays replies (one long sentence each) on the virtual speaker while 0, 1 or 2 other
processes keep a core busy; for each output latency setting (`SpeakerConfig.latency`) it counts
PortAudio's output underflows (the device ran dry: a hole in the sound) reported by the Speaker,
and measures the holes on the device: silences inside the sentences (from a level monitor of
`speaker.monitor`) longer than the synthesized audio's own. Also stop() → silence, which the
buffer must not lengthen (the stream is aborted, buffered sound included).
The load is `--load spin` (other processes spinning: the CPU is taken) or `--load app` (the
app's own work in this process, as in the window: the local brain writing replies and whisper
transcribing, one thread each, plus `busy` spinning processes): the playback thread then also
waits for the GIL and shares the cores with the native threads of llama.cpp and whisper.cpp.
Targets: 0 holes over 20 replies with one core busy; stop ≤ 100 ms.
Run: .venv/bin/python -m bench.underruns [--replies 20] [--latencies low,0.05,0.1] [--busy 0,1,2]
     [--load spin|app]
"""

from __future__ import annotations

import argparse
import multiprocessing
import tempfile
import threading
import time
from pathlib import Path

import numpy as np

from bench.common import emit, pct
from tests.support.monitor import Monitor
from tests.support.pulse import VirtualAudio

# One long sentence per reply: a silence inside it longer than the synthesized audio's own is a
# hole in the sound (the gaps between sentences are bench/tts's measure).
REPLY = [
    "Once upon a time there was a small dragon who lived by a quiet river in the mountains, and every "
    "morning he brewed a pot of green tea and watched the fish jump in the bright morning sunlight."
]
LOUD = 0.003


def spin() -> None:
    while True:
        pass


class AppLoad:
    """The app's own work in this process while the voice plays: the local brain replies to the
    long-chat lines one after another, and whisper transcribes a 3 s clip again and again."""

    def __init__(self) -> None:
        self.stopped = threading.Event()
        self.replies = self.transcripts = 0
        self._threads = [
            threading.Thread(target=self._brain, daemon=True),
            threading.Thread(target=self._ears, daemon=True),
        ]
        for t in self._threads:
            t.start()

    def _brain(self) -> None:
        from app.brain.conversation import Conversation
        from app.brain.persona import PINNED_TIME, Persona
        from app.brain.records import LlmConfig
        from app.catalog.catalog import default_model_path
        from tests.support.longchat_script import LINES

        conv = Conversation(LlmConfig(default_model_path("llm"), n_ctx=1024), Persona(now=PINNED_TIME))
        while not self.stopped.is_set():
            conv.say(LINES[self.replies % len(LINES)], cancel=self.stopped)
            self.replies += 1
        conv.close()

    def _ears(self) -> None:
        from app.catalog.catalog import default_model_path
        from app.ears.transcriber import SttConfig, Transcriber

        stt = Transcriber(SttConfig(default_model_path("whisper"), gate=False))
        clip = (np.random.default_rng(0).standard_normal(16000 * 3) * 0.05).astype(np.float32)
        while not self.stopped.is_set():
            stt.transcribe(clip, abort=self.stopped.is_set)
            self.transcripts += 1

    def stop(self) -> dict:
        self.stopped.set()
        for t in self._threads:
            t.join(timeout=30)
        return {"replies_written": self.replies, "clips_transcribed": self.transcripts}


def holes(times: np.ndarray, rms: np.ndarray, inherent_max: float) -> int:
    """Silences inside the sound longer than any inside the synthesized audio itself."""
    loud = times[rms > LOUD]
    return int((np.diff(loud) > inherent_max + 0.03).sum()) if len(loud) > 1 else 0


def inherent_gap(speech) -> float:
    """The longest silence inside a synthesized `Speech` (word and comma pauses). The natural
    voice draws its pauses anew at each synthesis, so each reply is judged against the audio
    that was actually played."""
    pcm = speech.pcm
    blk = int(speech.sample_rate * 0.005)
    env = np.sqrt((pcm[: len(pcm) // blk * blk].reshape(-1, blk) ** 2).mean(axis=1))
    loud = np.nonzero(env > LOUD)[0] * 0.005
    return float(np.diff(loud).max()) if len(loud) > 1 else 0.0


def run(latency: float | str, busy: int, replies: int, tmp: Path, load: str = "spin") -> dict:
    from app.voice.speaker import Speaker, SpeakerConfig

    spinners = [multiprocessing.Process(target=spin, daemon=True) for _ in range(busy)]
    for p in spinners:
        p.start()
    app_load = AppLoad() if load == "app" else None
    work: dict = {}
    try:
        started = threading.Event()
        sp = Speaker(
            SpeakerConfig(latency=latency),
            on_event=lambda e: started.set() if e.kind == "sentence_started" else None,
        )
        underflows = 0
        lock = threading.Lock()

        def gap() -> None:
            nonlocal underflows
            with lock:
                underflows += 1

        sp.on_gap = gap
        played = []  # what the Speaker's engine synthesized, in order
        engine, render = sp._engine, sp._engine.render
        engine.render = lambda *a, **k: played.append(render(*a, **k)) or played[-1]
        hole_counts, stops = [], []
        for i in range(replies):
            mon = Monitor(tmp / f"m{latency}-{busy}-{i}")
            for s in REPLY:
                sp.say(s)
            sp.wait(60)
            times, rms = mon.stop()
            hole_counts.append(holes(times, rms, max(inherent_gap(p) for p in played[-len(REPLY) :])))
        for i in range(5):  # stop while a sentence plays
            mon = Monitor(tmp / f"s{latency}-{busy}-{i}")
            started.clear()
            sp.say(REPLY[0])
            started.wait(30)  # synthesis under load can take a while: stop once it plays
            time.sleep(1.0)
            t_stop = time.monotonic()
            sp.stop()
            time.sleep(0.5)
            times, rms = mon.stop()
            loud = times[(rms > LOUD) & (times > t_stop - 0.5)]
            if len(loud):  # a trial where nothing was playing measures nothing
                stops.append(max(0.0, float(loud[-1]) - t_stop) * 1000)
        del engine.render  # the shared engine's own method again
        sp.close()
    finally:
        if app_load is not None:
            work = app_load.stop()
        for p in spinners:
            p.terminate()
    return {
        "load": load,
        **work,
        "voice": getattr(sp.voice, "name", None) or "espeak-ng default",
        "latency": latency,
        "busy_cores": busy,
        "replies": replies,
        "underflows": underflows,
        "replies_with_holes": sum(1 for h in hole_counts if h),
        "holes": sum(hole_counts),
        "stops_measured": len(stops),
        "stop_ms_p50": round(pct(stops, 50), 1) if stops else None,
        "stop_ms_max": round(max(stops), 1) if stops else None,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--replies", type=int, default=20)
    ap.add_argument("--latencies", default="low,0.05,0.1")
    ap.add_argument("--busy", default="0,1,2")
    ap.add_argument("--load", choices=("spin", "app"), default="spin")
    args = ap.parse_args()
    audio = VirtualAudio().start()
    try:
        rows = []
        with tempfile.TemporaryDirectory() as tmp:
            for busy in [int(b) for b in args.busy.split(",")]:
                for lat in args.latencies.split(","):
                    latency: float | str = lat if lat == "low" else float(lat)
                    rows.append(run(latency, busy, args.replies, Path(tmp), args.load))
                    print(rows[-1], flush=True)
    finally:
        audio.stop()
    emit("underruns" if args.load == "spin" else "underruns_app", {"runs": rows})


if __name__ == "__main__":
    main()
