"""`talk-llama say [--voice V] [--rate R] [--out FILE.wav] TEXT` and `say --list-voices`."""

from __future__ import annotations

import argparse


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("say", help="speak text (or write a WAV) with the assistant's voice")
    p.add_argument("text", nargs="*")
    p.add_argument("--voice", help="voice id, name or language (see --list-voices)")
    p.add_argument("--rate", type=int, help="words per minute (default 175)")
    p.add_argument("--volume", type=float, help="0..1")
    p.add_argument("--out", help="write a WAV file instead of playing")
    p.add_argument("--device", help="output device index or name")
    p.add_argument("--list-voices", action="store_true")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from app.voice.sentences import SentenceSplitter, speakable
    from app.voice.synthesizer import Synthesizer, TtsUnavailable

    try:
        synth = Synthesizer.get()
    except TtsUnavailable as exc:
        print(f"error: {exc}")
        return 2
    if args.list_voices:
        for v in synth.voices:
            print(f"{v.id:24} {v.name:28} {','.join(v.languages)}")
        return 0
    text = " ".join(args.text).strip()
    if not text:
        print("error: nothing to say")
        return 2
    if args.voice:
        try:
            synth.find_voice(args.voice)
        except ValueError as exc:
            print(f"error: {exc}")
            return 2
    if args.out:
        import soundfile as sf

        pcm = synth.synthesize(speakable(text), args.voice, args.rate, args.volume)
        sf.write(args.out, pcm, synth.sample_rate, subtype="PCM_16")
        print(f"wrote {args.out} ({len(pcm) / synth.sample_rate:.2f} s)")
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
