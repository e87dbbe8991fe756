"""A GGUF file's header and tensor table, checked before llama.cpp sees them, and how many bytes
the file must hold (no tensor data is read: a few milliseconds for any model). A file shorter
than that was cut off in a download or a copy; llama.cpp refuses it only when it loads, after
the user has left Settings. A header that disagrees with itself (a layer count the tensors do
not have, a float that is not a number, a tensor out of place) is refused here because
llama.cpp aborts the process on some of them (found by tests/test_fuzz_models.py).

Hand-written because the format's reader (`gguf`, llama.cpp's Python package) builds every
tensor and metadata array with numpy first: seconds for a 100 MB model, and it fails on a cut
file with a reshape error instead of saying how much is missing. The block sizes below are the
format's (ggml's type traits); a type not listed counts only as where its data starts.
"""

from __future__ import annotations

import math
import struct
from pathlib import Path
from typing import BinaryIO, NamedTuple

MAGIC = b"GGUF"
# ggml type id: (elements per block, bytes per block)
BLOCKS = {
    0: (1, 4), 1: (1, 2), 2: (32, 18), 3: (32, 20), 6: (32, 22), 7: (32, 24), 8: (32, 34), 9: (32, 40),
    10: (256, 84), 11: (256, 110), 12: (256, 144), 13: (256, 176), 14: (256, 210), 15: (256, 292),
    16: (256, 66), 17: (256, 74), 18: (256, 98), 19: (256, 50), 20: (32, 18), 21: (256, 110),
    22: (256, 82), 23: (256, 136), 24: (1, 1), 25: (1, 2), 26: (1, 4), 27: (1, 8), 28: (1, 8),
    29: (256, 56), 30: (1, 2), 34: (256, 54), 35: (256, 66), 39: (32, 17), 40: (64, 36), 41: (128, 18),
}  # fmt: skip
# metadata value types of a fixed size (u8 i8 u16 i16 u32 i32 f32 bool; u64 i64 f64)
FIXED = {0: 1, 1: 1, 2: 2, 3: 2, 4: 4, 5: 4, 6: 4, 7: 1, 10: 8, 11: 8, 12: 8}
FLOATS = {6: "<f", 12: "<d"}
STRING, ARRAY = 8, 9
MAX_TRAINED_CONTEXT = 1 << 24  # 16M tokens; the longest real models claim 10M
MAX_NAME, MAX_DIMS = 64, 4  # ggml's GGML_MAX_NAME (with its terminating zero) and GGML_MAX_DIMS


class Field(NamedTuple):
    """One integer of the header: its byte offset, width (4 or 8) and what it counts."""

    offset: int
    width: int
    what: str


class GgufFormatError(ValueError):
    """The header or tensor table cannot be read (not a GGUF file, or cut inside the header)."""


class _Reader:
    """Reads the header's values in order; when `fields` is a list, notes where each integer
    lies there as (offset, width, what) — the map a fuzzer mutates."""

    def __init__(self, f: BinaryIO, size: int, fields: list[Field] | None = None) -> None:
        self.f, self.size, self.fields = f, size, fields

    def take(self, n: int) -> bytes:
        if n < 0 or self.f.tell() + n > self.size:
            raise GgufFormatError("the file ends inside its header")
        return self.f.read(n)

    def _note(self, width: int, what: str) -> None:
        if self.fields is not None:
            self.fields.append(Field(self.f.tell(), width, what))

    def u32(self, what: str = "u32") -> int:
        self._note(4, what)
        return int(struct.unpack("<I", self.take(4))[0])

    def u64(self, what: str = "u64") -> int:
        self._note(8, what)
        return int(struct.unpack("<Q", self.take(8))[0])

    def string(self) -> bytes:
        return self.take(self.u64("string length"))

    def skip_value(self, kind: int, what: str = "value") -> None:
        if kind in FIXED:
            if FIXED[kind] in (4, 8):  # integers and floats: hyperparameters live here
                self._note(FIXED[kind], what)
            raw = self.take(FIXED[kind])
            if kind in FLOATS and not math.isfinite(struct.unpack(FLOATS[kind], raw)[0]):
                raise GgufFormatError(f"{what} is not a number")
        elif kind == STRING:
            self.string()
        elif kind == ARRAY:
            inner, n = self.u32("array type"), self.u64("array length")
            if inner in FIXED:
                self.take(FIXED[inner] * n)
            else:
                for _ in range(n):
                    self.skip_value(inner)
        else:
            raise GgufFormatError(f"unknown metadata type {kind}")


def expected_size(path: Path) -> int:
    """The smallest size `path` can have with all its tensors' data in it. Raises
    GgufFormatError when the header or tensor table is unreadable."""
    return _walk(path, None)


def header_fields(path: Path) -> list[Field]:
    """Where each integer of the header and tensor table lies (counts, lengths, types, dims,
    offsets), in file order. Raises GgufFormatError as `expected_size` does."""
    fields: list[Field] = []
    _walk(path, fields)
    return fields


def _walk(path: Path, fields: list[Field] | None) -> int:
    size = path.stat().st_size
    with open(path, "rb") as f:
        r = _Reader(f, size, fields)
        if r.take(4) != MAGIC:
            raise GgufFormatError("not a GGUF file")
        version = r.u32("version")
        if version < 2:
            raise GgufFormatError(f"GGUF version {version} is too old for llama.cpp")
        n_tensors, n_kv = r.u64("tensor count"), r.u64("metadata count")
        alignment, arch, layers = 32, b"", None
        for _ in range(n_kv):
            key, kind = r.string(), r.u32("metadata type")
            if key == b"general.alignment" and kind == 4:
                alignment = r.u32("alignment")
                if not alignment or alignment & (alignment - 1):
                    raise GgufFormatError(f"alignment {alignment} is not a power of two")
            elif key == b"general.architecture" and kind == STRING:
                arch = r.string()
            elif arch and key == arch + b".block_count" and kind == 4:
                layers = r.u32(key.decode("utf-8", "replace"))
            elif arch and key == arch + b".context_length" and kind == 4:
                # llama-cpp-python's tokenizer allocates this many tokens per call
                if (n_ctx := r.u32(key.decode("utf-8", "replace"))) > MAX_TRAINED_CONTEXT:
                    raise GgufFormatError(f"it claims a context of {n_ctx:,} tokens")
            else:
                r.skip_value(kind, key.decode("utf-8", "replace"))
        return _tensor_table(r, f, n_tensors, alignment, layers)


def _tensor_table(r: _Reader, f: BinaryIO, n_tensors: int, alignment: int, layers: int | None) -> int:
    """Walk the tensor infos as llama.cpp's GGUF reader checks them (names, dimensions, types,
    each tensor's data right after the previous one's); returns the file size they need."""
    names: set[bytes] = set()
    blocks: set[bytes] = set()
    end = 0
    for _ in range(n_tensors):
        name = r.string()
        n_dims = r.u32("tensor dims")
        if not (0 < len(name) < MAX_NAME and 0 < n_dims <= MAX_DIMS) or name in names:
            raise GgufFormatError("implausible tensor table")
        names.add(name)
        if name.startswith(b"blk.") and name.count(b".") >= 2:
            blocks.add(name.split(b".")[1])
        dims = [r.u64("tensor dim") for _ in range(n_dims)]
        kind, offset = r.u32("tensor type"), r.u64("tensor offset")
        if kind not in BLOCKS or min(dims) < 1 or math.prod(dims) >= 1 << 60:
            raise GgufFormatError(f"tensor {name.decode('utf-8', 'replace')} has an impossible type or shape")
        per_block, block_bytes = BLOCKS[kind]
        if dims[0] % per_block or offset != end:
            raise GgufFormatError(f"tensor {name.decode('utf-8', 'replace')} is misplaced in the table")
        end = offset + -(-(math.prod(dims) // per_block * block_bytes) // alignment) * alignment
    if layers is not None and n_tensors and len(blocks) != layers:
        raise GgufFormatError(f"the header says {layers} layers; the tensor table holds {len(blocks)}")
    if not n_tensors:  # a vocabulary-only file ends with its header
        return f.tell()
    return -(-f.tell() // alignment) * alignment + end
