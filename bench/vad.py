"""Speech detection measured (issue #33 point 2): Silero VAD against today's WebRTC VAD + energy
floor (ears/vad.py `FrameClassifier`), on the same audio, with the Segmenter's start rule (120 ms
of speech frames in a row starts an utterance).

- Speech onsets: the 12 PHRASES in espeak-ng's four English voices and the natural voice, each
  after 1.5 s of background (near silence, pink noise at 15 dB SNR, pink noise at 5 dB SNR):
  missed onsets, and the delay from the speech's first loud sample to the start.
- False starts: 20 s of each noise kind alone (white, pink, brown, hum, keyboard-like clicks,
  music-like chords): utterances started per minute.
- CPU: microseconds per 20 ms of audio, one thread, in a quiet room and in pink noise.

Detectors: `webrtc+energy` (today), `silero` (P >= 0.5 on its 32 ms windows; each 20 ms frame
takes the latest window's decision), `silero gated` (Silero only on frames above the absolute
floor of -50 dBFS, so a quiet room costs nothing), `webrtc+energy or silero gated` (either one
hears speech), `silero+energy` (Silero AND today's energy
test).
Run: .venv/bin/python -m bench.vad   (needs the silero-vad model: talk-llama models fetch silero-vad)
"""

from __future__ import annotations

import os
import time

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import numpy as np

from bench.common import emit, pct, until_quiet
from bench.phrases import PHRASES
from bench.voices import available, speak

RATE = 16000
FRAME = 320
START_FRAMES = 6  # 120 ms (VadConfig.min_speech_ms)
LEAD_S = 1.5


class Silero:
    """Silero VAD v5 on 512-sample windows (with its 64-sample context), one thread."""

    WINDOW, CONTEXT = 512, 64

    def __init__(self) -> None:
        from app.catalog.catalog import check_file, find_entry, models_dir
        from app.system.onnx_session import open_session

        path = models_dir() / find_entry("silero-vad").file
        check_file(path, "vad")
        self._session = open_session(path, threads=1)
        self.reset()

    def reset(self) -> None:
        self._state = np.zeros((2, 1, 128), np.float32)
        self._context = np.zeros((1, self.CONTEXT), np.float32)
        self._pending = np.zeros(0, np.float32)
        self.last = 0.0

    def __call__(self, frame: np.ndarray) -> float:
        """Feed a frame; the speech probability of the latest complete window."""
        self._pending = np.concatenate([self._pending, frame.astype(np.float32)])
        while len(self._pending) >= self.WINDOW:
            x = np.concatenate([self._context, self._pending[None, : self.WINDOW]], axis=1)
            self._pending = self._pending[self.WINDOW :]
            out, self._state = self._session.run(
                None, {"input": x, "state": self._state, "sr": np.array(RATE, np.int64)}
            )
            self._context = x[:, -self.CONTEXT :]
            self.last = float(out.reshape(-1)[0])
        return self.last


def detectors() -> dict:
    """name -> a fresh per-frame speech decision."""
    from app.ears.vad import FrameClassifier, VadConfig, rms_db

    def webrtc():
        return FrameClassifier(VadConfig())

    def silero():
        s = Silero()
        return lambda f: s(f) >= 0.5

    def silero_gated():
        """Silero only on frames above the absolute floor (-50 dBFS): a quiet room costs nothing."""
        s, floor = Silero(), VadConfig().min_rms_db

        def decide(f: np.ndarray) -> bool:
            if rms_db(f) <= floor:
                s.reset()  # its state restarts with the next sound
                return False
            return s(f) >= 0.5

        return decide

    def either():
        """Today's detector OR gated Silero: WebRTC's quick onsets in quiet, Silero's in noise."""
        w, g = webrtc(), silero_gated()
        return lambda f: bool(w(f)) | bool(g(f))

    def silero_energy():
        s, energy = Silero(), FrameClassifier(VadConfig())

        def decide(f: np.ndarray) -> bool:
            loud, level = energy.loudness(f)
            speech = s(f) >= 0.5 and loud  # Silero hears every frame (its state stays whole)
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


def starts(decide, audio: np.ndarray) -> list[int]:
    """Frames where an utterance starts (120 ms of speech frames in a row), with the Segmenter's
    rule that an utterance ends after 400 ms without speech."""
    out, run, quiet, in_speech = [], 0, 0, False
    for i in range(len(audio) // FRAME):
        speech = decide(audio[i * FRAME : (i + 1) * FRAME])
        if not in_speech:
            run = run + 1 if speech else 0
            if run >= START_FRAMES:
                out.append(i)
                in_speech, quiet = True, 0
        else:
            quiet = 0 if speech else quiet + 1
            if quiet >= 20:
                in_speech, run = False, 0
    return out


def noise(kind: str, seconds: float, rng: np.random.Generator) -> np.ndarray:
    """Background sound of `kind`, RMS -30 dBFS (silence: -70 dBFS)."""
    n = int(seconds * RATE)
    t = np.arange(n) / RATE
    if kind == "silence":
        x = rng.standard_normal(n) * 1e-4
    elif kind in ("white", "pink", "brown"):
        spectrum = np.fft.rfft(rng.standard_normal(n))
        f = np.maximum(np.fft.rfftfreq(n, 1 / RATE), 1.0)
        spectrum /= {"white": 1.0, "pink": np.sqrt(f), "brown": f}[kind]
        x = np.fft.irfft(spectrum, n)
    elif kind == "hum":
        x = sum(np.sin(2 * np.pi * 50 * k * t) / k for k in range(1, 8))
    elif kind == "keyboard":
        x = np.zeros(n)
        for at in np.cumsum(rng.exponential(RATE / 7, size=int(seconds * 10))).astype(int):
            if at + 400 < n:
                x[at : at + 400] += rng.standard_normal(400) * np.exp(-np.arange(400) / 60)
    elif kind == "music":
        x = np.zeros(n)
        notes = (220.0, 261.6, 329.6, 392.0, 440.0, 523.3)
        for start in range(0, n, RATE // 2):
            chord = rng.choice(notes, 3, replace=False)
            seg = t[start : start + RATE // 2]
            vibrato = 1 + 0.004 * np.sin(2 * np.pi * 5 * seg)
            x[start : start + RATE // 2] = sum(np.sin(2 * np.pi * f0 * seg * vibrato) for f0 in chord)
    else:
        raise ValueError(kind)
    x = np.asarray(x, np.float64)
    level_db = -70 if kind == "silence" else -30
    return (x / (np.sqrt(np.mean(x**2)) + 1e-12) * 10 ** (level_db / 20)).astype(np.float32)


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
            missed, delays = 0, []
            for _voice, speech in clips:
                lead = noise(kind, LEAD_S + len(speech) / RATE + 0.5, rng)
                voice = np.zeros_like(lead)
                at = int(LEAD_S * RATE)
                level = np.sqrt(np.mean(speech**2))
                gain = 1.0 if snr is None else 10 ** (-30 / 20) * 10 ** (snr / 20) / level
                voice[at : at + len(speech)] = speech * gain
                loud = np.nonzero(np.abs(voice) > 0.01 * np.abs(voice).max())[0][0]
                found = [s for s in starts(make(), lead + voice) if (s + 1) * FRAME > at]
                if not found:
                    missed += 1
                else:
                    delays.append(((found[0] + 1) * FRAME - loud) * 1000 / RATE)
            per_bg[bg] = {
                "missed": f"{missed}/{len(clips)}",
                "delay_ms_p50": round(pct(delays, 50)) if delays else None,
                "delay_ms_p90": round(pct(delays, 90)) if delays else None,
            }
        result["onsets"][name] = per_bg
        seconds = 20.0
        result["false_starts_per_min"][name] = {
            kind: round(len(starts(make(), noise(kind, seconds, rng))) * 60 / seconds, 1) for kind in NOISES
        }
        per = {}
        for kind in ("silence", "pink"):
            audio = noise(kind, 10.0, rng)
            decide = make()
            t0 = time.process_time()
            starts(decide, audio)
            per[kind] = round((time.process_time() - t0) / (len(audio) // FRAME) * 1e6)
        result["us_per_20ms"][name] = per
    emit("vad", result)


if __name__ == "__main__":
    main()
