"""Voices that say the benchmarks' and tests' clips, as people-like as this machine has them.

espeak-ng's formant voices are far from a person's: whisper base heard its French, German and
Russian questions with 42-86% word errors and found their language in 1-3 of 5, so numbers
measured on them say more about espeak-ng than about the app. Debian packages voices made from
recordings of people, which whisper hears much as it hears a person:

- MBROLA diphone voices (`mbrola`, `mbrola-fr1`, `mbrola-de6`, `mbrola-es1`; contrib and
  non-free), spoken through espeak-ng (`-v mb-fr1`): espeak-ng writes the phonemes, MBROLA
  joins recorded diphones;
- RHVoice (`rhvoice`, `rhvoice-russian`; non-free), a statistical parametric voice trained on
  a speaker (Russian: anna);
- Open JTalk (`open-jtalk`, `open-jtalk-mecab-naist-jdic`, `hts-voice-nitech-jp-atr503-m001`),
  an HMM voice trained on a Japanese speaker;
- Piper's joe (the app's own natural English voice, a neural model; `models/`).

These are the test tools' voices, not the app's (the app speaks with its own engines, voices.py).
`voices_for(language)` lists those installed for a language, most person-like first, espeak-ng's
own voice last; `packaging/debian-deps.sh test` installs them. Each `ClipVoice.say` runs one
process (or the Piper model) and returns 16 kHz float32 audio; any thread.
"""

from __future__ import annotations

import subprocess
import tempfile
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from shutil import which

import numpy as np
import soundfile as sf
import soxr

from bench.common import espeak_command

# espeak-ng's own voice for each language the clips use (Mandarin's is `cmn`).
ESPEAK = {"en": "en-us", "fr": "fr", "de": "de", "es": "es", "ru": "ru", "zh": "cmn", "ja": "ja"}
# MBROLA voices espeak-ng can speak through, by language (the diphone database's folder name).
MBROLA = {"fr": "fr1", "de": "de6", "es": "es1"}
MBROLA_DIR = Path("/usr/share/mbrola")
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
            return _piper(text)
        with tempfile.NamedTemporaryFile(suffix=".wav") as f:
            if self.kind in ("espeak-ng", "mbrola"):
                voice = f"mb-{self.voice}" if self.kind == "mbrola" else self.voice
                subprocess.run(espeak_command(text, f.name, voice, wpm), check=True, capture_output=True)
            elif self.kind == "rhvoice":
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
    if language == "en" and _piper_engine() is not None:
        found.append(ClipVoice("piper", "en", "joe"))
    if language == "ja" and which("open_jtalk") and JTALK_DICT.is_dir() and JTALK_VOICE.is_file():
        found.append(ClipVoice("open-jtalk", "ja", JTALK_VOICE.stem))
    if (rh := RHVOICE.get(language)) and which("RHVoice-test") and (RHVOICE_DIR / rh).is_dir():
        found.append(ClipVoice("rhvoice", language, rh))
    if (mb := MBROLA.get(language)) and which("mbrola") and (MBROLA_DIR / mb).exists():
        found.append(ClipVoice("mbrola", language, mb))
    if language in ESPEAK:
        found.append(ClipVoice("espeak-ng", language, ESPEAK[language]))
    return found


def people_like(language: str) -> ClipVoice:
    """The most person-like voice installed for `language` (espeak-ng's when it has no other)."""
    return voices_for(language)[0]


@cache
def _piper_engine():  # type: ignore[no-untyped-def]
    """The app's natural English voice (None when its model is not downloaded)."""
    from app.voice.voices import open_engine

    opened = open_engine("joe")
    natural = opened.voice is not None and opened.voice.engine == "natural"
    return opened.engine if natural else None


def _piper(text: str) -> np.ndarray:
    engine = _piper_engine()
    if engine is None:
        raise RuntimeError("Piper's joe is not downloaded (talk-llama models fetch)")
    speech = engine.render(text)
    return soxr.resample(speech.pcm, speech.sample_rate, 16000).astype(np.float32)
