"""Speech input on real parts: the PulseAudio virtual mic, webrtcvad, whisper tiny.en."""

from __future__ import annotations

import gc
import itertools
import json
import subprocess
import sys
import time
import weakref
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf
import soxr
from scipy.signal import lfilter

from app.ears.transcriber import SttConfig, auto_audio_ctx, names_prompt, split_at_pauses
from app.ears.transcript_text import clean_text
from app.ears.vad import RATE, Segmenter, VadConfig, squeeze_pauses
from tests.conftest import espeak, load16k, words

# Phrases the default model (tiny.en q4_0) gets word for word from espeak-ng; bench/stt.py
# measures the error rate over a wider set (e.g. it hears "Remind me" as "reminds me").
GOOD_PHRASES = [
    "Tell me something interesting about the moon.",
    "How do I make a cup of tea?",
    "I would like to listen to some music.",
    "Call my brother when I get home.",
]


@pytest.mark.parametrize("phrase", GOOD_PHRASES)
def test_espeak_phrases_transcribe_word_accurately(transcriber, speech_dir, phrase) -> None:
    wav = espeak(phrase, speech_dir / f"{abs(hash(phrase))}.wav", wpm=140)
    result = transcriber.transcribe(load16k(wav))
    assert not result.rejected, result.reason
    assert words(result.text) == words(phrase)
    assert 0 < result.prob <= 1 and result.audio_ctx == auto_audio_ctx(len(load16k(wav)))


def noise_clips() -> dict[str, np.ndarray]:
    rng = np.random.default_rng(42)
    n = 3 * RATE
    t = np.arange(n) / RATE
    clips: dict[str, np.ndarray] = {"digital-silence": np.zeros(n), "dc-offset": np.full(n, 0.05)}
    white = rng.standard_normal(n)
    pink = lfilter(
        [0.049922035, -0.095993537, 0.050612699, -0.004408786],
        [1, -2.494956002, 2.017265875, -0.522189400],
        white,
    )
    brown = np.cumsum(white)
    brown = brown - np.convolve(brown, np.ones(400) / 400, mode="same")
    for name, base in (("white", white), ("pink", pink), ("brown", brown)):
        base = base / np.sqrt(np.mean(base**2))
        for db in (-60, -45, -30, -20, -12):
            clips[f"{name}{db}dB"] = base * 10 ** (db / 20)
    for hz in (50, 60):
        clips[f"hum{hz}"] = 0.2 * np.sin(2 * np.pi * hz * t) + 0.05 * np.sin(2 * np.pi * 3 * hz * t)
    clicks = np.zeros(n)
    clicks[:: RATE // 3] = 0.9
    clips["clicks"] = clicks
    clicks_noise = clicks + white * 0.003
    clips["clicks-in-noise"] = clicks_noise
    clips["fan"] = lfilter([1], [1, -0.97], white) * 0.01 + 0.02 * np.sin(2 * np.pi * 120 * t)
    return {k: v.astype(np.float32) for k, v in clips.items()}


def test_silence_and_noise_never_become_turns(transcriber) -> None:
    clips = noise_clips()
    assert len(clips) >= 20
    turns = {}
    for name, clip in clips.items():
        result = transcriber.transcribe(clip)
        if not result.rejected:
            turns[name] = result.text
        seg = Segmenter(VadConfig())
        utterances = [
            e for e in seg.feed(clip) + seg.feed(np.zeros(RATE, np.float32)) if e.kind == "utterance"
        ]
        # A hands-free segment of noise is fine only if the transcriber then rejects it.
        for u in utterances:
            r = transcriber.transcribe(u.audio)
            if not r.rejected:
                turns[f"{name} (segmented)"] = r.text
    assert turns == {}


def test_annotations_are_stripped_and_non_ascii_kept() -> None:
    assert clean_text("[BLANK_AUDIO]") == ""
    assert clean_text(" (music) Hello [laughs] there *coughs* ♪") == "Hello there"
    assert clean_text("Grüße aus Köln, 東京です") == "Grüße aus Köln, 東京です"


def with_silence(speech: np.ndarray, lead_s: float, tail_s: float) -> np.ndarray:
    rng = np.random.default_rng(1)
    lead = rng.standard_normal(int(lead_s * RATE)).astype(np.float32) * 0.001
    tail = rng.standard_normal(int(tail_s * RATE)).astype(np.float32) * 0.001
    return np.concatenate([lead, speech, tail])


def test_vad_closes_utterance_quickly_after_speech(speech_dir) -> None:
    speech = load16k(espeak("Set a timer for ten minutes.", speech_dir / "timer.wav"))
    audio = with_silence(speech, 0.5, 2.0)
    speech_end = int(0.5 * RATE) + int(np.nonzero(np.abs(speech) > 0.02)[0][-1])
    seg = Segmenter(VadConfig())
    closed_at = None
    for i in range(0, len(audio), 320):
        if any(e.kind == "utterance" for e in seg.feed(audio[i : i + 320])):
            closed_at = i + 320
            break
    assert closed_at is not None
    latency_ms = (closed_at - speech_end) / RATE * 1000
    assert latency_ms <= 500, latency_ms


def paused_sentence(speech_dir: Path) -> tuple[np.ndarray, float]:
    """ "I went to the shop … 300 ms … and bought some bread." in silence; its speech's length (s)."""
    a = load16k(espeak("I went to the shop", speech_dir / "a.wav"))
    b = load16k(espeak("and bought some bread.", speech_dir / "b.wav"))
    trim = lambda x: x[np.nonzero(np.abs(x) > 0.01)[0][0] : np.nonzero(np.abs(x) > 0.01)[0][-1]]  # noqa: E731
    a, b = trim(a), trim(b)
    pause = np.zeros(int(0.3 * RATE), np.float32)
    return with_silence(np.concatenate([a, pause, b]), 0.5, 1.5), (len(a) + len(b)) / RATE


def test_vad_keeps_a_300ms_pause_inside_one_utterance(speech_dir) -> None:
    audio, speech_s = paused_sentence(speech_dir)
    seg = Segmenter(VadConfig())
    events = seg.feed(audio)
    utterances = [e for e in events if e.kind == "utterance"]
    assert len(utterances) == 1
    assert len(utterances[0].audio) / RATE > speech_s
    # the mid-sentence pause starts an early transcription, and resuming marks it stale
    kinds = [e.kind for e in events]
    first_pause = kinds.index("pause")
    assert "resumed" in kinds[first_pause:] and kinds[-1] == "utterance"
    assert kinds.index("resumed", first_pause) < kinds.index("utterance")


def test_an_utterances_first_second_is_sent_once_while_it_is_spoken(speech_dir) -> None:
    """`speaking` (whisper finds the utterance's language in it) comes once, before the end."""
    audio, _ = paused_sentence(speech_dir)
    events = Segmenter(VadConfig()).feed(np.concatenate([audio, audio]))
    kinds = [e.kind for e in events]
    assert kinds.count("utterance") == 2 and kinds.count("speaking") == 2, kinds
    ends = [i for i, k in enumerate(kinds) if k == "utterance"]
    assert kinds.index("speaking") < ends[0] < kinds.index("speaking", ends[0]) < ends[1]
    first = next(e for e in events if e.kind == "speaking")
    whole = next(e for e in events if e.kind == "utterance")
    assert 1.0 <= len(first.audio) / RATE < len(whole.audio) / RATE
    assert np.array_equal(first.audio, whole.audio[: len(first.audio)])  # its start, as heard
    assert "speaking" not in [e.kind for e in Segmenter(VadConfig(language_ms=0)).feed(audio)]


def test_long_utterance_is_transcribed_in_pieces_cut_at_pauses(transcriber, speech_dir) -> None:
    phrase = "How do I make a cup of tea?"
    one = load16k(espeak(phrase, speech_dir / "tea.wav", wpm=140))
    gap = np.zeros(int(1.0 * RATE), np.float32)
    audio = np.concatenate([one, gap] * 12)  # ~ 40 s: more than whisper's 30 s window
    assert len(audio) / RATE > 30
    pieces = split_at_pauses(audio, transcriber.config.chunk_s)
    assert pieces[0][0] == 0 and pieces[-1][1] == len(audio)
    assert all(a == b for (_, a), (b, _) in itertools.pairwise(pieces))  # contiguous
    assert all(end - start <= transcriber.config.chunk_s * RATE for start, end in pieces)
    period = len(one) + len(gap)
    voiced = np.nonzero(np.abs(one) > 0.02)[0]
    for _, cut in pieces[:-1]:  # every cut falls in the silence between phrases
        assert not voiced[0] <= cut % period <= voiced[-1], (cut, cut % period, voiced[[0, -1]])
    result = transcriber.transcribe(audio)
    assert not result.rejected
    assert words(result.text).count("tea") >= 10  # the whole recording was transcribed


def test_split_at_pauses_short_audio_is_one_piece() -> None:
    assert split_at_pauses(np.zeros(3 * RATE, np.float32), 7.5) == [(0, 3 * RATE)]


def test_long_pauses_inside_a_clip_are_cut_short_and_its_ends_are_left() -> None:
    rng = np.random.default_rng(0)
    voice = lambda s: (0.1 * rng.standard_normal(int(s * RATE))).astype(np.float32)  # noqa: E731
    quiet = lambda s: (1e-4 * rng.standard_normal(int(s * RATE))).astype(np.float32)  # noqa: E731
    clip = np.concatenate([quiet(0.5), voice(1), quiet(1.0), voice(1), quiet(0.2), voice(0.5), quiet(0.8)])
    out = squeeze_pauses(clip, 300)
    assert len(clip) - len(out) == int(0.7 * RATE)  # only the 1 s pause, to 300 ms
    assert np.array_equal(out[: int(1.5 * RATE)], clip[: int(1.5 * RATE)])  # the head as it was
    assert np.array_equal(out[-int(1.7 * RATE) :], clip[-int(1.7 * RATE) :])  # 200 ms pause, tail kept
    assert squeeze_pauses(voice(0.2), 300).size == int(0.2 * RATE)


def test_a_long_pause_mid_sentence_does_not_end_what_whisper_hears(transcriber, speech_dir) -> None:
    """Given "What is the weather like in … [900 ms] … Paris today?" whole, whisper tiny stopped
    at "in?"; with the pause cut short it hears the sentence (bench/pauses.py: 12 → 3 of 36)."""
    head = load16k(espeak("What is the weather like in", speech_dir / "wx-a.wav", wpm=140))
    tail = load16k(espeak("Paris today?", speech_dir / "wx-b.wav", wpm=140))
    head = head[: np.nonzero(np.abs(head) > 0.01)[0][-1] + 1]
    audio = np.concatenate([head, np.zeros(int(0.9 * RATE), np.float32), tail])
    assert "paris" in transcriber.transcribe(audio).text.lower()


def test_transcribe_cli_formats_and_errors(speech_dir, tmp_path) -> None:
    wav = espeak("How do I make a cup of tea?", speech_dir / "cli.wav", wpm=140)
    audio = load16k(wav)
    flac, ogg = tmp_path / "tea.flac", tmp_path / "tea.ogg"
    sf.write(flac, soxr.resample(audio, RATE, 44100), 44100)
    sf.write(ogg, soxr.resample(audio, RATE, 48000), 48000, format="OGG", subtype="VORBIS")
    silent = tmp_path / "silence.wav"
    sf.write(silent, np.zeros(RATE * 2, np.float32), RATE)
    broken = tmp_path / "broken.wav"
    broken.write_bytes(b"RIFF0000WAVEjunk")
    empty = tmp_path / "header-only.wav"  # a valid 44-byte WAV header and no samples
    sf.write(empty, np.zeros(0, np.float32), RATE, subtype="PCM_16")
    files = [flac, broken, ogg, silent, empty]
    r = subprocess.run(
        [sys.executable, "-m", "app", "transcribe", "--json", *map(str, files)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert r.returncode == 1
    rows = [json.loads(x) for x in r.stdout.splitlines()]
    assert [Path(x["file"]).name for x in rows] == [f.name for f in files]
    for row in (rows[0], rows[2]):
        fields = {"file", "text", "duration_s", "transcribe_s", "prob", "rejected", "reason", "language"}
        assert set(row) == fields and row["language"] == "en"
        assert "tea" in row["text"].lower() and not row["rejected"]
    assert "error" in rows[1] and "broken.wav" in rows[1]["error"]
    assert rows[3]["rejected"] and rows[3]["reason"]
    assert rows[4]["rejected"] and rows[4]["reason"] == "too short" and "Traceback" not in r.stderr
    plain = subprocess.run(
        [sys.executable, "-m", "app", "transcribe", str(flac)], capture_output=True, text=True
    )
    assert plain.returncode == 0 and plain.stdout.count("\n") == 1 and "tea" in plain.stdout.lower()


def test_early_transcription_is_reused_only_when_nothing_followed(transcriber, speech_dir) -> None:
    from app.ears.early_transcription import EarlyTranscription

    a = load16k(espeak("Tell me something interesting", speech_dir / "early-a.wav", wpm=140))
    b = load16k(espeak("about the moon.", speech_dir / "early-b.wav", wpm=140))
    early = EarlyTranscription(transcriber)
    early.at_pause(a, end_sample=1000)
    first = early.final(a, end_sample=1000)  # the utterance ended at that pause: no second run
    assert early.reused == 1 and "interesting" in first.text.lower()
    early.at_pause(a, end_sample=1000)
    second = early.final(np.concatenate([a, b]), end_sample=2000)  # speech went on after it
    assert early.reused == 1 and len(words(second.text)) > len(words(first.text)) + 1


def test_early_transcription_is_aborted_when_speech_resumes(transcriber, speech_dir) -> None:
    """`resumed()` from another thread while whisper runs: whisper.cpp polls the abort callback,
    the stale result is dropped, and the final transcript is a fresh one."""
    import threading

    from app.ears.early_transcription import EarlyTranscription

    a = load16k(espeak("Please tell me a short joke about cats.", speech_dir / "early-c.wav", wpm=140))
    polls: list[bool] = []
    early = EarlyTranscription(transcriber, closing=lambda: polls.append(True) or False)
    run = threading.Thread(target=early.at_pause, args=(a, 500))
    run.start()
    while not polls and run.is_alive():  # whisper is running once it polls
        time.sleep(0.001)
    early.resumed()
    run.join(30)
    assert polls and not run.is_alive()
    result = early.final(a, end_sample=500)  # same end sample, but the early run was stale
    assert early.reused == 0 and "joke" in result.text.lower()


def test_a_prompt_that_named_the_assistant_names_the_new_one() -> None:
    named = SttConfig(Path("m.bin"), initial_prompt=names_prompt("Aria"))
    assert named.renamed("Aria", "Robin").initial_prompt == names_prompt("Robin")
    own = SttConfig(Path("m.bin"), initial_prompt="Glossary: Kubernetes, Grafana.")
    assert own.renamed("Aria", "Robin") is own  # the user's own prompt stays


class _Owner:
    def stop(self) -> bool:
        return False


def test_whisper_keeps_no_abort_callback_after_a_transcription(transcriber, speech_dir) -> None:
    """pywhispercpp stores the callback where Python's collector cannot see it: left there, it
    keeps whatever it refers to (the assistant, its models) alive for ever."""
    audio = load16k(espeak("How do I make a cup of tea?", speech_dir / "tea-abort.wav"))
    owner = _Owner()
    ref = weakref.ref(owner)
    assert "tea" in transcriber.transcribe(audio, abort=owner.stop).text.lower()
    del owner
    gc.collect()
    assert ref() is None
