"""Speech detection measured (issue #33 point 2): Silero VAD against WebRTC's VAD + energy floor,
and the combination the app uses hands-free (ears/vad.py `FrameClassifier` with the speech model),
on the same audio, with the Segmenter's fixed rules (120 ms of speech frames in a row start an
utterance, 400 ms without speech end it).

- Speech onsets and ends: the 12 PHRASES in espeak-ng's four English voices and the natural
  voice, each after 1.5 s of background (near silence, pink noise at 15 dB SNR, pink noise at
  5 dB SNR): missed onsets, the delay from the speech's first loud sample to the start,
  utterances split in two, and where the last speech frame falls against the speech's last
  loud sample (negative: the detector lost the tail; positive: it held on after the speech).
- False starts: 20 s of each noise kind alone (white, pink, brown, hum, keyboard-like clicks,
  music-like chords): utterances started per minute.
- CPU: microseconds per 20 ms of audio, one thread, in a quiet room and in pink noise.

Detectors: `webrtc+energy` (WebRTC AND the energy test), `silero` (P >= 0.5 on its 32 ms
windows; each 20 ms frame takes the latest window's decision), `silero gated` (Silero only on
frames above the absolute floor of -50 dBFS, so a quiet room costs nothing), `webrtc+energy or
silero gated` (either one hears speech: the app's), `silero+energy` (Silero AND the energy test).
Run: .venv/bin/python -m bench.vad   (the silero-vad model: `make models` fetches it)
"""

from __future__ import annotations

import os
import time

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import numpy as np

from bench.common import emit, pct
from tests.support.phrases import PHRASES
from tests.support.sounds import noise
from tests.support.speech import until_quiet
from tests.support.voices import available, speak

RATE = 16000
FRAME = 320
START_FRAMES = 6  # 120 ms (VadConfig.min_speech_ms)
LEAD_S = 1.5


def detectors() -> dict:
    """name -> a fresh per-frame speech decision."""
    from app.catalog.catalog import default_model_path
    from app.ears.silero import SPEECH_AT, SpeechModel
    from app.ears.vad import FrameClassifier, VadConfig, rms_db

    model = SpeechModel(default_model_path("vad"))

    def webrtc():
        return FrameClassifier(VadConfig())

    def silero():
        s = model.stream()
        return lambda f: s.probability(f) >= SPEECH_AT

    def silero_gated():
        """Silero only on frames above the absolute floor (-50 dBFS): a quiet room costs nothing."""
        s, floor = model.stream(), VadConfig().min_rms_db

        def decide(f: np.ndarray) -> bool:
            if rms_db(f) <= floor:
                s.reset()  # its state restarts with the next sound
                return False
            return s.probability(f) >= SPEECH_AT

        return decide

    def either():
        """The app's hands-free detector: WebRTC + energy OR gated Silero (vad.FrameClassifier
        with the speech model): WebRTC's quick onsets in quiet, Silero's in noise."""
        classifier = FrameClassifier(VadConfig())
        classifier.hear_with(model)
        return classifier

    def silero_energy():
        s, energy = model.stream(), FrameClassifier(VadConfig())

        def decide(f: np.ndarray) -> bool:
            loud, level = energy.loudness(f)
            speech = s.probability(f) >= SPEECH_AT and loud  # Silero hears every frame
            energy.follow(level, speech)
            return speech

        return decide

    return {
        "webrtc+energy": webrtc,
        "silero": silero,
        "silero gated": silero_gated,
        "webrtc+energy or silero gated": either,
        "silero+energy": silero_energy,
    }


def segments(decide, audio: np.ndarray) -> list[tuple[int, int]]:
    """(start frame, last speech frame) of each utterance: 120 ms of speech frames in a row start
    one, and, as the Segmenter's fixed rule, 400 ms without speech end it."""
    out: list[tuple[int, int]] = []
    run, quiet, start, last, in_speech = 0, 0, 0, 0, False
    for i in range(len(audio) // FRAME):
        speech = decide(audio[i * FRAME : (i + 1) * FRAME])
        if not in_speech:
            run = run + 1 if speech else 0
            if run >= START_FRAMES:
                start, last, in_speech, quiet = i, i, True, 0
        else:
            quiet = 0 if speech else quiet + 1
            last = i if speech else last
            if quiet >= 20:
                out.append((start, last))
                in_speech, run = False, 0
    if in_speech:
        out.append((start, last))
    return out


BACKGROUNDS = {"quiet": ("silence", None), "pink 15 dB": ("pink", 15.0), "pink 5 dB": ("pink", 5.0)}
NOISES = ("white", "pink", "brown", "hum", "keyboard", "music")


def main() -> None:
    rng = np.random.default_rng(7)
    voices = available()
    made = detectors()
    result: dict = {"voices": voices, "onsets": {}, "false_starts_per_min": {}, "us_per_20ms": {}}
    clips = [(v, until_quiet(speak(q, v))) for v in voices for q in PHRASES]
    for name, make in made.items():
        per_bg = {}
        for bg, (kind, snr) in BACKGROUNDS.items():
            missed, split, delays, ends = 0, 0, [], []
            for _voice, speech in clips:
                lead = noise(kind, LEAD_S + len(speech) / RATE + 1.0, rng)
                voice = np.zeros_like(lead)
                at = int(LEAD_S * RATE)
                level = np.sqrt(np.mean(speech**2))
                gain = 1.0 if snr is None else 10 ** (-30 / 20) * 10 ** (snr / 20) / level
                voice[at : at + len(speech)] = speech * gain
                loud = np.nonzero(np.abs(voice) > 0.01 * np.abs(voice).max())[0]
                found = [(s, e) for s, e in segments(make(), lead + voice) if (s + 1) * FRAME > at]
                if not found:
                    missed += 1
                    continue
                split += len(found) > 1
                delays.append(((found[0][0] + 1) * FRAME - loud[0]) * 1000 / RATE)
                ends.append(((found[-1][1] + 1) * FRAME - loud[-1]) * 1000 / RATE)
            per_bg[bg] = {
                "missed": f"{missed}/{len(clips)}",
                "split": f"{split}/{len(clips)}",
                "delay_ms_p50": round(pct(delays, 50)) if delays else None,
                "delay_ms_p90": round(pct(delays, 90)) if delays else None,
                "end_ms_p50": round(pct(ends, 50)) if ends else None,
                "end_ms_p90": round(pct(ends, 90)) if ends else None,
            }
        result["onsets"][name] = per_bg
        seconds = 20.0
        result["false_starts_per_min"][name] = {
            kind: round(len(segments(make(), noise(kind, seconds, rng))) * 60 / seconds, 1) for kind in NOISES
        }
        per = {}
        for kind in ("silence", "pink"):
            audio = noise(kind, 10.0, rng)
            decide = make()
            t0 = time.process_time()
            segments(decide, audio)
            per[kind] = round((time.process_time() - t0) / (len(audio) // FRAME) * 1e6)
        result["us_per_20ms"][name] = per
    emit("vad", result)


if __name__ == "__main__":
    main()
