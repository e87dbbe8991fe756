"""Which voices there are and which engine speaks a chosen one.

Two engines sit behind one contract (`Engine.render(text, rate, volume) -> Speech`):
- **natural** voices (natural_voice.py, Piper models): the catalog's voice models present in the
  models folder (`talk-llama models fetch`), other Piper `.onnx` files (+ `.onnx.json`) there,
  or any such file the user picks by path;
- **system** voices (synthesizer.py, espeak-ng through pyttsx3): every language espeak has.

A voice is named by what the settings and `--voice` store: a catalog voice's name, a model's
path, or a system voice's id, name or language. No name means the default: the natural voice
for the language when one is present, else espeak's default voice. `open_engine` falls back to
the system voice when a natural voice cannot load, and says so (`notice`).

Threads: functions block for loading (a natural voice ~1 s); engines are shared process-wide.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from app.catalog.catalog import ModelError, check_file, find_entry, load_catalog, models_dir
from app.catalog.languages import primary
from app.voice.natural_voice import NaturalSynthesizer, VoiceFile
from app.voice.synthesizer import Speech, Synthesizer, TtsUnavailable, Voice

log = logging.getLogger(__name__)
VOICE_KIND = "voice"
_LANGUAGE = re.compile(r"[a-z]{2,3}([-_][A-Za-z]{2})?")


class Engine(Protocol):
    @property
    def sample_rate(self) -> int: ...

    def render(self, text: str, rate: int | None = None, volume: float | None = None) -> Speech: ...

    def cancel(self) -> None: ...


@dataclass
class SystemEngine:
    """espeak-ng with one of its voices (None: its default)."""

    synth: Synthesizer
    voice: str | None = None

    @property
    def sample_rate(self) -> int:
        return self.synth.rate_of(self.voice)

    def render(self, text: str, rate: int | None = None, volume: float | None = None) -> Speech:
        return self.synth.render(text, self.voice, rate, volume)

    def cancel(self) -> None:
        """espeak renders a sentence in ~10 ms: nothing worth cancelling."""


@dataclass(frozen=True)
class OpenedVoice:
    engine: Engine | None  # None: no engine at all (text only)
    voice: Voice | None  # what speaks (None: espeak's default voice)
    notice: str = ""  # the natural voice asked for could not load: why, and what speaks instead
    problem: str = ""  # engine is None: why


def _natural(model: Path, catalog_name: str = "") -> Voice:
    name, languages = VoiceFile(model).describe()
    return Voice(catalog_name or str(model), name, languages, engine="natural", model=model)


def natural_voices(directory: Path | None = None) -> list[Voice]:
    """The natural voices in the models folder: catalog voices first (verified lazily: a
    damaged file shows up when it is chosen), then other Piper models found there."""
    folder = directory or models_dir()
    found: list[Voice] = []
    known: set[Path] = set()
    for entry in load_catalog():
        path = folder / entry.file
        if entry.kind == VOICE_KIND and path.is_file():
            try:
                found.append(_natural(path, entry.name))
                known.add(path)
            except TtsUnavailable as exc:
                log.warning("%s", exc)
    for path in sorted(folder.glob("*.onnx")):
        if path not in known and VoiceFile(path).config.is_file():
            try:
                found.append(_natural(path))
            except TtsUnavailable as exc:
                log.warning("%s", exc)
    return found


def system_voices() -> list[Voice]:
    """espeak-ng's voices ([] when espeak is missing)."""
    try:
        return Synthesizer.get().voices
    except TtsUnavailable:
        return []


def all_voices(directory: Path | None = None) -> list[Voice]:
    return natural_voices(directory) + system_voices()


def _speaks(voice: Voice, language: str) -> bool:
    return any(primary(lang) == primary(language) for lang in voice.languages)


def find_natural(spec: str, directory: Path | None = None) -> Voice | None:
    """The natural voice `spec` names (catalog name, alias, file name, or a model path), or None
    when it names none. Raises TtsUnavailable when it names one whose files are missing."""
    if spec.endswith(".onnx"):  # (system voice ids have slashes too: "gmw/en")
        path = Path(spec).expanduser()
        if not path.is_file():
            raise TtsUnavailable(f"voice model {path} does not exist")
        return _natural(path)
    try:
        entry = find_entry(spec)
    except KeyError:
        return None
    if entry.kind != VOICE_KIND:
        return None
    path = (directory or models_dir()) / entry.file
    if not path.is_file():
        fix = f"talk-llama models fetch {entry.name}"
        raise TtsUnavailable(f"the voice {entry.name} is not downloaded; run `{fix}`")
    return _natural(path, entry.name)


def default_natural(language: str = "en", directory: Path | None = None) -> Voice | None:
    """The natural voice for `language` when one is present (the catalog's default first)."""
    voices = [v for v in natural_voices(directory) if _speaks(v, language)]
    defaults = {e.name for e in load_catalog() if e.kind == VOICE_KIND and e.default}
    voices.sort(key=lambda v: v.id not in defaults)
    return voices[0] if voices else None


def _load_natural(voice: Voice) -> NaturalSynthesizer:
    assert voice.model is not None
    try:
        entry = find_entry(voice.id) if voice.id != str(voice.model) else None
    except KeyError:
        entry = None
    if entry is not None:
        try:
            check_file(voice.model, VOICE_KIND, entry)
        except ModelError as exc:
            raise TtsUnavailable(str(exc)) from exc
    return NaturalSynthesizer.get(voice.model)


def _open_named(spec: str, directory: Path | None) -> OpenedVoice | None:
    """The voice `spec` names, loaded; None when it names no voice. Raises TtsUnavailable."""
    natural = find_natural(spec, directory)
    if natural is None and _LANGUAGE.fullmatch(spec):  # a language: its natural voice first
        natural = default_natural(spec, directory)
    if natural is not None:
        return OpenedVoice(_load_natural(natural), natural)
    synth = Synthesizer.get()
    try:
        system = synth.find_voice(spec)
    except ValueError:
        return None
    return OpenedVoice(SystemEngine(synth, system.id), system)


def _open_default(language: str, directory: Path | None) -> OpenedVoice:
    notice = ""
    natural = default_natural(language, directory)
    if natural is not None:
        try:
            return OpenedVoice(_load_natural(natural), natural)
        except TtsUnavailable as exc:
            notice = f"The natural voice {natural.name} could not load: {exc}."
    try:
        synth = Synthesizer.get()
    except TtsUnavailable as exc:
        return OpenedVoice(None, None, notice, str(exc))
    system = _system_voice_for(synth, language)
    return OpenedVoice(SystemEngine(synth, system.id if system else None), system, notice)


def _system_voice_for(synth: Synthesizer, language: str) -> Voice | None:
    """espeak-ng's first voice for a language other than English (None: its default voice,
    English, which is also what speaks a language espeak has no voice for)."""
    if primary(language) in ("", "en"):
        return None
    try:
        return synth.find_voice(language)
    except ValueError:
        log.warning("no system voice speaks %r; the default voice speaks it", language)
        return None


def open_engine(spec: str | None, language: str = "en", directory: Path | None = None) -> OpenedVoice:
    """The engine for the voice `spec` names, else the default one for `language` (see the
    module docstring); `notice` says when what speaks is not what was asked for. Blocking."""
    notice = ""
    if spec:
        try:
            if (opened := _open_named(spec, directory)) is not None:
                return opened
            notice = f"No voice matches {spec!r} (see `talk-llama say --list-voices`)."
        except TtsUnavailable as exc:
            notice = f"The voice {spec!r} could not load: {exc}."
    opened = _open_default(language, directory)
    notice = " ".join(n for n in (notice, opened.notice) if n)
    if notice and opened.engine is not None:
        speaking = opened.voice.name if opened.voice else "the system voice"
        notice += f" Speaking with {speaking}."
    if notice:
        log.warning("%s", notice)
    return OpenedVoice(opened.engine, opened.voice, notice, opened.problem)
