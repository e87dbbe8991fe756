"""A natural (neural) voice: Piper's VITS models on onnxruntime, as PCM in memory.

The second synthesizer behind the voice stage's contract (synthesizer.py has the first): it
renders one text to a `Speech` (float32 PCM, its sample rate and where each written word starts)
and can be cancelled mid-synthesis. Piper (piper-tts) does the text → phonemes → ids work with
its own embedded espeak-ng; this module builds the onnxruntime session itself, because
`PiperVoice.load` takes default options: here its threads follow `app.system.cpu` (the cores
the rest of the machine leaves free, chosen when the voice loads and again when it is idle) and
never spin between calls (onnxruntime's default spins a core after each run).

Word timings come from the model's phoneme durations (onnx_alignment.py adds that output; the
catalog's voices are fetched patched) mapped onto the written words by word_timing.py. A voice
without the output still speaks; its words are then spread over the audio by their phonemes.

Threads: `render()` blocks for the synthesis (a 10-word sentence ~0.25 s on 2 cores) and holds
the voice's lock; `cancel()` from any thread ends a synthesis in progress within one model step
(RunOptions.terminate), and `render()` then raises `Cancelled`. One instance per model file,
shared (`NaturalSynthesizer.get`): a session costs ~140 MB.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from app.catalog.onnx_alignment import with_alignment_output
from app.system.cpu import FreeCores
from app.system.onnx_session import open_session
from app.voice.synthesizer import Speech, TtsUnavailable
from app.voice.word_timing import word_starts

log = logging.getLogger(__name__)
ESPEAK_WPM = 175  # the words per minute the app's rate setting counts from (espeak's default)
RETUNE_IDLE_S = 5.0
# Piper scales each chunk to a full-scale peak by default, so a chunk's loudness depends on its
# loudest sample ("Sure." and a long sentence differ by dBs) and the voice is ~2 dB louder than
# espeak's. The model's own output is steady (-21 to -23 dB RMS while voiced, peaks <= 0.65 on
# en_US-joe-medium): one fixed gain brings it to espeak's level (-18 dB), the level the echo
# guard and barge-in were measured at.
GAIN = 1.5  # the thread count is re-chosen only after the voice was idle this long


class Cancelled(RuntimeError):
    """`cancel()` ended the synthesis."""


@dataclass(frozen=True)
class VoiceFile:
    """A Piper voice on disk: the model and its JSON config (model path + ".json")."""

    model: Path

    @property
    def config(self) -> Path:
        return self.model.with_name(self.model.name + ".json")

    def describe(self) -> tuple[str, tuple[str, ...]]:
        """(display name, language codes) from the config; raises TtsUnavailable if unreadable."""
        try:
            cfg = json.loads(self.config.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise TtsUnavailable(f"{self.config} is missing or not a Piper voice config ({exc})") from exc
        lang = cfg.get("language", {})
        code = lang.get("code") or cfg.get("espeak", {}).get("voice", "")
        name = cfg.get("dataset") or self.model.stem
        quality = cfg.get("audio", {}).get("quality", "")
        native = lang.get("name_native", "")
        label = f"{name.title()} ({native or code}{', ' + quality if quality else ''})"
        return label, ((code.replace("_", "-"),) if code else ())


class _CancellableSession:
    """The onnxruntime session as Piper calls it (`run(None, feeds)`), with our RunOptions so
    that `cancel()` can terminate a run from another thread."""

    def __init__(self, session: Any) -> None:
        import onnxruntime

        self._ort = onnxruntime
        self.session = session
        self.options = onnxruntime.RunOptions()

    def run(self, output_names: Any, feeds: dict[str, Any]) -> Any:
        return self.session.run(output_names, feeds, self.options)

    def cancel(self) -> None:
        self.options.terminate = True

    def reset(self) -> None:
        self.options = self._ort.RunOptions()


class NaturalSynthesizer:
    """One Piper voice. Use `NaturalSynthesizer.get(model_path)`."""

    # A reply's first chunk ends after this many words when no clause ends sooner: Piper renders
    # a chunk whole, so its first audio waits for the whole first chunk (bench/voice_latency).
    first_chunk_words = 4

    _instances: ClassVar[dict[Path, NaturalSynthesizer]] = {}
    _instances_lock = threading.Lock()

    @classmethod
    def get(cls, model: Path) -> NaturalSynthesizer:
        """The shared synthesizer of `model` (loaded on first use; raises TtsUnavailable)."""
        key = model.resolve()
        with cls._instances_lock:
            if key not in cls._instances:
                cls._instances[key] = cls(VoiceFile(key))
            return cls._instances[key]

    def __init__(self, voice: VoiceFile) -> None:
        try:
            from piper import PiperVoice
            from piper.config import PiperConfig
        except Exception as exc:  # ImportError, or onnxruntime's shared library failing to load
            raise TtsUnavailable(f"natural voices need piper-tts and onnxruntime ({exc})") from exc
        self.file = voice
        self.name, self.languages = voice.describe()
        try:
            self._config = PiperConfig.from_dict(json.loads(voice.config.read_text(encoding="utf-8")))
        except (OSError, ValueError, KeyError) as exc:
            raise TtsUnavailable(f"{voice.model} is not a usable Piper voice ({exc})") from exc
        self.sample_rate = int(self._config.sample_rate)
        self._free = FreeCores()
        self._lock = threading.Lock()
        self.synthesizing = threading.Event()  # set while a render() is inside the model
        self._threads = 0
        self._last_use = 0.0
        self._session = self._open(self._free.threads())
        self._voice = PiperVoice(session=self._session, config=self._config)
        self.aligned = len(self._session.session.get_outputs()) > 1
        if not self.aligned:
            log.info("%s reports no phoneme durations: word timings are estimated", voice.model.name)

    def _open(self, threads: int) -> _CancellableSession:
        """A session with `threads` intra-op threads that do not spin. A model without the
        duration output gets it added in memory (when it has the usual tensor)."""
        started = time.perf_counter()
        try:
            model = self.file.model.read_bytes()
            session = open_session(model, threads, arena=False)
        except Exception as exc:  # OSError, or onnxruntime's on a damaged file
            raise TtsUnavailable(f"{self.file.model} could not be loaded ({exc})") from exc
        if len(session.get_outputs()) == 1:
            try:
                session = open_session(with_alignment_output(model), threads, arena=False)
            except Exception as exc:  # another exporter's tensor names: timings are estimated
                log.debug("no duration output added to %s: %s", self.file.model.name, exc)
        self._threads = threads
        log.info(
            "natural voice %s: %d thread(s), loaded in %.2f s",
            self.file.model.name,
            threads,
            time.perf_counter() - started,
        )
        return _CancellableSession(session)

    def _retune(self) -> None:
        """Between replies (idle a while): follow the cores now free, if that changed."""
        if time.monotonic() - self._last_use < RETUNE_IDLE_S:
            return
        wanted = self._free.threads()
        if wanted != self._threads:
            self._session = self._open(wanted)
            self._voice.session = self._session

    def render(self, text: str, rate: int | None = None, volume: float | None = None) -> Speech:
        """Blocking: the `Speech` of `text`; raises `Cancelled` when `cancel()` ended it."""
        from piper.config import SynthesisConfig

        if not text.strip():
            return Speech(text, np.zeros(0, dtype=np.float32), sample_rate=self.sample_rate)
        with self._lock:
            self._retune()
            self._session.reset()
            syn = SynthesisConfig(
                length_scale=self._config.length_scale * ESPEAK_WPM / rate if rate else None,
                normalize_audio=False,
                volume=GAIN * (1.0 if volume is None else float(volume)),
            )
            self.synthesizing.set()
            try:
                chunks = list(self._voice.synthesize(text, syn, include_alignments=self.aligned))
            except Exception as exc:
                if self._session.options.terminate:
                    raise Cancelled("synthesis cancelled") from None
                raise RuntimeError(f"natural voice synthesis failed: {exc}") from exc
            finally:
                self.synthesizing.clear()
                self._last_use = time.monotonic()
            spoken: list[tuple[str, int]] = []
            for chunk in chunks:
                if chunk.phoneme_alignments:
                    spoken += [(a.phoneme, int(a.num_samples)) for a in chunk.phoneme_alignments]
                else:  # no durations: spread the chunk's phonemes evenly over its audio
                    each = len(chunk.audio_float_array) / max(1, len(chunk.phonemes))
                    spoken += [(p, int(each)) for p in chunk.phonemes]
            pcm = (
                np.concatenate([c.audio_float_array for c in chunks]).astype(np.float32)
                if chunks
                else np.zeros(0, dtype=np.float32)
            )
            words = word_starts(text, spoken, self.phonemize)
        return Speech(text, pcm, words, sample_rate=self.sample_rate)

    def phonemize(self, text: str) -> list[str]:
        """The phonemes this voice speaks for `text` (its sentences joined), as Piper makes them."""
        return [p for sentence in self._voice.phonemize(text) for p in sentence]

    def cancel(self) -> None:
        """Any thread: end the synthesis in progress (if any) now."""
        self._session.cancel()
