"""Quantize a ggml Whisper model (f16 weights -> q4_0, q5_0, q8_0 …) like whisper.cpp's `quantize`.

The arithmetic is ggml's own: `ggml_quantize_chunk` from the libggml-base that pywhispercpp ships
(ctypes), so the blocks are exactly what the whisper.cpp that loads them expects. The choice of
tensors follows whisper.cpp: the 2-D weight matrices (attention, MLP, token embedding) take the
new type; convolution kernels stay f16; biases, norms and positional embeddings stay f32.

Why: on AVX2 CPUs ggml repacks q4_0 weights into an interleaved layout with a fast matmul kernel;
tiny.en's encoder runs ~1.5x faster than f16 (bench/stt.py records speed and word error rate).
Rounding: every block's scale is chosen to minimize the squared error (see `quantize_matrix`),
not whisper.cpp's max/8 rule, which is what keeps q4_0 tiny.en about as accurate as f16.

Contract: `quantize()` blocks (about a second for tiny.en), is deterministic for a given ggml
build, and writes atomically (a failure never leaves a partial file).
"""

from __future__ import annotations

import ctypes
import importlib.util
import logging
import struct
from dataclasses import replace
from functools import cache
from pathlib import Path

import numpy as np

from app.catalog.ggml_whisper import (
    GGML_MAGIC,
    QNT_VERSION,
    QNT_VERSION_FACTOR,
    TYPES,
    TensorRecord,
    atomic_output,
    iter_tensors,
    read_preamble,
    write_tensor,
)

log = logging.getLogger(__name__)

QUANT_TYPES = ("q4_0", "q4_1", "q5_0", "q5_1", "q8_0")
_KEEP_F32 = {"encoder.positional_embedding", "decoder.positional_embedding"}


class QuantizeError(RuntimeError):
    """The model cannot be quantized (wrong input, unknown type, ggml library not found)."""


@cache
def _ggml() -> ctypes.CDLL:
    """libggml-base from the pywhispercpp install (the same ggml that will load the model)."""
    spec = importlib.util.find_spec("_pywhispercpp")
    if spec is None or spec.origin is None:
        raise QuantizeError("pywhispercpp is not installed; it provides ggml's quantizer")
    site = Path(spec.origin).parent
    candidates = sorted(site.glob("pywhispercpp.libs/libggml-base*")) + sorted(site.glob("libggml-base.*"))
    if not candidates:
        raise QuantizeError(f"libggml-base not found next to {spec.origin}")
    lib = ctypes.CDLL(str(candidates[0]))
    lib.ggml_quantize_chunk.restype = ctypes.c_size_t
    lib.ggml_quantize_chunk.argtypes = [
        ctypes.c_int,
        ctypes.c_void_p,
        ctypes.c_void_p,
        ctypes.c_int64,
        ctypes.c_int64,
        ctypes.c_int64,
        ctypes.c_void_p,
    ]
    lib.ggml_row_size.restype = ctypes.c_size_t
    lib.ggml_row_size.argtypes = [ctypes.c_int, ctypes.c_int64]
    return lib


def quantize_matrix(values: np.ndarray, qtype: str) -> bytes:
    """Quantize a 2-D float matrix (rows = ggml's ne[1]) to `qtype` blocks, row by row."""
    t = TYPES[qtype]
    x = np.ascontiguousarray(values, dtype=np.float32)
    n_rows, n_per_row = x.shape
    lib = _ggml()
    row_bytes = lib.ggml_row_size(t.type_id, n_per_row)
    if row_bytes != t.nbytes(n_per_row):
        raise QuantizeError(f"ggml's {qtype} row size {row_bytes} disagrees with the format table")
    out = ctypes.create_string_buffer(row_bytes * n_rows)
    # Uniform importance weights select ggml's search for the block scale that minimizes the
    # squared error; without them (whisper.cpp's `quantize`) it rounds with max/8, which read
    # 5-7.5 WER points worse on tiny.en (bench/stt.py). Types without a weighted path
    # ignore them.
    importance = np.ones(n_per_row, np.float32)
    written = lib.ggml_quantize_chunk(
        t.type_id, x.ctypes.data, out, 0, n_rows, n_per_row, importance.ctypes.data
    )
    if written != row_bytes * n_rows:
        raise QuantizeError(f"ggml wrote {written} bytes, expected {row_bytes * n_rows}")
    return out.raw


def _convert(rec: TensorRecord, qtype: str) -> TensorRecord:
    """The record as whisper.cpp expects it in a `qtype` model (weight matrices quantized)."""
    is_weight_matrix = len(rec.dims) == 2 and rec.name not in _KEEP_F32 and "conv" not in rec.name
    if not is_weight_matrix or rec.type.name != "f16":
        return rec
    values = np.frombuffer(rec.data, dtype="<f2")
    values = values.reshape(rec.dims[1], rec.dims[0])
    return TensorRecord(rec.name, rec.dims, TYPES[qtype], quantize_matrix(values, qtype))


def quantize(src: Path, dest: Path, qtype: str) -> int:
    """Write `src` (an f16 ggml Whisper model, as whisper.cpp and our converter make them)
    quantized to `qtype` at `dest`; returns the number of tensors quantized."""
    if qtype not in QUANT_TYPES:
        raise QuantizeError(f"unknown quantization {qtype!r}; choose one of {', '.join(QUANT_TYPES)}")
    if src.resolve() == dest.resolve():
        raise QuantizeError("source and destination are the same file")
    count = 0
    with open(src, "rb") as f:
        hp, preamble, _n_tok = read_preamble(f)
        if hp.weight_type.name != "f16":
            raise QuantizeError(f"{src} has {hp.weight_type.name} weights; quantize an f16 model")
        header = replace(hp, ftype=QNT_VERSION * QNT_VERSION_FACTOR + TYPES[qtype].ftype)
        with atomic_output(dest) as out:
            out.write(struct.pack("<i", GGML_MAGIC))
            out.write(header.pack())
            out.write(preamble)
            for rec in iter_tensors(f):
                new = _convert(rec, qtype)
                count += new is not rec
                write_tensor(out, new)
    log.info("quantized %s -> %s (%s, %d tensors)", src, dest, qtype, count)
    return count
