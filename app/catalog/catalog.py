"""The model catalog (models/catalog.json), where models live, and checking a model file.

Every known model has a catalog entry: name, kind (llm | whisper | voice | turn | vad), file name,
size, sha256, licence and source (a PyPI package to extract from, PyPI CTranslate2 packages to
convert, another catalog model to quantize, or a URL).
`check_file` is the gate in front of llama/whisper: a missing, truncated or corrupted file raises
`ModelError` whose message names the file and the command that fixes it.

Thread-safety: pure functions over files; safe from any thread. Hashing a 100 MB file takes a
fraction of a second, and the result is cached in a sidecar file keyed by size and mtime.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import struct
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import platformdirs

from app.catalog.ggml_whisper import GgmlFormatError, check_structure
from app.catalog.gguf_header import GgufFormatError, expected_size
from app.system.typed_json import typed_fields

MODELS_ENV = "TALK_LLAMA_MODELS"
PROJECT_ROOT = Path(__file__).resolve().parents[2]
CATALOG_PATH = PROJECT_ROOT / "models" / "catalog.json"

GGUF_MAGIC = b"GGUF"
GGML_WHISPER_MAGIC = b"lmgg"  # 0x67676d6c little-endian
ONNX_MAGIC = b"\x08"  # an ONNX model is a protobuf ModelProto: field 1 (ir_version) comes first
MAGIC_BY_KIND = {
    "llm": GGUF_MAGIC,
    "whisper": GGML_WHISPER_MAGIC,
    "voice": ONNX_MAGIC,
    "turn": ONNX_MAGIC,
    "vad": ONNX_MAGIC,
}
KIND_NAMES = {
    "llm": "Language model",
    "whisper": "Speech model",
    "voice": "Voice model",
    "turn": "Turn model",
    "vad": "Speech detector",
}
ONNX_KINDS = ("voice", "turn", "vad")
FORMAT_NAMES = {"llm": "a GGUF", "whisper": "a ggml Whisper"} | dict.fromkeys(ONNX_KINDS, "an ONNX")
FETCH_HINT = "talk-llama models fetch"


class ModelError(RuntimeError):
    """A model file is missing or unusable. The message says which file and how to fix it."""


@dataclass(frozen=True)
class ModelEntry:
    """One catalog row."""

    name: str
    kind: str
    file: str
    license: str
    source: dict[str, Any]
    size: int | None = None
    sha256: str | None = None
    default: bool = False
    description: str = ""
    aliases: tuple[str, ...] = field(default_factory=tuple)
    # A language model's conversation aids as measured for it, with its parameter count
    # (brain/model_aids.py)
    aids: dict[str, Any] = field(default_factory=dict)

    @property
    def source_label(self) -> str:
        src = self.source
        if src["type"] == "url":
            return src["url"]
        if src["type"] == "quantize":
            return f"{src['from']} quantized to {src['quant']}"
        names = [f"{p['package']}=={p['version']}" for p in src["packages"]]
        if src["type"] == "pypi-parts" and len(names) > 2:
            return f"PyPI {names[0]} … {names[-1]} ({len(names)} parts joined)"
        pkgs = ", ".join(names)
        return f"PyPI {pkgs}" + (" (converted)" if src["type"] == "pypi-ct2" else "")

    @property
    def fetch_command(self) -> str:
        return f"{FETCH_HINT} {self.name} --force"


def load_catalog(path: Path = CATALOG_PATH) -> list[ModelEntry]:
    """Parse the catalog file. Raises ModelError (the installation is damaged) when it cannot
    be read or a row is not a model entry."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        rows = data["models"] if isinstance(data, dict) else None
        if not isinstance(rows, list):
            raise ValueError("no list of models")
        return [_entry(row) for row in rows]
    except (OSError, ValueError, KeyError, TypeError, RecursionError) as exc:
        reason = f"{type(exc).__name__}: {exc}" if isinstance(exc, KeyError | TypeError) else str(exc)
        raise ModelError(f"The model catalog {path} is damaged ({reason}); reinstall talk-llama.") from exc


def _entry(row: Any) -> ModelEntry:
    if isinstance(row, dict) and isinstance(row.get("aliases"), list):
        row = {**row, "aliases": tuple(row["aliases"])}
    kept, wrong = typed_fields(ModelEntry, row)
    missing = {"name", "kind", "file", "license", "source"} - set(kept)
    if wrong or missing or not all(isinstance(a, str) for a in kept.get("aliases", ())):
        raise ValueError(
            f"entry {row.get('name')!r} has no valid {', '.join(sorted({*wrong, *missing}) or ['aliases'])}"
        )
    entry = ModelEntry(**kept)
    entry.source_label  # noqa: B018 (raises KeyError/TypeError for a source without its fields)
    return entry


def find_entry(name: str, catalog: list[ModelEntry] | None = None) -> ModelEntry:
    """Look a model up by name, alias or file name."""
    for entry in catalog if catalog is not None else load_catalog():
        if name in (entry.name, entry.file, *entry.aliases):
            return entry
    raise KeyError(f"unknown model {name!r}; see `talk-llama models list`")


def default_entry(kind: str, catalog: list[ModelEntry] | None = None) -> ModelEntry:
    for entry in catalog if catalog is not None else load_catalog():
        if entry.kind == kind and entry.default:
            return entry
    raise KeyError(f"catalog has no default {kind} model")


def models_dir(override: str | os.PathLike[str] | None = None) -> Path:
    """Where model files live: explicit override, $TALK_LLAMA_MODELS, the checkout's models/,
    or the user data dir when the package is installed without a checkout."""
    if override:
        return Path(override).expanduser()
    if env := os.environ.get(MODELS_ENV):
        return Path(env).expanduser()
    if (PROJECT_ROOT / "pyproject.toml").is_file():  # a checkout (not the bundle's own copy)
        return CATALOG_PATH.parent
    return Path(platformdirs.user_data_dir("talk-llama")) / "models"


def default_model_path(kind: str, directory: Path | None = None) -> Path:
    return (directory or models_dir()) / default_entry(kind).file


def optional_model_path(choice: str, kind: str) -> Path | None:
    """The file a setting names for an optional model of `kind`: "" the catalog's default,
    "none" none, else that file. A missing file is still returned: loading it says what to do."""
    if choice.strip().lower() == "none":
        return None
    return Path(choice).expanduser() if choice.strip() else default_model_path(kind)


def sha256_of(path: Path) -> str:
    """sha256 of a file, cached in `.<name>.sha256` next to it (keyed by size and mtime)."""
    st = path.stat()
    key = f"{st.st_size}:{st.st_mtime_ns}"
    cache = path.with_name(f".{path.name}.sha256")
    try:
        cached_key, digest = cache.read_text().split()
        if cached_key == key:
            return digest
    except (OSError, ValueError):
        pass
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(1 << 20):
            h.update(chunk)
    digest = h.hexdigest()
    with contextlib.suppress(OSError):  # a read-only folder only loses the cache
        cache.write_text(f"{key} {digest}\n")
    return digest


def _fix_hint(path: Path, entry: ModelEntry | None) -> str:
    if entry is not None:
        return f"Fix: run `{entry.fetch_command}`."
    return f"Fix: choose another model file, or run `{FETCH_HINT}` for the defaults."


def refused(path: Path, kind: str, library: str) -> ModelError:
    """The error for a file that passed `check_file` but the library that loads it refused."""
    entry = next((e for e in _safe_catalog() if e.file == path.name and e.kind == kind), None)
    what = f"{KIND_NAMES.get(kind, 'Model')} {path}"
    why = "damaged, or a kind of model it does not know"
    return ModelError(f"{what} could not be loaded: {library} refused it ({why}). {_fix_hint(path, entry)}")


def check_file(path: Path, kind: str, entry: ModelEntry | None = None, verify_hash: bool = True) -> None:
    """Raise ModelError unless `path` looks like a usable model of `kind`.

    Checks existence, header magic, and, for catalog entries, size and sha256.
    """
    if entry is None:
        entry = next((e for e in _safe_catalog() if e.file == path.name and e.kind == kind), None)
    hint = _fix_hint(path, entry)
    kind_name = KIND_NAMES.get(kind, f"{kind} model")
    if not path.is_file():
        raise ModelError(f"{kind_name} {path} is missing. {hint}")
    size = path.stat().st_size
    with open(path, "rb") as f:
        magic = f.read(len(MAGIC_BY_KIND[kind]))
    if magic != MAGIC_BY_KIND[kind]:
        raise ModelError(f"{kind_name} {path} is not {FORMAT_NAMES[kind]} file (bad header). {hint}")
    if kind == "voice" and not path.with_name(path.name + ".json").is_file():
        raise ModelError(f"{kind_name} {path} has no {path.name}.json beside it (its config). {hint}")
    if kind == "whisper" and not (entry and verify_hash and entry.sha256):  # else the sha256 covers it
        _check_whisper_structure(path, f"{kind_name} {path}", hint)
    if kind == "llm" and not (entry and entry.size):
        _check_gguf_header(path, size, f"{kind_name} {path}", hint)
    if entry is None:
        return
    if entry.size is not None and size != entry.size:
        if size < entry.size:
            raise ModelError(_incomplete(f"{kind_name} {path}", size, entry.size, hint))
        larger = f"is larger than expected ({size} bytes, expected {entry.size})"
        raise ModelError(f"{kind_name} {path} {larger}. {hint}")
    if verify_hash and entry.sha256 and sha256_of(path) != entry.sha256:
        raise ModelError(f"{kind_name} {path} is corrupted (sha256 mismatch). {hint}")


def _incomplete(what: str, size: int, expected: int, hint: str) -> str:
    return (
        f"{what}: the file is incomplete ({size:,} of {expected:,} bytes); the download or copy "
        f"stopped early. {hint}"
    )


def _check_gguf_header(path: Path, size: int, what: str, hint: str) -> None:
    """A GGUF's own tensor table says how long the file must be (app/catalog/gguf_header.py)."""
    try:
        expected = expected_size(path)
    except (GgufFormatError, OSError) as exc:
        raise ModelError(f"{what} is damaged: {exc}. {hint}") from exc
    if size < expected:
        raise ModelError(_incomplete(what, size, expected, hint))


def _check_whisper_structure(path: Path, what: str, hint: str) -> None:
    """whisper.cpp trusts a file's tensor table (a truncated file crashes the process), so the
    table is walked here first. llama.cpp checks a GGUF's tensors against the file itself and
    fails with an error, which `Conversation` reports."""
    try:
        check_structure(path)
    except (GgmlFormatError, OSError, ValueError, struct.error) as exc:
        raise ModelError(f"{what} is damaged: {exc}. {hint}") from exc


def _safe_catalog() -> list[ModelEntry]:
    try:
        return load_catalog()
    except ModelError:
        return []


@dataclass(frozen=True)
class ModelStatus:
    entry: ModelEntry
    path: Path
    present: bool
    verified: bool
    problem: str = ""


def status(entry: ModelEntry, directory: Path | None = None) -> ModelStatus:
    """Presence and checksum state of one catalog model."""
    path = (directory or models_dir()) / entry.file
    if not path.exists():
        return ModelStatus(entry, path, False, False, "missing")
    try:
        check_file(path, entry.kind, entry)
    except ModelError as exc:
        return ModelStatus(entry, path, True, False, str(exc))
    return ModelStatus(entry, path, True, bool(entry.sha256))
