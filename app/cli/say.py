"""`talk-llama say [--voice V] [--rate R] [--out FILE.wav] TEXT` and `say --list-voices`."""

from __future__ import annotations

import argparse


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("say", help="speak text (or write a WAV) with the assistant's voice")
    p.add_argument("text", nargs="*")
    p.add_argument(
        "--voice",
        help="a natural voice (name or .onnx file), a system voice id or name, or a language "
        "(see --list-voices)",
    )
    p.add_argument("--rate", type=int, help="words per minute (default 175)")
    p.add_argument("--volume", type=float, help="0..1")
    p.add_argument("--out", help="write a WAV file instead of playing")
    p.add_argument("--device", help="output device index or name")
    p.add_argument("--list-voices", action="store_true")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from app.voice.sentences import SentenceSplitter, speakable
    from app.voice.voices import all_voices, open_engine

    if args.list_voices:
        voices = all_voices()
        if not voices:
            print("error: no voices: run `talk-llama models fetch` (natural) or install espeak-ng")
            return 2
        for v in voices:
            print(f"{v.id:24} {v.engine:8} {v.name:28} {','.join(v.languages)}")
        return 0
    text = " ".join(args.text).strip()
    if not text:
        print("error: nothing to say")
        return 2
    opened = open_engine(args.voice)
    if opened.engine is None:
        print(f"error: {opened.problem}")
        return 2
    if opened.notice:  # the voice asked for is not the one that would speak
        print(f"error: {opened.notice}")
        return 2
    if args.out:
        import numpy as np
        import soundfile as sf

        splitter = SentenceSplitter()
        speeches = [
            opened.engine.render(speakable(s), args.rate, args.volume)
            for s in [*splitter.feed(text), *splitter.flush()]
        ]
        pcm = np.concatenate([s.pcm for s in speeches])
        sf.write(args.out, pcm, opened.engine.sample_rate, subtype="PCM_16")
        print(f"wrote {args.out} ({len(pcm) / opened.engine.sample_rate:.2f} s)")
        return 0
    from app.voice.speaker import Speaker, SpeakerConfig

    errors: list[str] = []
    device = int(args.device) if args.device and args.device.isdigit() else args.device
    speaker = Speaker(
        SpeakerConfig(args.voice, args.rate, args.volume, device),
        on_event=lambda e: errors.append(e.message) if e.kind == "error" else None,
    )
    splitter = SentenceSplitter()
    for sentence in [*splitter.feed(text), *splitter.flush()]:
        speaker.say(speakable(sentence))
    speaker.wait()
    speaker.close()
    for e in errors:
        print(f"error: {e}")
    return 1 if errors else 0
