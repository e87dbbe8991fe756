"""Speech synthesis with pyttsx3, as PCM in memory (no files, no aplay, no runAndWait).

pyttsx3 2.99 on Linux drives libespeak-ng, but its own output path writes a temp WAV and shells
out to `aplay`, its `stop()` cannot interrupt, its first `runAndWait()` returns early and
`save_to_file` is sticky. We use pyttsx3 for what it does well (the engine, voice list, voice /
rate / volume properties) and take the audio from its espeak binding directly: our callback
collects the PCM of each sentence and espeak's word events (where each word starts in the text
and in the audio), and signals completion. The `Speaker` (speaker.py) plays it and, when stopped,
tells how far into the sentence the listener got.

Thread-safety: espeak has one synthesis callback per process, so `Synthesizer` is a process-wide
singleton guarded by a lock; `synthesize()` blocks for the synthesis (~10 ms for a sentence here).
"""

from __future__ import annotations

import ctypes
import itertools
import logging
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from app.catalog.languages import LANGUAGES
from app.voice import mbrola_voices

log = logging.getLogger(__name__)

ESPEAK_RATE = 22050  # espeak-ng's native output rate for its own voices


class TtsUnavailable(RuntimeError):
    """No TTS engine or no voice; the message says what to install."""


@dataclass(frozen=True)
class Voice:
    """A voice either engine offers (voices.py lists both): `id` is what settings and `--voice`
    store; `model` is a natural voice's file."""

    id: str
    name: str
    languages: tuple[str, ...]
    engine: str = "system"  # system (espeak-ng) | natural (Piper)
    model: Path | None = None


@dataclass(frozen=True)
class Speech:
    """One synthesized text: PCM float32 mono at `sample_rate`, and where each word starts as
    (character offset in `text`, sample offset in `pcm`), in order."""

    text: str
    pcm: np.ndarray
    words: tuple[tuple[int, int], ...] = ()
    sample_rate: int = ESPEAK_RATE

    def heard(self, samples_played: int) -> str:
        """The text up to the last word whose sound had started after `samples_played` samples
        (the whole text once every word has started; "" before the first). espeak's positions
        are approximate after non-ASCII letters, so the cut snaps back to a space."""
        started = sum(1 for _char, sample in self.words if sample < samples_played)
        if started == len(self.words):
            return self.text.strip() if samples_played > 0 else ""
        chars = [char for char, _sample in self.words]
        if any(b <= a for a, b in itertools.pairwise(chars)) or chars[-1] >= len(self.text):
            # positions unusable (seen once in a long test run): count words instead
            return " ".join(self.text.split()[:started])
        cut = chars[started]
        while 0 < cut < len(self.text) and not self.text[cut - 1].isspace():
            cut -= 1
        return self.text[:cut].strip()


class Synthesizer:
    """pyttsx3-configured espeak-ng synthesis to float32 PCM. Use `Synthesizer.get()`."""

    _instance: Synthesizer | None = None
    _instance_lock = threading.Lock()

    @classmethod
    def get(cls) -> Synthesizer:
        with cls._instance_lock:
            if cls._instance is None:
                cls._instance = cls()
            return cls._instance

    def __init__(self) -> None:
        try:
            import pyttsx3
            from pyttsx3.drivers import _espeak
        except Exception as exc:  # OSError when libespeak-ng is missing
            raise TtsUnavailable(f"pyttsx3/espeak-ng unavailable ({exc}); install espeak-ng") from exc
        try:
            self._engine = pyttsx3.init("espeak")
        except Exception as exc:
            raise TtsUnavailable(f"pyttsx3 could not start espeak-ng ({exc}); install espeak-ng") from exc
        self._espeak = _espeak
        self.voices = [
            Voice(v.id, v.name, tuple(str(x) for x in (v.languages or ())))
            for v in self._engine.getProperty("voices")
        ]
        if not self.voices:
            raise TtsUnavailable("espeak-ng has no voices; install espeak-ng-data")
        data = self._data_dir()
        self._mbrola = mbrola_voices.installed(data) if data else []
        self._own = list(self.voices)  # espeak-ng's own voices (a language's fallback)
        self.voices += [Voice(v.id, v.name, v.languages) for v in self._mbrola]
        self._rates = {v.id.lower(): v.rate for v in self._mbrola}  # the rest speak at ESPEAK_RATE
        self._by_id = {v.id.lower(): v for v in self.voices}
        self._found: dict[str, Voice] = {}  # find_voice's answers
        self.sample_rate = ESPEAK_RATE  # espeak-ng's own voices' (an MBROLA voice's: rate_of)
        self._lock = threading.RLock()  # (find_voice takes it, also from inside render)
        self._chunks: list[bytes] = []
        self._words: list[tuple[int, int]] = []  # (character position from 1, sample)
        self._done = threading.Event()
        self._cancelled = False
        _espeak.SetSynthCallback(self._on_synth)
        # what a render that names no voice, rate or volume speaks with: espeak-ng's as opened
        self._default = (
            self.current_voice(),
            _espeak.GetParameter(_espeak.RATE),
            _espeak.GetParameter(_espeak.VOLUME),
        )

    def _data_dir(self) -> Path | None:
        """espeak-ng's data folder (where its voice files are), None when it does not say."""
        try:
            info = self._espeak.dll.espeak_Info
            info.restype = ctypes.c_char_p
            path = ctypes.c_char_p()
            info(ctypes.byref(path))
            return Path(path.value.decode()) if path.value else None
        except (AttributeError, OSError, UnicodeDecodeError):
            return None

    def _apply(self, voice: str | None, rate: int | None, volume: float | None) -> None:
        """Set espeak-ng's voice, rate (words per minute) and volume (0-1) now, each None: as
        espeak-ng was opened (one engine's settings never carry over to another's), through its
        binding: pyttsx3's `setProperty` only queues them for its own event loop, which this
        class never runs (through it, every sentence was said by the default voice at 200 wpm)."""
        es = self._espeak
        default_voice, default_rate, default_volume = self._default
        wanted = self.find_voice(voice).id if voice else default_voice
        changes = wanted and wanted.lower() != self.current_voice()  # (loading one takes ~ms)
        if changes and es.SetVoiceByName(wanted.encode()) != 0:
            raise RuntimeError(f"espeak-ng could not load the voice {wanted!r}")
        es.SetParameter(es.RATE, int(rate) if rate else default_rate, 0)
        es.SetParameter(es.VOLUME, round(float(volume) * 100) if volume is not None else default_volume, 0)

    def current_voice(self) -> str:
        """The id of the voice espeak-ng speaks with now (lower case)."""
        now = self._espeak.GetCurrentVoice()
        if not now or not now.contents.identifier:
            return ""
        return str(now.contents.identifier.decode(errors="replace").lower())

    def rate_of(self, voice: str | None = None) -> int:
        """The sample rate `voice` speaks at (None: the voice set now): MBROLA voices speak at
        their database's rate, espeak-ng's own at ESPEAK_RATE."""
        current = self.find_voice(voice).id if voice else self.current_voice()
        return self._rates.get(current.lower(), ESPEAK_RATE)

    def _on_synth(self, wav: ctypes.c_void_p, numsamples: int, events: Any) -> int:
        """espeak's thread: collect samples and word starts; return 1 to abort when cancelled."""
        if numsamples > 0 and wav:
            self._chunks.append(ctypes.string_at(wav, numsamples * 2))
        i = 0
        while (kind := events[i].type) != self._espeak.EVENT_LIST_TERMINATED:
            if kind == self._espeak.EVENT_WORD:
                self._words.append((events[i].text_position, events[i].sample))
            elif kind == self._espeak.EVENT_MSG_TERMINATED:
                self._done.set()
            i += 1
        return 1 if self._cancelled else 0

    def find_voice(self, spec: str) -> Voice:
        """A voice by id, name or language code (case-insensitive). For a language other than
        English, an installed MBROLA voice comes first (made from a person's recorded diphones:
        far better heard than espeak-ng's own, mbrola_voices.py), then espeak-ng's own choice
        before the first voice listed for it ("fr": France's French voice, not Belgium's; "zh":
        Mandarin, which pyttsx3 lists as `cmn` only)."""
        s = spec.lower()
        if s not in self._found:
            self._found[s] = self._match(s)
        return self._found[s]

    def _match(self, s: str) -> Voice:
        def first(match: Any, voices: list[Voice] = self.voices) -> Voice | None:
            return next((v for v in voices if match(v)), None)

        by_name = (lambda v: v.id.lower() == s, lambda v: v.name.lower() == s)
        by_language = lambda v: any(lang.lower() == s for lang in v.languages)  # noqa: E731
        loose = (
            lambda v: any(lang.lower().split("-")[0] == s for lang in v.languages),
            lambda v: s in v.name.lower(),
        )
        for match in by_name:  # an id or a name, of any voice
            if found := first(match):
                return found
        # A language: MBROLA's voice for it, if any (not English: its fallback behind the
        # natural voice stays the voice the echo guard and barge-in were measured with) ...
        person = mbrola_voices.for_language(self._mbrola, s) if s in LANGUAGES and s != "en" else None
        if person is not None:
            return self._by_id[person.id.lower()]
        if found := first(by_language, self._own):  # ... else one of espeak-ng's own
            return found
        if s in LANGUAGES and (chosen := self._espeak_choice(s)):  # (espeak matches loosely)
            return self._by_id[chosen[0]]
        for match in loose:
            if found := first(match, self._own):
                return found
        raise ValueError(f"no voice matches {s!r}; see `talk-llama say --list-voices`")

    def _espeak_choice(self, language: str) -> list[str]:
        """espeak-ng's own voices for `language`, best first (lower-case ids). Its voice files
        name more languages than the one pyttsx3 lists: Mandarin's `cmn` also speaks whisper's
        `zh`. Only voices pyttsx3 lists (an MBROLA voice it lists without its data is not)."""
        spec = self._espeak.VOICE()
        spec.languages = language.encode("ascii", "ignore")
        with self._lock:
            found = self._espeak.ListVoices(ctypes.byref(spec))
        ids = [(v.identifier or b"").decode(errors="replace").lower() for v in found]
        return [i for i in ids if i in self._by_id]

    def synthesize(
        self, text: str, voice: str | None = None, rate: int | None = None, volume: float | None = None
    ) -> np.ndarray:
        """Blocking: PCM float32 mono at `rate_of(voice)` for `text` (empty array for empty text)."""
        return self.render(text, voice, rate, volume).pcm

    def render(
        self,
        text: str,
        voice: str | None = None,
        rate: int | None = None,
        volume: float | None = None,
        timeout: float = 30.0,
    ) -> Speech:
        """Blocking: the `Speech` of `text` (PCM at `sample_rate` and its word starts)."""
        if not text.strip():
            return Speech(text, np.zeros(0, dtype=np.float32))
        with self._lock:
            self._apply(voice, rate, volume)
            sample_rate = self.rate_of()
            self._chunks, self._words, self._cancelled = [], [], False
            self._done.clear()
            data = text.encode("utf-8")
            # pyttsx3's Synth() passes size=len*10, and espeak copies `size` bytes (an over-read
            # of the Python buffer); call espeak_Synth with the real size (text + NUL) instead.
            err = self._espeak.cSynth(
                data,
                len(data) + 1,
                0,
                self._espeak.POS_CHARACTER,
                0,
                self._espeak.ENDPAUSE | self._espeak.CHARS_UTF8,
                None,
                None,
            )
            if err not in (0, None):
                raise RuntimeError(f"espeak-ng synthesis failed (error {err})")
            if not self._done.wait(timeout):
                self._cancelled = True
                raise RuntimeError("espeak-ng synthesis timed out")
            pcm = b"".join(self._chunks)
            words = tuple((max(0, pos - 1), sample) for pos, sample in self._words)
        return Speech(text, np.frombuffer(pcm, dtype="<i2").astype(np.float32) / 32768.0, words, sample_rate)


def list_voices() -> list[Voice]:
    return Synthesizer.get().voices
