"""Make a Piper voice report its phoneme durations (the alignment output), byte-stably.

Piper's VITS voices compute how many frames each phoneme lasts (the `Ceil` of the duration
predictor) but do not output it. piper's own `patch_voice_with_alignment` marks that tensor as a
graph output with the `onnx` package: it parses and re-serializes the 63 MB model, and the
result's bytes depend on the onnx version, so its sha256 cannot be pinned in the catalog.

Written here instead (about ten lines, no library does it this way): a protobuf parser merges a
message field that appears twice, and concatenates its repeated fields. So appending one more
`ModelProto.graph` (field 7) that holds only one more `GraphProto.output` (field 12, a
`ValueInfoProto` with just its name, field 1) to the file adds that output and changes nothing
else. Same input, same bytes out: `models fetch` pins the patched file's sha256.

Pure functions over bytes.
"""

from __future__ import annotations

# The duration tensor's name in the voices Piper's training scripts export (seen in
# en_US-joe-medium; piper's own patcher finds it by looking for the model's single Ceil).
PIPER_DURATIONS = "/Ceil_output_0"


def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        byte, n = n & 0x7F, n >> 7
        out.append(byte | (0x80 if n else 0))
        if not n:
            return bytes(out)


def _field(number: int, payload: bytes) -> bytes:
    """A length-delimited protobuf field (wire type 2)."""
    return _varint(number << 3 | 2) + _varint(len(payload)) + payload


def alignment_patch(tensor: str = PIPER_DURATIONS) -> bytes:
    """The bytes to append to an ONNX model so that `tensor` becomes one more output."""
    value_info = _field(1, tensor.encode("utf-8"))
    return _field(7, _field(12, value_info))


def with_alignment_output(model: bytes, tensor: str = PIPER_DURATIONS) -> bytes:
    """`model` (the bytes of an .onnx file) with `tensor` added as a graph output."""
    return model + alignment_patch(tensor)
