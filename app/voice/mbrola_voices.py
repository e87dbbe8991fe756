"""MBROLA voices that espeak-ng can speak through: which are installed, and their sample rate.

MBROLA joins diphones recorded from a person (Debian: `mbrola` with `mbrola-fr1`, `mbrola-de6`,
…, in contrib and non-free); espeak-ng writes the phonemes. Whisper heard its French with 9-16%
word errors where espeak-ng's own French voice got 50-69% (bench/languages), so where one is
installed it is the system voice for its language (synthesizer.py). Two things espeak-ng does
not do for us: pyttsx3's voice list never shows these voices, and espeak-ng reports its own
22050 Hz while an MBROLA voice speaks at its database's rate (16 kHz unless the voice file says
otherwise): played at 22050 Hz, "Bonjour, je m'appelle Max" came out a third too fast and
whisper heard "Bonsoir, GML Max". So both are read here from espeak-ng's voice files
(`voices/mb/mb-fr1`: "name", "language", "mbrola fr1 fr_phtrans [rate]").

Pure file reading; any thread.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from shutil import which

# Where espeak-ng looks for a database `db`: DIR/db, DIR/db/db, DIR/voices/db.
MBROLA_DIR = Path("/usr/share/mbrola")
MBROLA_RATE = 16000  # a database's rate when the voice file names none


@dataclass(frozen=True)
class MbrolaVoice:
    id: str  # espeak-ng's name for it: "mb/mb-fr1"
    name: str
    languages: tuple[str, ...]
    rate: int  # samples per second
    needs: tuple[str, str]  # (MBROLA database, espeak-ng's phoneme table for it)


def read_voice_file(path: Path) -> MbrolaVoice | None:
    """One of espeak-ng's MBROLA voice files; None when it names no database."""
    name, languages, needs, rate = path.name, [], ("", ""), MBROLA_RATE
    for line in path.read_text(errors="replace").splitlines():
        words = line.split()
        if len(words) < 2:
            continue
        if words[0] == "name":
            name = words[1]
        elif words[0] == "language":
            languages.append(words[1])
        elif words[0] == "mbrola" and len(words) >= 3:
            needs = (words[1], words[2])
            if len(words) >= 4 and words[3].isdigit():
                rate = int(words[3])
    if not needs[0]:
        return None
    return MbrolaVoice(f"mb/{path.name}", name, tuple(languages), rate, needs)


def database_installed(database: str, root: Path = MBROLA_DIR) -> bool:
    return any(p.is_file() for p in (root / database, root / database / database, root / "voices" / database))


def usable(database: str, root: Path = MBROLA_DIR) -> bool:
    """The `mbrola` program and the database are installed (espeak-ng needs both to load it)."""
    return which("mbrola") is not None and database_installed(database, root)


def installed(espeak_data: Path, root: Path = MBROLA_DIR) -> list[MbrolaVoice]:
    """The MBROLA voices in espeak-ng's data folder whose database and phoneme table (and the
    `mbrola` program) are installed, by id. Left out: a database's voice for another language
    ("mb-de6-en": German diphones reading English), and a voice whose phoneme table espeak-ng
    lacks (`mb-cn1` names a `zh_phtrans` it does not ship, and fails to load)."""
    found = []
    for path in sorted((espeak_data / "voices" / "mb").glob("mb-*")):
        voice = read_voice_file(path) if path.is_file() and path.name.count("-") == 1 else None
        if voice is None:
            continue
        database, table = voice.needs
        if usable(database, root) and (espeak_data / "mbrola_ph" / table).is_file():
            found.append(voice)
    return found


def for_language(voices: Sequence[MbrolaVoice], language: str) -> MbrolaVoice | None:
    """The first of `voices` that names `language` itself ("fr"), else the first that speaks a
    variety of it ("fr-ca")."""
    s = language.lower()
    exact = next((v for v in voices if any(x.lower() == s for x in v.languages)), None)
    return exact or next((v for v in voices if any(x.lower().split("-")[0] == s for x in v.languages)), None)
