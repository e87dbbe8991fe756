"""onnxruntime sessions that behave on a desktop: a fixed number of intra-op threads that sleep
when idle (onnxruntime's default spins them after every run: a core busy for nothing between a
voice's sentences or a turn model's pauses), CPU only, onnxruntime's own warnings kept out of
the user's log. Used by the natural voice, the turn model and the speech detector.

`open_session` blocks while the model loads; the session it returns may be used from one
thread at a time.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any


def open_session(model: bytes | Path, threads: int = 1, arena: bool = True) -> Any:
    """An `onnxruntime.InferenceSession` of `model` (its bytes or its file) with `threads`
    intra-op threads and no spinning. onnxruntime's exceptions (a damaged file) pass through.

    `arena=False` for inputs of any length: onnxruntime's CPU arena keeps the largest run's
    memory for the session's life (the natural voice: +455 MB RSS after one 60-word sentence,
    +16-53 MB without it, at the same speed on 12-word sentences and 1.4x the time on the long
    one, which plays for ~20 s). A fixed-size input (the turn model) keeps its arena."""
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.enable_cpu_mem_arena = arena
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    options.add_session_config_entry("session.inter_op.allow_spinning", "0")
    options.log_severity_level = 3
    source = str(model) if isinstance(model, Path) else model
    return ort.InferenceSession(source, sess_options=options, providers=["CPUExecutionProvider"])
