"""A monkey in the real window (#36 point 3): random user actions at human-ish speed, checked.

The real MainWindow with the real models, on a private PulseAudio server with the virtual
microphone and speaker, under a private Xvfb (xcb) or Qt offscreen. Actions, drawn with a
fixed seed: push-to-talk with spoken clips (espeak-ng voices and the natural voice), hands-free
speech, typing (hostile text too) and drafts, Stop/Esc, Retry, new/switch/rename/delete/undo,
settings changes (voice, rate, names, mode, a bad model path and back), mute, the microphone
and the speaker unplugged and back, resize, theme, idle spells. Keys and clicks are Qt events
sent through the application (the window's own key filter sees them as from a keyboard).

Checked after each action: no log record at ERROR or above and no exception in any thread;
the status pill says what the assistant's state is once it has settled; text that was sent is
in the chat (or back in the message box, said so); a draft is still there after a switch away
and back; at checkpoints the open conversation's saved history is what the window shows;
threads and memory stay bounded; at the end, idle CPU is not that of a spinning thread.

The last line printed is one JSON object: {"actions", "faults", "checks", "violations": [...]}.
Run: .venv/bin/python -m tests.support.monkey --seed 1 --minutes 30 [--offscreen] [--actions a,b]
[--stalls FILE [--stall-ms MS]] (tests/support/stalls.py: every thread's stack when the interpreter
stalls past MS, 45 by default).
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import random
import sys
import tempfile
import threading
from pathlib import Path

log = logging.getLogger("tests.support.monkey")


def _environment(args: argparse.Namespace, tmp: Path) -> list:
    """Private audio server, X server and config folder; set before Qt or PortAudio load."""
    from tests.support import xvfb
    from tests.support.pulse import VirtualAudio

    audio = VirtualAudio().start()
    owned: list = [audio]
    os.environ.update({"TALK_LLAMA_CONFIG": str(tmp / "config"), "OMP_WAIT_POLICY": "PASSIVE"})
    if args.offscreen:
        os.environ["QT_QPA_PLATFORM"] = "offscreen"
    else:
        display = f":{140 + os.getpid() % 50}"
        owned.append(xvfb.start(display))
        os.environ.update({"DISPLAY": display, "QT_QPA_PLATFORM": "xcb"})
    return owned


def _clips(tmp: Path) -> list[Path]:
    """The questions spoken by two espeak-ng voices and, when fetched, the natural voice."""
    import soundfile as sf

    from tests.support import voices
    from tests.support.monkey_actions import QUESTIONS

    out = []
    names = [v for v in voices.available() if v in ("en-us", "en-gb", voices.PIPER)]
    for i, text in enumerate(QUESTIONS):
        voice = names[i % len(names)]
        path = tmp / f"clip-{i}.wav"
        sf.write(path, voices.speak(text, voice), 16000, subtype="PCM_16")
        out.append(path)
    return out


class Faults(logging.Handler):
    """Every ERROR record and every uncaught exception, in any thread."""

    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.seen: list[str] = []
        shown = sys.excepthook

        def uncaught(t, v, tb) -> None:  # counted, and still printed (it may end the run)
            self.seen.append(f"uncaught {t.__name__}: {v}")
            shown(t, v, tb)

        sys.excepthook = uncaught
        threading.excepthook = lambda a: self.seen.append(
            f"thread {a.thread.name}: {a.exc_type.__name__}: {a.exc_value}"
        )

    def emit(self, record: logging.LogRecord) -> None:
        self.seen.append(f"log {record.name}: {record.getMessage()[:200]}")


class RanDry(logging.Handler):
    """The speaker's output underflows, by where they fell (app/voice/device_output.py `ran_dry`)."""

    def __init__(self) -> None:
        super().__init__(logging.INFO)
        self.inside = self.before = 0

    def emit(self, record: logging.LogRecord) -> None:
        from app.voice.device_output import RAN_DRY

        message = record.getMessage()
        if message.startswith(RAN_DRY):
            self.inside += "inside" in message
            self.before += "inside" not in message


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--minutes", type=float, default=3.0)
    p.add_argument("--offscreen", action="store_true", help="Qt offscreen instead of a private Xvfb")
    p.add_argument(
        "--actions", default="", help="comma-separated: draw only these actions (e.g. switch,type_and_send)"
    )
    p.add_argument("--stalls", type=Path, help="write every thread's stack at each interpreter stall here")
    p.add_argument("--stall-ms", type=float, default=45.0, help="what counts as a stall (--stalls)")
    args = p.parse_args(argv)
    only = [a for a in args.actions.split(",") if a]
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    with tempfile.TemporaryDirectory(prefix="tl-monkey-") as name:
        tmp = Path(name)
        owned = _environment(args, tmp)
        try:
            from tests.support.monkey_actions import Monkey

            faults = Faults()
            dry = RanDry()
            for handler in (faults, dry):
                logging.getLogger().addHandler(handler)
            if args.stalls:
                from tests.support.stalls import StallWatch

                owned.append(StallWatch(args.stalls, args.stall_ms / 1000).start())
            monkey = Monkey(random.Random(args.seed), owned[0], _clips(tmp), tmp, faults)
            result = monkey.run(args.minutes * 60, only)
            result["output_underflows"] = {"inside_sentences": dry.inside, "between_sentences": dry.before}
        finally:
            for thing in reversed(owned):
                (thing.stop if hasattr(thing, "stop") else thing.terminate)()
    log.info("monkey: %s", result)
    print(json.dumps(result), flush=True)
    return 0 if not result["violations"] else 1


if __name__ == "__main__":
    raise SystemExit(main())
