"""Voice activity: per-frame speech decisions, hands-free utterance segmentation, a speech gate.

- `FrameClassifier`: WebRTC's VAD model (webrtcvad, a packaged model, offline) AND an energy test
  on high-pass filtered audio (talk-llama's `freq_thold` idea) above an adaptive noise floor, so
  hum, low noise and clicks do not count as speech; OR, once a speech model is given
  (`hear_with`: Silero, silero.py), that model on frames above the absolute floor, which still
  hears speech a few dB over steady noise, where the energy test loses it.
- `talk_llama_vad`: talk-llama's own end-of-speech rule (`vad_thold`, `freq_thold`, `last_ms`),
  kept for parity with its flags and used by the benchmark as the baseline.
- `Segmenter`: feed 16 kHz blocks; it reports `speech_started`, `pause` (after `pause_ms` of
  silence: the utterance so far, so whisper can start before the end is certain), `resumed`
  (speech again after a pause: that early transcript is stale) and, once
  `end_silence_ms` of non-speech follows speech, `utterance` (with pre-roll). Short pauses
  inside a sentence (below `end_silence_ms`) do not cut it. `set_end_silence` (any thread) sets
  another silence for the utterance as heard at a pause (the words rule, loop/turn_end.py).
  Single-threaded otherwise: call `feed` from one thread.
- `speech_stats` / `has_speech`: the gate in front of whisper that keeps silence and noise from
  ever becoming a turn (`speech_frames` per frame); `squeeze_pauses`: long silences inside a
  clip cut short before whisper.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import webrtcvad

from app.ears.silero import SPEECH_AT, SpeechModel, SpeechStream

RATE = 16000
FRAME = 320  # 20 ms


@dataclass
class VadConfig:
    vad_thold: float = 0.6  # talk-llama -vth: end when last energy <= vad_thold * utterance energy
    freq_thold: float = 100.0  # talk-llama -fth: high-pass cut-off (Hz)
    aggressiveness: int = 2  # webrtcvad 0..3
    min_speech_ms: int = 120  # speech this long starts an utterance
    end_silence_ms: int = 400  # this much non-speech after speech ends it (<= 500 ms target)
    preroll_ms: int = 250
    pause_ms: int = 20  # this much silence emits `pause` (lets whisper start early). One
    # frame: 40 ms cost ~25 ms of voice-to-voice (bench/latency), with the same transcripts;
    # whisper runs more often mid-sentence and is aborted when speech resumes
    max_utterance_s: float = 30.0
    # After this much of an utterance (from its start) comes `speaking`, once: enough for
    # whisper to tell its language, early enough that the detection is over before most
    # utterances end (bench/languages, voices of people: 700 ms found 26 of 30, 1 s 27 of 30
    # at up to 2.3x a set language's time after the end of speech, 700 ms at up to 1.26x)
    language_ms: int = 700
    min_rms_db: float = -50.0  # absolute floor: quieter frames are never speech
    snr_db: float = 9.0  # a speech frame must be this far above the noise floor
    # Hands-free: the speech model's file (silero.py; loaded by the stt thread, then given to
    # the Segmenter); None: WebRTC and the energy test alone.
    speech_model: Path | None = None


def _signal():
    """scipy.signal, imported on first use: it takes ~0.9 s, which the window's start must not
    wait for (the assistant's loading thread calls `prepare()`)."""
    import scipy.signal

    return scipy.signal


def prepare() -> None:
    """Import the filter library now (blocking; call from a worker thread at start-up)."""
    _signal()


def _highpass(cutoff: float) -> tuple[np.ndarray, np.ndarray]:
    """A 2nd-order Butterworth high-pass as (b, a): one section, so `lfilter` runs it exactly as
    `sosfilt` would (to ~1e-14) at a quarter of the per-call overhead (~15 vs ~60 us a block)."""
    b, a = _signal().butter(2, cutoff, btype="highpass", fs=RATE)
    return b, a


def frame_rms_db(frames: np.ndarray) -> np.ndarray:
    """Level in dB of each row of `frames` (rows are frames)."""
    return 20 * np.log10(np.sqrt(np.mean(np.square(frames, dtype=np.float64), axis=-1)) + 1e-10)


def rms_db(x: np.ndarray) -> float:
    return float(frame_rms_db(x))


class FrameClassifier:
    """Stateful per-20 ms-frame speech decision (filter state and noise floor carry over).
    One thread feeds it; `hear_with` may be called from any."""

    def __init__(self, config: VadConfig) -> None:
        self.config = config
        self._vad = webrtcvad.Vad(config.aggressiveness)
        self._ba: tuple[np.ndarray, np.ndarray] | None = None  # designed at the first frame
        self._zi: np.ndarray | None = None
        self.noise_db: float | None = None  # set from the first frame
        self._speech: SpeechStream | None = None  # the speech model's view of this stream

    def hear_with(self, model: SpeechModel | None) -> None:
        """From the next frame on, a frame is also speech when `model` says so (None: WebRTC
        and the energy test alone)."""
        self._speech = model.stream() if model is not None else None

    @property
    def with_model(self) -> bool:
        """A speech model is heard beside WebRTC's."""
        return self._speech is not None

    def filter(self, frame: np.ndarray) -> np.ndarray:
        if self.config.freq_thold <= 0:
            return frame
        if self._ba is None:
            self._ba = _highpass(self.config.freq_thold)
            self._zi = np.zeros(2)
        out, self._zi = _signal().lfilter(*self._ba, frame, zi=self._zi)
        return out

    def model(self, frame: np.ndarray) -> bool:
        """WebRTC VAD's decision alone."""
        pcm = (np.clip(frame, -1, 1) * 32767).astype("<i2").tobytes()
        return self._vad.is_speech(pcm, RATE)

    def loudness(self, frame: np.ndarray) -> tuple[bool, float]:
        """(loud enough to be speech, level in dB) of the high-passed frame against the floor."""
        level = rms_db(self.filter(frame))
        if self.noise_db is None:
            self.noise_db = level
        return level > max(self.config.min_rms_db, self.noise_db + self.config.snr_db), level

    def follow(self, level: float, speech: bool) -> None:
        """Noise floor: follows quieter frames fast, steady non-speech sound slowly, speech barely."""
        assert self.noise_db is not None
        rate = 0.002 if speech else (0.3 if level < self.noise_db else 0.05)
        self.noise_db += rate * (level - self.noise_db)

    def __call__(self, frame: np.ndarray) -> bool:
        return self.frames(frame.reshape(1, -1))[0]

    def frames(self, frames: np.ndarray) -> list[bool]:
        """Consecutive frames (rows) at once: the same decisions as one call each, with one
        filter pass and one level computation for all of them (an idle microphone's cost)."""
        levels = frame_rms_db(self.filter(frames.reshape(-1)).reshape(frames.shape))
        out: list[bool] = []
        c = self.config
        speech_model = self._speech
        raw = frame_rms_db(frames).tolist() if speech_model is not None else []  # the model's gate
        for i, (frame, level) in enumerate(zip(frames, levels.tolist(), strict=True)):
            if self.noise_db is None:
                self.noise_db = level
            speech = level > max(c.min_rms_db, self.noise_db + c.snr_db) and self.model(frame)
            self.follow(level, speech)  # the floor follows WebRTC and the energy test alone
            if speech_model is not None:
                speech = self._model_hears(speech_model, frame, raw[i]) or speech
            out.append(speech)
        return out

    def _model_hears(self, stream: SpeechStream, frame: np.ndarray, level: float) -> bool:
        """The speech model's decision on a frame above the absolute floor (below it the model
        is not run, so a quiet room costs nothing, and its state restarts with the next sound)."""
        if level <= self.config.min_rms_db:
            stream.reset()
            return False
        return stream.probability(frame) >= SPEECH_AT


def talk_llama_vad(pcm: np.ndarray, last_ms: int, vad_thold: float, freq_thold: float) -> bool:
    """talk-llama's `vad_simple`: True when the last `last_ms` are quiet relative to the whole."""
    n_last = RATE * last_ms // 1000
    if n_last >= len(pcm):
        return False
    if freq_thold > 0:
        pcm = _signal().lfilter(*_highpass(freq_thold), pcm)
    energy_all = float(np.mean(np.abs(pcm)))
    energy_last = float(np.mean(np.abs(pcm[-n_last:])))
    return energy_last <= vad_thold * energy_all


@dataclass
class SegmentEvent:
    kind: str  # speech_started | speaking | pause | resumed | utterance | capped
    audio: np.ndarray = field(default_factory=lambda: np.zeros(0, np.float32))
    end_sample: int = 0  # absolute sample index where speech ended (for latency measurement)


class Segmenter:
    """Hands-free utterance segmentation over a stream of 16 kHz blocks."""

    def __init__(self, config: VadConfig | None = None, base_end_ms: int | None = None) -> None:
        """`base_end_ms`: the silence that ends an utterance until a rule sets another
        (`set_end_silence`); default the config's `end_silence_ms`."""
        self.config = config or VadConfig()
        self.classify = FrameClassifier(self.config)
        self._pending = np.zeros(0, np.float32)
        self._history: list[np.ndarray] = []  # pre-roll frames while idle
        self._utt: list[np.ndarray] = []
        self._speech_run = 0
        self._silence_run = 0
        self._in_speech = False
        self._spoken_frames = 0  # frames since the utterance started (until `speaking` is sent)
        self.base_end_ms = self.config.end_silence_ms if base_end_ms is None else base_end_ms
        self.hold_open = False  # push-to-talk: silence never ends the utterance (the key does)
        self._end_rule: tuple[int, int] | None = None  # (speech end sample, silence ms)
        self._sample = 0
        self._last_speech_end = 0

    def hear_with(self, model: SpeechModel | None) -> None:
        """Any thread: judge frames with this speech model too from the next block on."""
        self.classify.hear_with(model)

    @property
    def position(self) -> int:
        """Samples processed so far (the clock of `SegmentEvent.end_sample`)."""
        return self._sample

    def set_end_silence(self, ms: int, after_sample: int) -> None:
        """Any thread: `ms` of silence ends the utterance whose speech ended at `after_sample`
        (a `pause` event's end_sample); it lapses as soon as more speech comes."""
        self._end_rule = (after_sample, ms)

    def _end_silence_ms(self) -> int:
        rule = self._end_rule
        if rule is not None and rule[0] == self._last_speech_end:
            return rule[1]
        return self.base_end_ms

    @property
    def in_speech(self) -> bool:
        """An utterance is under way (speech started and has not ended)."""
        return self._in_speech

    @property
    def paused_at(self) -> int:
        """Where the speech ended if it has been silent for a `pause` since, else -1: the
        `end_sample` of the pause whose early transcript is still the whole utterance."""
        frames = self.config.pause_ms * RATE // 1000 // FRAME
        if self._in_speech and self.config.pause_ms and self._silence_run >= frames:
            return self._last_speech_end
        return -1

    def reset(self) -> None:
        self._history.clear()
        self._utt.clear()
        self._speech_run = self._silence_run = 0
        self._in_speech = False

    def feed(self, block: np.ndarray) -> list[SegmentEvent]:
        """Process samples; returns the events they complete, in order (the caller handles them)."""
        events: list[SegmentEvent] = []
        data = np.concatenate([self._pending, block]) if len(self._pending) else block
        n = len(data) // FRAME * FRAME
        self._pending = data[n:].copy()
        if n == 0:
            return events
        frames = data[:n].reshape(-1, FRAME)
        for frame, speech in zip(frames, self.classify.frames(frames), strict=True):
            ev = self._frame(frame, speech)
            if ev is not None:
                events.append(ev)
        return events

    def _frame(self, frame: np.ndarray, speech: bool) -> SegmentEvent | None:
        c = self.config
        self._sample += FRAME
        frame_ms = 1000 * FRAME // RATE
        if not self._in_speech:
            self._history.append(frame)
            keep = (c.preroll_ms + c.min_speech_ms) // frame_ms + 1
            del self._history[:-keep]
            self._speech_run = self._speech_run + 1 if speech else 0
            if self._speech_run * frame_ms >= c.min_speech_ms:
                self._in_speech = True
                self._utt = list(self._history)
                self._silence_run = self._spoken_frames = 0
                return SegmentEvent("speech_started")
            return None
        self._utt.append(frame)
        if speech:
            resumed = c.pause_ms and self._silence_run >= c.pause_ms // frame_ms
            self._silence_run = 0
            self._last_speech_end = self._sample
            if resumed:
                return SegmentEvent("resumed")
        else:
            self._silence_run += 1
        if not self.hold_open and self._silence_run * frame_ms >= self._end_silence_ms():
            return self._close("utterance")
        if c.pause_ms and self._silence_run == c.pause_ms // frame_ms:
            return SegmentEvent("pause", np.concatenate(self._utt), self._last_speech_end)
        if len(self._utt) * frame_ms >= c.max_utterance_s * 1000:
            return self._close("capped")
        return self._speaking(frame_ms)

    def _speaking(self, frame_ms: int) -> SegmentEvent | None:
        """`speaking` (the utterance so far) once it has gone on `language_ms`; on a frame
        that sends nothing else."""
        if not self.config.language_ms or self._spoken_frames < 0:
            return None
        self._spoken_frames += 1
        if self._spoken_frames * frame_ms < self.config.language_ms:
            return None
        self._spoken_frames = -1  # sent
        return SegmentEvent("speaking", np.concatenate(self._utt), self._last_speech_end)

    def _close(self, kind: str) -> SegmentEvent:
        audio = np.concatenate(self._utt)
        self._utt, self._history = [], []
        self._in_speech = False
        self._speech_run = 0
        return SegmentEvent(kind, audio, self._last_speech_end)


@dataclass(frozen=True)
class SpeechStats:
    speech_ms: int  # frames called speech, together
    total_ms: int
    peak_db: float
    rms_db: float
    span_ms: int = 0  # from the first frame called speech to the last (the talking, with its gaps)

    @property
    def near_silent(self) -> bool:
        return self.speech_ms < 200 or self.rms_db < -45


def speech_stats(audio: np.ndarray, config: VadConfig | None = None) -> SpeechStats:
    """How much of a whole clip is speech: frames the WebRTC model calls speech whose
    high-passed level is `snr_db` above the clip's own noise floor (10th percentile level)."""
    return stats_from(audio, speech_frames(audio, config))


def stats_from(audio: np.ndarray, speech: np.ndarray) -> SpeechStats:
    """`speech_stats` from the clip's `speech_frames` (computed once, used twice by whisper's gate)."""
    if len(audio) < FRAME:
        return SpeechStats(0, 0, -200.0, -200.0)
    peak = float(20 * np.log10(np.max(np.abs(audio)) + 1e-10))
    said = np.flatnonzero(speech)
    span = int(said[-1] - said[0] + 1) * 20 if len(said) else 0
    return SpeechStats(int(speech.sum()) * 20, len(speech) * 20, peak, rms_db(audio), span)


def speech_frames(audio: np.ndarray, config: VadConfig | None = None) -> np.ndarray:
    """Per 20 ms frame of a whole clip: is it speech? (The WebRTC model says so and its
    high-passed level is `snr_db` above the clip's own noise floor, its 10th percentile.)"""
    c = config or VadConfig()
    cls = FrameClassifier(c)
    n = len(audio) // FRAME * FRAME
    if n == 0:  # less than a frame (a WAV header with no samples): nothing is speech
        return np.zeros(0, dtype=bool)
    frames = audio[:n].reshape(-1, FRAME)
    levels = frame_rms_db(cls.filter(audio[:n]).reshape(-1, FRAME))  # one pass: as frame by frame
    thresh = max(c.min_rms_db, float(np.percentile(levels, 10)) + c.snr_db)
    return np.array([lv > thresh and cls.model(f) for f, lv in zip(frames, levels, strict=True)], dtype=bool)


def squeeze_pauses(
    audio: np.ndarray,
    keep_ms: int = 300,
    config: VadConfig | None = None,
    longer_than_ms: int = 500,
    speech: np.ndarray | None = None,
) -> np.ndarray:
    """`audio` with every pause between words longer than `longer_than_ms` cut to `keep_ms`
    (its middle removed; the head and tail of the clip, and shorter pauses, untouched). Whisper
    tiny, given "What is the weather like in … [600 ms] … Paris today?" whole, stopped at "in?":
    a long pause reads as the end. A pause is a run of frames that are not speech as
    `speech_frames` judges it between two that are. Clicks in noise 333 ms apart turned into
    "(cl cl cl …)" once their gaps were cut by a few ms, hence only pauses that read as an end
    are touched. `speech`: the clip's `speech_frames`, when the caller has them already."""
    frame_ms = 1000 * FRAME // RATE
    keep, longer = keep_ms // frame_ms, max(keep_ms, longer_than_ms) // frame_ms
    if len(audio) // FRAME <= longer:
        return audio
    spans, start = [], None  # [first, last) runs of frames without speech between speech
    for i, is_loud in enumerate(speech if speech is not None else speech_frames(audio, config)):
        if not is_loud and start is None:
            start = i
        elif is_loud and start is not None:
            if start > 0 and i - start > longer:
                spans.append((start, i))
            start = None
    if not spans:
        return audio
    parts, at = [], 0
    for first, last in spans:
        cut_from = (first + keep // 2) * FRAME
        cut_to = (last - (keep - keep // 2)) * FRAME
        parts.append(audio[at:cut_from])
        at = cut_to
    parts.append(audio[at:])
    return np.concatenate(parts)
