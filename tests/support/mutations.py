"""Structure-aware mutations of the files the app reads, for the fuzz tests.

A mutation overwrites one integer field of a file's structure (a count, a length, a type, a
dimension, an offset, a hyperparameter) with a value that breaks assumptions: 0, -1, the
type's limits, off by one, doubled. The fields come from the formats' own walkers (GGUF:
`app.catalog.gguf_header.header_fields`; ggml Whisper: `app.catalog.ggml_whisper`), so the
mutations land where a loader makes decisions, not in tensor data that is never checked.
"""

from __future__ import annotations

import dataclasses
import random
import struct
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

from app.catalog import ggml_whisper
from app.catalog.gguf_header import Field

_LIMITS = (
    0,
    1,
    2,
    3,
    7,
    8,
    255,
    256,
    4095,
    4096,
    65535,
    65536,
    2**31 - 1,
    2**31,
    2**32 - 1,
    2**63 - 1,
    2**64 - 1,
)


_FORMATS = {2: "<H", 4: "<I", 8: "<Q"}


@dataclass(frozen=True)
class Mutation:
    """Write `value` (as an unsigned little-endian integer of `width` bytes) at `offset`."""

    offset: int
    width: int
    value: int
    what: str

    def pack(self) -> bytes:
        return struct.pack(_FORMATS[self.width], self.value % (1 << (8 * self.width)))

    def __str__(self) -> str:
        return f"{self.what}@{self.offset}={self.value}"


def values_for(original: int, width: int) -> list[int]:
    """The values tried in place of `original`."""
    top = (1 << (8 * width)) - 1
    near = [original + 1, original - 1, original * 2, original // 2, top - original]
    return sorted({v % (top + 1) for v in (*_LIMITS, *near)} - {original})


def whisper_fields(path: Path) -> list[Field]:
    """Every integer of a ggml Whisper file's header, vocabulary size and tensor records."""
    fields = [
        Field(4 + 4 * i, 4, f"hparam {fld.name}")
        for i, fld in enumerate(dataclasses.fields(ggml_whisper.Hparams))
    ]
    fields += [Field(48, 4, "n_mel"), Field(52, 4, "n_fft")]
    with open(path, "rb") as f:
        _hp, raw, _n = ggml_whisper.read_preamble(f)
        mel = struct.unpack_from("<2i", raw)
        fields.append(Field(48 + 8 + 4 * mel[0] * mel[1], 4, "vocabulary size"))
        start = f.tell()
        for rec in ggml_whisper.iter_tensors(f, with_data=False):
            fields += [
                Field(start, 4, "tensor dims"),
                Field(start + 4, 4, "name length"),
                Field(start + 8, 4, "type"),
            ]
            fields += [Field(start + 12 + 4 * i, 4, "tensor dim") for i in range(len(rec.dims))]
            start = f.tell()
    return fields


_FMT_FIELDS = (
    (8, 2, "format"), (10, 2, "channels"), (12, 4, "sample rate"),
    (16, 4, "byte rate"), (20, 2, "block align"), (22, 2, "bits"),
)  # fmt: skip


def wav_fields(data: bytes) -> list[Field]:
    """The RIFF size, every chunk's size, and the fmt chunk's fields of a WAV file."""
    fields = [Field(4, 4, "riff size")]
    at = 12
    while at + 8 <= len(data):
        chunk, size = data[at : at + 4], struct.unpack_from("<I", data, at + 4)[0]
        fields.append(Field(at + 4, 4, f"{chunk.decode('latin-1')} size"))
        if chunk == b"fmt ":
            fields += [Field(at + off, width, what) for off, width, what in _FMT_FIELDS]
        at += 8 + size + (size & 1)
    return fields


def plan(fields: list[Field], data: bytes, rng: random.Random, cases: int) -> list[list[Mutation]]:
    """`cases` mutation sets of one or two fields each. A kind of field ("tensor dim", "string
    length", a metadata key) is drawn first, so the thousands of vocabulary lengths do not
    crowd out the few hyperparameters."""
    by_kind: dict[str, list[Field]] = defaultdict(list)
    for fld in fields:
        by_kind[fld.what].append(fld)
    kinds = sorted(by_kind)
    out = []
    for _ in range(cases):
        chosen = []
        for _ in range(rng.choice((1, 1, 2))):
            fld = rng.choice(by_kind[rng.choice(kinds)])
            (original,) = struct.unpack_from(_FORMATS[fld.width], data, fld.offset)
            chosen.append(
                Mutation(fld.offset, fld.width, rng.choice(values_for(original, fld.width)), fld.what)
            )
        out.append(chosen)
    return out


class MutableCopy:
    """A copy of a model file mutated in place case by case: only the header bytes change, so
    a case costs a few writes, not a 100 MB copy. `apply` undoes the previous case first."""

    def __init__(self, original: Path, copy: Path) -> None:
        self.original, self.path = original.read_bytes(), copy
        copy.write_bytes(self.original)
        self._undo: list[Mutation] = []

    def apply(self, mutations: list[Mutation]) -> None:
        with open(self.path, "r+b") as f:
            for m in self._undo:
                f.seek(m.offset)
                f.write(self.original[m.offset : m.offset + m.width])
            for m in mutations:
                f.seek(m.offset)
                f.write(m.pack())
        self._undo = list(mutations)
