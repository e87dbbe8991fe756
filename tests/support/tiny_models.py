"""Tiny random-weight GGUF models of real architectures, with real tokenizers and chat templates.

The families users bring (Llama 3, Qwen2.5, Qwen3, Gemma 3, Phi-3, a recurrent Mamba) each
have a memory of their own in llama.cpp — a KV cache that shifts, a sliding-window cache, a
recurrent state — and a template of their own. Their weights are not on any registry this
project may reach, so the tests make each family here: the `gguf` package's writer, a vocab-only
file from llama.cpp's own test material and one of its real chat templates (both read from the
llama-cpp-python sdist the Makefile builds from, never copied into the tree), and random weights
of a few MB. Real llama.cpp loads and runs them; what they say is noise, which is all a test of
the engine's bookkeeping needs.

`tiny_model(family, folder)` writes (once per folder) and returns the file. Blocking.
"""

from __future__ import annotations

import subprocess
import sys
import tarfile
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

import gguf
import numpy as np

LLAMA_VERSION = "0.3.36"
SDIST_DIR = Path.home() / ".cache" / "talk-llama" / "sdist"
MODELS_IN_SDIST = f"llama_cpp_python-{LLAMA_VERSION}/vendor/llama.cpp/models"


@dataclass(frozen=True)
class Family:
    """One architecture as a tiny model: its vocab file, chat template and hyperparameters."""

    arch: str
    vocab: str  # ggml-vocab-<vocab>.gguf
    template: str  # templates/<template>.jinja
    layers: str = "attention"  # attention | phi3 | mamba
    extra: dict[str, int | float] = field(default_factory=dict)  # more `<arch>.` keys
    qkv_bias: bool = False
    qk_norm: bool = False
    post_norms: bool = False
    blocks: int = 2  # Gemma 3 needs 6: every 6th block attends globally, the rest in a window


FAMILIES: dict[str, Family] = {
    "llama": Family("llama", "llama-bpe", "meta-llama-Llama-3.1-8B-Instruct"),
    "qwen2": Family("qwen2", "qwen2", "Qwen-Qwen2.5-7B-Instruct", qkv_bias=True),
    "qwen3": Family("qwen3", "qwen2", "Qwen-Qwen3-0.6B", qk_norm=True),
    "gemma3": Family(
        "gemma3",
        "gemma-4",
        "google-gemma-2-2b-it",
        extra={"attention.sliding_window": 32},
        qk_norm=True,
        post_norms=True,
        blocks=6,
    ),
    "phi3": Family("phi3", "phi-3", "microsoft-Phi-3.5-mini-instruct", layers="phi3"),
    "mamba": Family(
        "mamba",
        "gpt-neox",
        "Qwen-Qwen2.5-7B-Instruct",
        layers="mamba",
        extra={"ssm.conv_kernel": 4, "ssm.inner_size": 64, "ssm.state_size": 8, "ssm.time_step_rank": 4},
    ),
}

N_EMBD, N_HEAD, N_HEAD_KV, N_FF = 32, 4, 2, 64


@cache
def sdist() -> Path:
    """llama-cpp-python's sdist (downloaded by the Makefile's llama-server build, else now)."""
    path = SDIST_DIR / f"llama_cpp_python-{LLAMA_VERSION}.tar.gz"
    if not path.is_file():
        pip = [sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--no-binary", ":all:"]
        subprocess.run([*pip, "-d", str(SDIST_DIR), f"llama-cpp-python=={LLAMA_VERSION}"], check=True)
    return path


@cache
def _members() -> dict[str, tarfile.TarInfo]:
    with tarfile.open(sdist()) as tf:
        return {m.name: m for m in tf.getmembers() if m.name.startswith(MODELS_IN_SDIST)}


def _read(name: str) -> bytes:
    with tarfile.open(sdist()) as tf:
        f = tf.extractfile(_members()[f"{MODELS_IN_SDIST}/{name}"])
        assert f is not None
        return f.read()


def template_names() -> list[str]:
    """Every chat template llama.cpp ships for its tests (file stems)."""
    prefix = f"{MODELS_IN_SDIST}/templates/"
    return sorted(n[len(prefix) : -6] for n in _members() if n.startswith(prefix) and n.endswith(".jinja"))


@cache
def template(name: str) -> str:
    return _read(f"templates/{name}.jinja").decode("utf-8")


def _copy_tokenizer(writer: gguf.GGUFWriter, vocab_file: Path) -> int:
    """The vocab file's tokenizer keys into `writer`; returns the vocabulary size."""
    reader = gguf.GGUFReader(vocab_file)
    n_vocab = 0
    for key, fld in reader.fields.items():
        if not key.startswith("tokenizer.") or key == "tokenizer.chat_template":
            continue
        value = fld.contents()
        if fld.types[0] == gguf.GGUFValueType.ARRAY:
            writer.add_key_value(key, value, fld.types[0], sub_type=fld.types[-1])
            if key == "tokenizer.ggml.tokens":
                n_vocab = len(value)
        else:
            writer.add_key_value(key, value, fld.types[0])
    return n_vocab


def tiny_model(family: str, folder: Path) -> Path:
    """The tiny model of `family` in `folder` (written once)."""
    fam = FAMILIES[family]
    out = folder / f"tiny-{family}.gguf"
    if out.is_file():
        return out
    vocab_file = folder / f"ggml-vocab-{fam.vocab}.gguf"
    vocab_file.write_bytes(_read(f"ggml-vocab-{fam.vocab}.gguf"))
    writer = gguf.GGUFWriter(str(out) + ".part", fam.arch)
    writer.add_name(f"tiny {family}")
    writer.add_context_length(4096)
    writer.add_embedding_length(N_EMBD)
    writer.add_block_count(fam.blocks)
    writer.add_feed_forward_length(N_FF)
    writer.add_head_count(N_HEAD)
    writer.add_head_count_kv(N_HEAD_KV)
    writer.add_layer_norm_rms_eps(1e-6)
    writer.add_rope_freq_base(10000.0)
    for key, value in fam.extra.items():
        if isinstance(value, float):
            writer.add_float32(f"{fam.arch}.{key}", value)
        else:
            writer.add_uint32(f"{fam.arch}.{key}", value)
    n_vocab = _copy_tokenizer(writer, vocab_file)
    writer.add_chat_template(template(fam.template))
    rng = np.random.default_rng(0)

    def add(name: str, *shape: int, ones: bool = False) -> None:
        data = np.ones(shape, np.float32) if ones else rng.normal(0, 0.02, shape).astype(np.float32)
        matmul = len(shape) == 2 and not ones and not name.endswith(("ssm_conv1d.weight", "ssm_a"))
        writer.add_tensor(name, data.astype(np.float16) if matmul else data)

    add("token_embd.weight", n_vocab, N_EMBD)
    add("output_norm.weight", N_EMBD, ones=True)
    for i in range(fam.blocks):
        for name, *shape in _layer(fam, i):
            add(name, *shape, ones=name.endswith("norm.weight") or name.endswith("ssm_d"))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    Path(str(out) + ".part").rename(out)
    return out


def _layer(fam: Family, i: int) -> list[tuple]:
    """(name, *shape) of one block's tensors (numpy order: rows first)."""
    b = f"blk.{i}."
    head = N_EMBD // N_HEAD
    kv = N_HEAD_KV * head
    if fam.layers == "mamba":
        d_in, d_state, dt_rank, d_conv = (
            int(fam.extra[k])
            for k in ("ssm.inner_size", "ssm.state_size", "ssm.time_step_rank", "ssm.conv_kernel")
        )
        return [
            (b + "attn_norm.weight", N_EMBD),
            (b + "ssm_in.weight", 2 * d_in, N_EMBD),
            (b + "ssm_conv1d.weight", d_in, d_conv),
            (b + "ssm_conv1d.bias", d_in),
            (b + "ssm_x.weight", dt_rank + 2 * d_state, d_in),
            (b + "ssm_dt.weight", d_in, dt_rank),
            (b + "ssm_dt.bias", d_in),
            (b + "ssm_a", d_in, d_state),
            (b + "ssm_d", d_in),
            (b + "ssm_out.weight", N_EMBD, d_in),
        ]
    out: list[tuple] = [(b + "attn_norm.weight", N_EMBD), (b + "ffn_norm.weight", N_EMBD)]
    if fam.layers == "phi3":
        return [
            *out,
            (b + "attn_qkv.weight", N_EMBD + 2 * kv, N_EMBD),
            (b + "attn_output.weight", N_EMBD, N_EMBD),
            (b + "ffn_up.weight", 2 * N_FF, N_EMBD),
            (b + "ffn_down.weight", N_EMBD, N_FF),
        ]
    out += [
        (b + "attn_q.weight", N_EMBD, N_EMBD),
        (b + "attn_k.weight", kv, N_EMBD),
        (b + "attn_v.weight", kv, N_EMBD),
        (b + "attn_output.weight", N_EMBD, N_EMBD),
        (b + "ffn_gate.weight", N_FF, N_EMBD),
        (b + "ffn_up.weight", N_FF, N_EMBD),
        (b + "ffn_down.weight", N_EMBD, N_FF),
    ]
    if fam.qkv_bias:
        out += [(b + "attn_q.bias", N_EMBD), (b + "attn_k.bias", kv), (b + "attn_v.bias", kv)]
    if fam.qk_norm:
        out += [(b + "attn_q_norm.weight", head), (b + "attn_k_norm.weight", head)]
    if fam.post_norms:
        out += [(b + "post_attention_norm.weight", N_EMBD), (b + "post_ffw_norm.weight", N_EMBD)]
    return out
