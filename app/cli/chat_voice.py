"""Voice mode of `talk-llama chat`: the Assistant driven from a terminal.

Hands-free by default (VAD segments utterances, like talk-llama); `--ptt`: Enter starts
listening, Enter again stops. Prints `Person: ...` / `Bot: ...` lines as talk-llama does, or one
JSON object per turn with `--jsonl`. Ctrl+C (or end of stdin in --ptt mode) ends cleanly.
"""

from __future__ import annotations

import argparse
import json
import sys
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

from app.cli.chat_shared import Transcript, llm_config, persona, remote_config
from app.loop import events

if TYPE_CHECKING:
    from app.loop.assistant_config import AssistantConfig


def device(v: str | None) -> int | str | None:
    """A device flag: an index when it is a number, else a name (None: the default)."""
    return int(v) if v is not None and str(v).isdigit() else v


def assistant_config(args: argparse.Namespace) -> AssistantConfig:
    from app.catalog.catalog import optional_model_path
    from app.catalog.languages import base_language, whisper_model_for
    from app.ears.transcriber import SttConfig, names_prompt
    from app.ears.vad import VadConfig
    from app.loop.assistant_config import AssistantConfig
    from app.loop.turn_end import TurnEndConfig
    from app.voice.speaker import SpeakerConfig

    p = persona(args)
    return AssistantConfig(
        llm=llm_config(args),
        remote=remote_config(args),
        stt=SttConfig(
            whisper_model_for(args.language, args.model_whisper),
            n_threads=args.threads,
            language=args.language,
            audio_ctx=args.audio_ctx,
            translate=args.translate,
            initial_prompt=names_prompt(p.bot),
        ),
        persona=p,
        vad=VadConfig(
            vad_thold=args.vad_thold,
            freq_thold=args.freq_thold,
            max_utterance_s=args.voice_ms / 1000,
            speech_model=optional_model_path(args.speech_model, "vad"),
        ),
        speaker=SpeakerConfig(
            voice=args.voice,
            rate=args.rate,
            device=device(args.output_device),
            language=base_language(args.language),
        ),
        input_device=device(args.capture),
        hands_free=not args.ptt,
        turn_end=TurnEndConfig(
            rule=args.turn_end, continue_ms=max(0, args.continue_ms), hold_at=max(0.0, args.pitch_hold)
        ),
        turn_model=optional_model_path(args.turn_model, "turn"),
        wake_command=args.wake_command,
        heard_ok=args.heard_ok,
        speak_command=args.speak,
        speak_file=Path(args.speak_file) if args.speak_file else Path("/tmp/talk-llama-speak.txt"),
        session_dir=Path(args.session) if args.session else None,
        actions=args.actions,
    )


class TerminalView:
    """Turns assistant events into talk-llama-style lines (or JSONL).

    A turn's JSON record is written once its reply is settled, so that it says what the
    assistant remembers: the `turn` event comes when the reply starts to be heard, and a
    barge-in after it (the `heard` event) makes `reply` the part that was heard, with the rest
    as `unspoken`. Settled: `heard`, the assistant idle again, the next turn, or the end; or
    already when the `turn` event comes, if the reply was cut and remembered as heard before
    (`settled`) or the assistant is idle by then (the threads report in either order).
    """

    def __init__(self, args: argparse.Namespace, out: Transcript, bot: str, person: str) -> None:
        self.args, self.out, self.bot, self.person = args, out, bot, person
        self.ready = threading.Event()
        self.loaded: set[str] = set()
        self._record: dict[str, Any] | None = None  # the last turn's record, not yet written
        self._idle = False  # the assistant's last state was idle
        self._lock = threading.Lock()  # events come from the assistant's threads

    def flush(self) -> None:
        """Write the pending turn record (JSONL mode); the caller holds the lock or is the last."""
        record, self._record = self._record, None
        if record is not None:
            print(json.dumps(record, ensure_ascii=False, default=str), flush=True)

    def __call__(self, ev: events.Event) -> None:
        with self._lock:
            self._show(ev)

    def _show(self, ev: events.Event) -> None:
        if isinstance(ev, events.StateChanged):
            self._idle = ev.state == events.State.IDLE
        if self._record is not None:
            if isinstance(ev, events.Heard):
                self._record.update(reply=ev.text, unspoken=ev.unspoken, interrupted=True)
                self.flush()
            elif isinstance(ev, events.UserTurn) or (isinstance(ev, events.StateChanged) and self._idle):
                self.flush()
        jsonl, note = self.args.jsonl, ""
        match ev:
            case events.Loaded(done=True):
                self.loaded.add(ev.part)
                if {"llm", "whisper"} <= self.loaded:
                    self.ready.set()
                    hint = "press Enter to talk" if self.args.ptt else "start speaking"
                    note = f"[ready: {hint}; Ctrl+C to quit]"
            case events.UserTurn():
                self.out.line(f"{self.person}: {ev.text}")
                self.out.begin_reply(self.bot)
            case events.Token():
                self.out.reply_piece(ev.text)
            case events.TurnReported():
                self.out.line("")
                if jsonl:
                    self.flush()
                    self._record = {"unspoken": "", **ev.record()}
                    if ev.settled or (self._idle and not ev.interrupted):
                        self.flush()
            case events.Heard() if not jsonl:
                said = f'"{ev.text}"' if ev.text else "nothing"
                note = f"[interrupted: {self.bot} said {said}; the rest was not spoken]"
            case events.Retracted(continued=True) if not jsonl:
                note = f"[you went on after a pause: {self.person}: {ev.text!r} is heard with what follows]"
            case events.ActionTaken() if not jsonl:
                slots = " ".join(f"{k}={v}" for k, v in ev.slots.items())
                note = (
                    f"[action: {ev.intent}{' ' + slots if slots else ''}{' (not done)' if ev.failed else ''}]"
                )
            case events.Announcement():
                note = f"[{ev.source}: {ev.text}]"
            case events.Unanswered():
                note = f"[{ev.message} You said: {ev.text}]"
            case events.Transcript(rejected=True):
                note = f"[{ev.why_dropped()}]"
            case events.Level() if self.args.print_energy:
                print(f"\r[level {ev.rms:.4f}]", end="", file=sys.stderr, flush=True)
            case events.Error() | events.Notice() | events.DeviceChanged():
                note = f"[{'notice' if ev.kind == 'device' else ev.kind}: {ev.message}]"
        if note:
            print(note, file=sys.stderr, flush=True)
        if isinstance(ev, events.Error) and ev.source in ("llm", "whisper"):
            self.ready.set()


def run_voice(args: argparse.Namespace) -> int:
    from app.catalog.languages import whisper_choice
    from app.loop.assistant import Assistant

    cfg = assistant_config(args)
    if notice := whisper_choice(args.language, args.model_whisper)[1]:
        print(f"[notice: {notice}]", file=sys.stderr, flush=True)
    out = Transcript(args)
    view = TerminalView(args, out, cfg.persona.bot, cfg.persona.person)
    assistant = Assistant(cfg, view)
    assistant.set_level_updates(args.print_energy)  # a terminal shows levels only with -pe
    assistant.start()
    try:
        view.ready.wait()
        if args.ptt:
            listening = False
            for _line in sys.stdin:
                if listening:
                    assistant.release()
                else:
                    assistant.press()
                    print("[listening... Enter to stop]", file=sys.stderr, flush=True)
                listening = not listening
        else:
            threading.Event().wait()
    except KeyboardInterrupt:
        print("", file=sys.stderr)
    finally:
        assistant.shutdown()
        view.flush()
        out.close()
    return 0
