"""Voices for benchmarks and tests: espeak-ng voices always, and the app's natural voice (Piper's
en_US-joe-medium, the catalog's `joe`) when it is fetched (natural voices sound like people; a
rule tuned on espeak alone is tuned on one synthesizer); in other languages, `ClipVoice`s.

espeak-ng's formant voices are far from a person's: whisper base heard its French, German and
Russian questions with 42-86% word errors and found their language in 1-3 of 5, so numbers
measured on them say more about espeak-ng than about the app. Debian packages voices made from
recordings of people, which whisper hears much as it hears a person:

- MBROLA diphone voices (`mbrola`, `mbrola-us2`, `mbrola-fr1`, `mbrola-de6`, `mbrola-es1`;
  contrib and non-free), spoken through espeak-ng (`-v mb-fr1`): espeak-ng writes the phonemes, MBROLA
  joins recorded diphones;
- RHVoice (`rhvoice`, `rhvoice-russian`; non-free), a statistical parametric voice trained on
  a speaker (Russian: anna);
- Open JTalk (`open-jtalk`, `open-jtalk-mecab-naist-jdic`, `hts-voice-nitech-jp-atr503-m001`),
  an HMM voice trained on a Japanese speaker;
- Piper's joe (the app's own natural English voice, a neural model; `models/`).

These are test tools, not the app's voices (the app speaks with its own engines,
app/voice/voices.py). `voices_for(language)` lists those installed for a language, most
person-like first, espeak-ng's own voice last; `packaging/debian-deps.sh test` installs them.
Each call runs one process (or the Piper model) and returns 16 kHz float32 audio; any thread.
"""

from __future__ import annotations

import functools
import logging
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path
from shutil import which

import numpy as np
import soundfile as sf
import soxr

from app.voice import mbrola_voices
from tests.support.speech import before_pause, speak_16k, spoken_through, until_quiet

log = logging.getLogger(__name__)
ESPEAK = ("en-us", "en-gb", "en-gb-scotland", "en-us+f3")
PIPER = "piper:joe"
MBROLA_EN = "mb-us2"  # MBROLA's American English voice (a man's diphones), spoken through espeak-ng
# MBROLA voices espeak-ng can speak through, by language (the diphone database's folder name).
MBROLA = {"en": "us2", "fr": "fr1", "de": "de6", "es": "es1"}


@functools.cache
def _piper():
    from app.catalog import catalog
    from app.voice.natural_voice import NaturalSynthesizer

    path = catalog.default_model_path("voice")
    catalog.check_file(path, "voice")
    return NaturalSynthesizer.get(path)


def available() -> list[str]:
    """The English voices this machine can speak with: espeak-ng's, MBROLA's when installed,
    and the natural one when fetched."""
    found = [*ESPEAK, MBROLA_EN] if mbrola_voices.usable(MBROLA["en"]) else list(ESPEAK)
    try:
        _piper()
    except Exception as exc:  # not fetched (`talk-llama models fetch joe`), or it cannot load
        log.warning("no natural voice (%s): espeak-ng voices only", exc)
        return found
    return [*found, PIPER]


def family(voice: str) -> str:
    """The voice family a benchmark reports `voice` under: natural (Piper), mbrola (recorded
    diphones) or espeak (formant synthesis)."""
    if voice == PIPER:
        return "natural"
    return "mbrola" if voice.startswith("mb-") else "espeak"


def speak(text: str, voice: str, wpm: int = 150, natural_wpm: int | None = None) -> np.ndarray:
    """`text` spoken by `voice` as 16 kHz mono float32 (`wpm`: espeak-ng and MBROLA; the
    natural voice speaks at its own pace unless `natural_wpm` is given, the app's rate setting,
    175 being its own)."""
    if voice != PIPER:
        return speak_16k(text, voice, wpm)
    speech = _piper().render(text, natural_wpm)
    return soxr.resample(speech.pcm, speech.sample_rate, 16000).astype(np.float32)


def said_through(head: str, tail: str, pause_s: float, voice: str) -> np.ndarray:
    """One sentence with a thinking pause of `pause_s` after `head`: the voice stays up at it, as
    a speaker's does mid-sentence (espeak-ng: an SSML break; the natural voice: the sentence
    rendered whole and opened where the tail's first word starts)."""
    if voice != PIPER:
        return speak_16k(spoken_through(head, tail, pause_s), voice)
    speech = _piper().render(f"{head} {tail}")
    x = soxr.resample(speech.pcm, speech.sample_rate, 16000).astype(np.float32)
    cut = speech.words[len(head.split())][1] * 16000 // speech.sample_rate
    gap = np.zeros(int(16000 * pause_s), np.float32)
    return np.concatenate([until_quiet(x[:cut]), gap, x[cut:]])


def said_apart(head: str, tail: str, pause_s: float, voice: str, wpm: int = 150) -> np.ndarray:
    """`head` said alone (it ends like a finished sentence), `pause_s` of silence, then `tail`."""
    gap = np.zeros(int(16000 * pause_s), np.float32)
    return np.concatenate([until_quiet(speak(head, voice, wpm)), gap, speak(tail, voice, wpm)])


# espeak-ng's own voice for each language the clips use (Mandarin's is `cmn`).
ESPEAK_FOR = {"en": "en-us", "fr": "fr", "de": "de", "es": "es", "ru": "ru", "zh": "cmn", "ja": "ja"}
RHVOICE = {"ru": "anna"}
RHVOICE_DIR = Path("/usr/share/RHVoice/voices")
JTALK_DICT = Path("/var/lib/mecab/dic/open-jtalk/naist-jdic")
JTALK_VOICE = Path("/usr/share/hts-voice/nitech-jp-atr503-m001/nitech_jp_atr503_m001.htsvoice")


@dataclass(frozen=True)
class ClipVoice:
    """One synthesizer voice for one language. `kind` names the engine in reports: "piper",
    "open-jtalk", "rhvoice", "mbrola" (made from recordings of people) or "espeak-ng"."""

    kind: str
    language: str
    voice: str  # the engine's own name for it

    @property
    def people_like(self) -> bool:
        return self.kind != "espeak-ng"

    def say(self, text: str, wpm: int = 140) -> np.ndarray:
        """`text` spoken, as 16 kHz float32 mono (`wpm`: espeak-ng and MBROLA only)."""
        if self.kind == "piper":
            return speak(text, PIPER)
        if self.kind in ("espeak-ng", "mbrola"):
            return speak_16k(text, f"mb-{self.voice}" if self.kind == "mbrola" else self.voice, wpm)
        with tempfile.NamedTemporaryFile(suffix=".wav") as f:
            if self.kind == "rhvoice":
                cmd = ["RHVoice-test", "-p", self.voice, "-o", f.name]
                subprocess.run(cmd, input=text.encode(), check=True, capture_output=True)
            elif self.kind == "open-jtalk":
                cmd = ["open_jtalk", "-x", str(JTALK_DICT), "-m", str(JTALK_VOICE), "-ow", f.name]
                subprocess.run(cmd, input=text.encode(), check=True, capture_output=True)
            else:
                raise ValueError(f"unknown voice kind {self.kind!r}")
            data, sr = sf.read(f.name, dtype="float32", always_2d=True)
        return soxr.resample(data[:, 0], sr, 16000).astype(np.float32)


def voices_for(language: str) -> list[ClipVoice]:
    """The installed voices for `language`, most person-like first, espeak-ng's own last."""
    found: list[ClipVoice] = []
    if language == "en" and PIPER in available():
        found.append(ClipVoice("piper", "en", "joe"))
    if language == "ja" and which("open_jtalk") and JTALK_DICT.is_dir() and JTALK_VOICE.is_file():
        found.append(ClipVoice("open-jtalk", "ja", JTALK_VOICE.stem))
    if (rh := RHVOICE.get(language)) and which("RHVoice-test") and (RHVOICE_DIR / rh).is_dir():
        found.append(ClipVoice("rhvoice", language, rh))
    if (mb := MBROLA.get(language)) and mbrola_voices.usable(mb):
        found.append(ClipVoice("mbrola", language, mb))
    if language in ESPEAK_FOR:
        found.append(ClipVoice("espeak-ng", language, ESPEAK_FOR[language]))
    return found


def people_like(language: str) -> ClipVoice:
    """The most person-like voice installed for `language` (espeak-ng's when it has no other)."""
    return voices_for(language)[0]


def through_head(head: str, tail: str, voice: str, pause: float) -> np.ndarray:
    """The head of one sentence said through, up to its last sound before the tail."""
    return before_pause(said_through(head, tail, pause, voice), pause, keep_s=0.0)
