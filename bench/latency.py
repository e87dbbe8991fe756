"""Voice-to-voice latency and turn-taking through the virtual devices (issues #15, #33).

Spoken questions are fed into the virtual microphone; "heard" is the first sample on the virtual
speaker (a level monitor in another process): the true voice-to-voice time. The assistant runs as
the app does (the turn model and the speech model in the path). Per voice family (espeak-ng's
en-us; MBROLA's us2, a man's recorded diphones; the natural voice, Piper's joe, as people
sound), in one run, same models:
- hands-free, complete questions, for (a) the earlier words rule (the words' end-of-turn
  probability on the 0.001-0.2 scale, no turn model) and (b) today's rule (the words and the
  turn model, loop/turn_end.py); stages in ms after the end of speech, and the CPU each thread
  used per turn (bench/thread_cpu.py);
- hands-free, utterances with a 500-800 ms pause mid-sentence ("What is the capital of ...
  France?"), both rules, said two ways (`through`: one sentence, the voice up at the pause;
  `apart`: the head said alone, ending like a finished sentence): how often the turn ended at the
  pause (premature: a turn was made before the pause's middle), and how often the conversation is
  left with it in two turns (split: speech soon after a turn's end continues it, continuation.py);
- (c) a remote brain (llama.cpp's own `llama-server` as users run it, or llama-cpp-python's
  server where it is not built; the same model, over HTTP; the result names it) with today's rule,
  the words read by the local default model as the app does (brain/words_reader.py), complete
  questions and paused utterances; and complete questions without the reader (the sound decides
  alone). The server stands in for another machine: it runs at the lowest CPU priority (nice
  19), so it takes the cycles the app leaves and not the ones it needs (at equal priority on two
  cores its generation delays the first sentence's synthesis);
- push-to-talk: release -> first sample heard;
- (d) the sequential baseline (talk-llama's order): wait the fixed silence, transcribe, generate
  the whole reply, then speak, on the same utterances.
The hands-free rules (a, b, c) are loaded together and take each utterance in turn, the order
rotating, the rest muted: a slow change in the shared machine's speed falls on all of them alike
(run one after another, two runs of the same code differed by 10% where the rules decided
alike). Each question starts a fresh conversation (greedy decoding: replies repeat run to run);
the reply is stopped once heard. The machine it ran on is printed with the result.
Targets (#33): per family, paused utterances ended early <= 10% for both ways; today's rule's
hands-free p50 <= 1.0x the earlier rule's; the remote brain's <= 1.1x the local one's; hands-free
and push-to-talk >= 2.5x faster than the sequential baseline.
Run: .venv/bin/python -m bench.latency [--questions 12] [--families espeak,mbrola,natural]
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import soundfile as sf

from app.brain.records import RemoteConfig
from app.loop.turn_end import TurnEndConfig
from bench.common import emit, pct
from bench.latency_rig import Rig
from bench.latency_trials import STAGES, PausedClip, ask, paused_one, paused_summary, push_to_talk, sequential
from bench.turn_rules import EARLIER_WORDS
from tests.support.phrases import PAUSED, PHRASES
from tests.support.pulse import VirtualAudio
from tests.support.speech import before_pause
from tests.support.voices import MBROLA_EN, PIPER, available, said_apart, said_through, speak


def summary(d: dict[str, list[float]]) -> dict:
    return {k: {"p50": round(pct(v, 50)), "p90": round(pct(v, 90)), "n": len(v)} for k, v in d.items() if v}


# the rule before the turn model joined (its pitch hold, which only made complete questions
# wait, left out): today's rule is compared with it
EARLIER = TurnEndConfig(**EARLIER_WORDS)
FAMILIES = {"espeak": "en-us", "mbrola": MBROLA_EN, "natural": PIPER}


def question_wavs(tmp: Path, voice: str, n: int) -> list[Path]:
    """The first `n` PHRASES said by `voice`, as files for the virtual microphone."""
    out = []
    for i in range(n):
        out.append(tmp / f"q{i}-{voice.replace(':', '_')}.wav")
        sf.write(out[-1], speak(PHRASES[i % len(PHRASES)], voice), 16000)
    return out


def paused_wavs(tmp: Path, voice: str) -> dict[str, list[PausedClip]]:
    """PAUSED utterances with 500, 600, 700, 800 ms of silence between head and tail, said
    `through` and `apart` (tests/support/voices.py) by `voice`."""
    out: dict[str, list[PausedClip]] = {"through": [], "apart": []}
    name = voice.replace(":", "_")
    for i, (head, tail) in enumerate(PAUSED):
        pause_s = 0.5 + 0.1 * (i % 4)
        for way, say in (("through", said_through), ("apart", said_apart)):
            wav = tmp / f"paused{i}-{way}-{name}.wav"
            x = say(head, tail, pause_s, voice)
            sf.write(wav, x, 16000)
            head_end_s = len(before_pause(x, pause_s, keep_s=0.0)) / 16000
            out[way].append(PausedClip(wav, len(head.split()), head_end_s + pause_s / 2))
    return out


def rotated(names: list[str], i: int) -> list[str]:
    """`names` starting at the `i`-th (each rule goes first as often as the others)."""
    k = i % len(names)
    return names[k:] + names[:k]


def hands_free_rules(
    audio: VirtualAudio, tmp: Path, wavs: list[Path], paused_by_way: dict | None, rules: dict[str, dict]
) -> dict[str, dict]:
    """Complete questions (and, for the rules whose options say `paused`, the paused
    utterances) with one Rig per rule, all loaded at once and taking each question in turn
    (the order rotating), the others muted: slow changes of the shared machine's speed fall on
    every rule alike instead of on whichever ran in that stretch. `rules`: name -> Rig options.
    The CPU per thread name counts the muted rigs' threads of that name too (their microphones
    feed silence: the same small share for every rule)."""
    rigs: dict[str, Rig] = {}
    try:
        for name, options in rules.items():
            rigs[name] = Rig(tmp, hands_free=True, **{k: v for k, v in options.items() if k != "paused"})
            rigs[name].a.set_muted(True)
        stages: dict[str, dict[str, list[float]]] = {n: {k: [] for k in STAGES} for n in rigs}
        samples: dict[str, list[dict]] = {n: [] for n in rigs}
        for i, wav in enumerate(wavs):
            for name in rotated(list(rigs), i):
                with unmuted(rigs[name]):
                    ask(audio, rigs[name], i, wav, stages[name], samples[name])
        out: dict[str, dict] = {}
        for name in rigs:
            cpu = {k.removeprefix("cpu:"): v for k, v in stages[name].items() if k.startswith("cpu:")}
            out[name] = {
                "stages_ms": summary({k: v for k, v in stages[name].items() if not k.startswith("cpu:")}),
                "cpu_ms_per_turn": summary(cpu),  # from the question's first sound to the reply heard
                "samples": samples[name],
            }
        with_paused = [n for n in rigs if rules[n].get("paused")]
        for way, items in (paused_by_way or {}).items():
            said: dict[str, list[dict]] = {n: [] for n in with_paused}
            for i, clip in enumerate(items):
                for name in rotated(with_paused, i):
                    with unmuted(rigs[name]):
                        said[name].append(paused_one(audio, rigs[name], clip))
            for name in with_paused:
                out[name].setdefault("paused", {})[way] = paused_summary(said[name])
        return out
    finally:
        for rig in rigs.values():
            rig.close()


@contextlib.contextmanager
def unmuted(rig: Rig) -> Iterator[None]:
    """`rig` hears the microphone inside the block, and is muted again after it."""
    rig.a.set_muted(False)
    try:
        yield
    finally:
        rig.a.set_muted(True)


def run(
    audio: VirtualAudio,
    n_questions: int,
    tmp: Path,
    threads: int | None = None,
    full: bool = False,
    voice: str = "en-us",
    remote: RemoteConfig | None = None,
) -> dict:
    """Hands-free voice-to-voice with today's rule on questions said by `voice`; `full` adds the
    earlier rule, the paused utterances, push-to-talk, the sequential baseline and (given
    `remote`) a server as the brain. `threads`: None = automatic."""
    from app.ears.vad import VadConfig

    wavs = question_wavs(tmp, voice, n_questions)
    result: dict = {"questions": n_questions, "voice": voice, "rules": {}}
    pauses = paused_wavs(tmp, voice) if full else None
    rules: dict[str, dict] = {"today": {"threads": threads, "paused": True}}
    if full:
        rules["earlier"] = {"threads": threads, "paused": True, "turn_end": EARLIER, "turn_model": False}
    if full and remote:
        alone = dataclasses.replace(remote, words_model=None)
        rules["remote"] = {"threads": threads, "paused": True, "remote": remote}
        rules["remote_sound"] = {"threads": threads, "remote": alone}
    result["rules"] = hands_free_rules(audio, tmp, wavs, pauses, rules)
    heard = result["rules"]["today"]["stages_ms"]["heard"]["p50"]
    result["voice_to_voice_p50_ms"] = heard
    if not full:
        return result
    result["today_over_earlier_p50"] = round(
        heard / result["rules"]["earlier"]["stages_ms"]["heard"]["p50"], 2
    )
    for name in ("remote", "remote_sound"):
        if name in result["rules"]:
            r = result["rules"][name]
            result[f"{name}_over_local_p50"] = round(r["stages_ms"]["heard"]["p50"] / heard, 2)
    rig = Rig(tmp, hands_free=False, threads=threads)
    try:
        ptt, samples = push_to_talk(audio, rig, wavs)
        ptt_ms = summary({"heard": ptt})["heard"]
        result["push_to_talk"] = {"release_to_heard_ms": ptt_ms, "samples": samples}
        utterances = [speak(PHRASES[i % len(PHRASES)], voice) for i in range(n_questions)]
        result["sequential_ms"] = summary(sequential(rig, utterances, VadConfig().end_silence_ms))
    finally:
        rig.close()
    seq = result["sequential_ms"]["heard"]["p50"]
    result["speedup_vs_sequential_p50"] = round(seq / heard, 2)
    result["ptt_speedup_vs_sequential_p50"] = round(seq / ptt_ms["p50"], 2)
    return result


def main() -> None:
    from app.brain.records import RemoteConfig
    from app.catalog.catalog import default_model_path
    from tests.support.servers import CppServer, LlamaServer, llama_cpp_bin

    ap = argparse.ArgumentParser()
    ap.add_argument("--questions", type=int, default=12)
    ap.add_argument("--families", default=",".join(FAMILIES), help="voice families, comma-separated")
    args = ap.parse_args()
    families = [f for f in args.families.split(",") if f]
    families = [f for f in families if FAMILIES[f] in available()]  # (MBROLA, Piper: when installed)
    audio = VirtualAudio().start()
    out: dict = {"questions": args.questions, "families": {}}
    try:
        with tempfile.TemporaryDirectory() as d:
            model, log, bin_dir = default_model_path("llm"), Path(d) / "server.log", llama_cpp_bin()
            server: CppServer | LlamaServer
            if bin_dir is not None:  # the server users run (per token it is faster than the Python one)
                server = CppServer(bin_dir, model, log, n_ctx=2048, nice=19)
            else:
                server = LlamaServer(model, log, n_ctx=2048, nice=19)
            out["server"] = server.name
            try:
                words = default_model_path("llm")  # the app's default reader of the words
                remote = RemoteConfig(
                    server.url, max_tokens=48, temperature=0.0, n_ctx=2048, words_model=words
                )
                for family in families:
                    out["families"][family] = run(
                        audio, args.questions, Path(d), full=True, voice=FAMILIES[family], remote=remote
                    )
            finally:
                server.stop()
    finally:
        audio.stop()
    emit("latency", out)


if __name__ == "__main__":
    main()
