"""whisper.cpp's ggml model file: header, tensor records and the tensor types they may hold.

Layout (little-endian): magic 0x67676d6c; 11 int32 hparams (`Hparams`); mel filters (n_mel,
n_fft, then n_mel*n_fft float32); vocab (count, then length + bytes per token); then tensor
records until EOF: n_dims, name length, type, dims (fastest first), name, data. `ftype` in the
header says which type the 2-D weight matrices have; for quantized files whisper.cpp stores
`QNT_VERSION * 1000 + ftype`.

Used by the CT2 converter (writing) and the quantizer (reading and writing). Pure functions over
files; safe from any thread.
"""

from __future__ import annotations

import os
import struct
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

GGML_MAGIC = 0x67676D6C
QNT_VERSION_FACTOR = 1000
QNT_VERSION = 2


class GgmlFormatError(RuntimeError):
    """The file is not a ggml Whisper model this module understands."""


@dataclass(frozen=True)
class TensorType:
    """One ggml tensor type: its id in tensor records, its model `ftype` id (the header value
    for a file whose weight matrices have this type), and its block geometry."""

    name: str
    type_id: int
    ftype: int
    block: int
    block_bytes: int

    def nbytes(self, n_elements: int) -> int:
        if n_elements % self.block:
            raise GgmlFormatError(f"{n_elements} elements do not fill {self.name} blocks of {self.block}")
        return n_elements // self.block * self.block_bytes


# ggml's type table for the types whisper.cpp models use (ggml.h: enum ggml_type / ggml_ftype).
TYPES = {
    t.name: t
    for t in (
        TensorType("f32", 0, 0, 1, 4),
        TensorType("f16", 1, 1, 1, 2),
        TensorType("q4_0", 2, 2, 32, 18),
        TensorType("q4_1", 3, 3, 32, 20),
        TensorType("q5_0", 6, 8, 32, 22),
        TensorType("q5_1", 7, 9, 32, 24),
        TensorType("q8_0", 8, 7, 32, 34),
    )
}
TYPES_BY_ID = {t.type_id: t for t in TYPES.values()}


@dataclass(frozen=True)
class Hparams:
    """whisper.cpp header fields, in file order."""

    n_vocab: int
    n_audio_ctx: int
    n_audio_state: int
    n_audio_head: int
    n_audio_layer: int
    n_text_ctx: int
    n_text_state: int
    n_text_head: int
    n_text_layer: int
    n_mels: int
    ftype: int = 1

    def pack(self) -> bytes:
        return struct.pack("<11i", *(getattr(self, f) for f in self.__dataclass_fields__))

    @property
    def weight_type(self) -> TensorType:
        """The type of the model's weight matrices, from `ftype`."""
        base = self.ftype % QNT_VERSION_FACTOR
        for t in TYPES.values():
            if t.ftype == base:
                return t
        raise GgmlFormatError(f"unsupported model ftype {self.ftype}")


@dataclass(frozen=True)
class TensorRecord:
    """A tensor as stored: `dims` are ggml's (fastest-varying first); `data` is raw bytes."""

    name: str
    dims: tuple[int, ...]
    type: TensorType
    data: bytes

    @property
    def n_elements(self) -> int:
        n = 1
        for d in self.dims:
            n *= d
        return n


def write_tensor(f: BinaryIO, rec: TensorRecord) -> None:
    name = rec.name.encode("utf-8")
    f.write(struct.pack("<3i", len(rec.dims), len(name), rec.type.type_id))
    f.write(struct.pack(f"<{len(rec.dims)}i", *rec.dims))
    f.write(name)
    f.write(rec.data)


def _unpack(f: BinaryIO, fmt: str) -> tuple:
    size = struct.calcsize(fmt)
    raw = f.read(size)
    if len(raw) != size:
        raise GgmlFormatError("file ends inside a header field (truncated)")
    return struct.unpack(fmt, raw)


def read_preamble(f: BinaryIO) -> tuple[Hparams, bytes, int]:
    """Read magic and hparams; return them, the raw filters+vocab bytes that follow, and the
    vocab size. Leaves `f` at the first tensor record."""
    (magic,) = _unpack(f, "<i")
    if magic != GGML_MAGIC:
        raise GgmlFormatError("not a ggml Whisper file (bad magic)")
    hp = Hparams(*_unpack(f, "<11i"))
    start = f.tell()
    n_mel, n_fft = _unpack(f, "<2i")
    if not (0 < n_mel <= 1024 and 0 < n_fft <= 4096):
        raise GgmlFormatError(f"implausible mel filter bank ({n_mel} x {n_fft})")
    f.seek(4 * n_mel * n_fft, os.SEEK_CUR)
    (n_tok,) = _unpack(f, "<i")
    if not 0 <= n_tok <= 1_000_000:
        raise GgmlFormatError(f"implausible vocabulary size {n_tok}")
    for _ in range(n_tok):
        (n,) = _unpack(f, "<i")
        if not 0 <= n <= 1024:
            raise GgmlFormatError("corrupt vocabulary entry")
        f.seek(n, os.SEEK_CUR)
    end = f.tell()
    f.seek(start)
    raw = f.read(end - start)
    if len(raw) != end - start:
        raise GgmlFormatError("file ends inside the vocabulary (truncated)")
    return hp, raw, n_tok


def iter_tensors(f: BinaryIO, with_data: bool = True) -> Iterator[TensorRecord]:
    """Tensor records from the current position to EOF (data empty when `with_data` is False)."""
    while header := f.read(12):
        if len(header) != 12:
            raise GgmlFormatError("file ends inside a tensor header (truncated)")
        n_dims, name_len, type_id = struct.unpack("<3i", header)
        if type_id not in TYPES_BY_ID or not 1 <= n_dims <= 4 or not 0 < name_len < 256:
            raise GgmlFormatError(f"unsupported tensor record (type {type_id}, {n_dims} dims)")
        dims = _unpack(f, f"<{n_dims}i")
        if min(dims) <= 0:
            raise GgmlFormatError(f"tensor with dimensions {dims}")
        name = f.read(name_len).decode("utf-8")
        ttype = TYPES_BY_ID[type_id]
        rec = TensorRecord(name, dims, ttype, b"")
        nbytes = ttype.nbytes(rec.n_elements)
        if with_data:
            data = f.read(nbytes)
            if len(data) != nbytes:
                raise GgmlFormatError(f"tensor {name} is truncated")
            rec = TensorRecord(name, dims, ttype, data)
        else:
            f.seek(nbytes, os.SEEK_CUR)
        yield rec


def check_structure(path: Path) -> int:
    """Walk a ggml Whisper file's header, vocabulary and tensor table without reading the data;
    make sure every tensor's data lies inside the file and the header's dimensions are those
    of its tensors (whisper.cpp trusts both: a truncated file or a header that disagrees with
    its tensors crashes it). Returns the tensor count; raises GgmlFormatError."""
    size = path.stat().st_size
    with open(path, "rb") as f:
        hp, raw, n_tok = read_preamble(f)
        if min(hp.n_vocab, hp.n_audio_ctx, hp.n_audio_state, hp.n_text_layer, hp.n_mels) <= 0 or n_tok < 0:
            raise GgmlFormatError("implausible model dimensions (not a Whisper model)")
        shapes: dict[str, tuple[int, ...]] = {}
        wtype = next((t for t in TYPES.values() if t.ftype == hp.ftype % QNT_VERSION_FACTOR), None)
        for rec in iter_tensors(f, with_data=False):
            shapes[rec.name] = rec.dims
            if (
                _is_weight_matrix(rec) and rec.type != wtype
            ):  # whisper.cpp allocates them as the header's type
                raise GgmlFormatError(
                    f"tensor {rec.name} is {rec.type.name}; the header says weights are {hp.ftype}"
                )
            if f.tell() > size:
                raise GgmlFormatError(f"tensor {rec.name} is truncated (the file ends before its data)")
    if not shapes:
        raise GgmlFormatError("no tensors (truncated after the vocabulary)")
    _check_dimensions(hp, struct.unpack_from("<2i", raw), n_tok, shapes)
    return len(shapes)


def _is_weight_matrix(rec: TensorRecord) -> bool:
    """The tensors stored in the header's weight type (ftype); the rest are f32 or f16."""
    return len(rec.dims) == 2 and (
        rec.name == "decoder.token_embedding.weight"
        or (".blocks." in rec.name and rec.name.endswith(".weight"))
    )


N_FFT_BINS = 201  # whisper's STFT: 400-point frames, 201 frequency bins


def _check_dimensions(
    hp: Hparams, mel: tuple[int, int], n_tok: int, shapes: dict[str, tuple[int, ...]]
) -> None:
    """The header's sizes against the tensors that carry them (as whisper.cpp builds them)."""
    a, t = hp.n_audio_state, hp.n_text_state
    expected = {
        "encoder.conv1.weight": (3, hp.n_mels, a),
        "encoder.conv2.weight": (3, a, a),
        "encoder.positional_embedding": (a, hp.n_audio_ctx),
        "decoder.positional_embedding": (t, hp.n_text_ctx),
        "decoder.token_embedding.weight": (t, hp.n_vocab),
    }
    for name, dims in expected.items():
        if shapes.get(name) != dims:
            raise GgmlFormatError(f"the header does not match tensor {name} ({shapes.get(name)} vs {dims})")
    if mel != (hp.n_mels, N_FFT_BINS):
        raise GgmlFormatError(f"a mel filter bank of {mel[0]} x {mel[1]} for {hp.n_mels} mel bands")
    if n_tok > hp.n_vocab or (hp.ftype % QNT_VERSION_FACTOR) not in {t.ftype for t in TYPES.values()}:
        raise GgmlFormatError(
            f"vocabulary of {n_tok} for {hp.n_vocab} tokens, or unknown weight type {hp.ftype}"
        )
    for side, state, heads, layers in (("encoder", a, hp.n_audio_head, hp.n_audio_layer),
                                       ("decoder", t, hp.n_text_head, hp.n_text_layer)):  # fmt: skip
        if not (0 < heads <= state and state % heads == 0):
            raise GgmlFormatError(f"{heads} attention heads for a width of {state}")
        blocks = {n.split(".")[2] for n in shapes if n.startswith(f"{side}.blocks.")}
        if blocks != {str(i) for i in range(layers)}:
            raise GgmlFormatError(f"the header says {layers} {side} layers; the file has {len(blocks)}")
        for name, dims in shapes.items():
            if name.startswith(f"{side}.blocks.") and not set(dims) <= {state, 4 * state}:
                raise GgmlFormatError(f"tensor {name} is {dims} in a model of width {state}")


def read_header(path: Path) -> tuple[Hparams, int, int]:
    """Read a ggml Whisper header; returns (hparams, n_tokens in the file vocab, tensor count)."""
    with open(path, "rb") as f:
        hp, _raw, n_tok = read_preamble(f)
        count = sum(1 for _ in iter_tensors(f, with_data=False))
    return hp, n_tok, count


@contextmanager
def atomic_output(dest: Path) -> Iterator[BinaryIO]:
    """Write `dest` through a temporary name in the same folder, renamed into place only when the
    block completes; a failure never leaves a partial file."""
    tmp = dest.with_name(f".{dest.name}.part-{os.getpid()}")
    try:
        with open(tmp, "wb") as f:
            yield f
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, dest)
    finally:
        tmp.unlink(missing_ok=True)
