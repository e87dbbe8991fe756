"""Opening an ONNX model file of the ears (the turn model, the speech detector) with errors
that say what to do: the file is checked against the catalog first (missing, truncated, wrong
checksum), then loaded by onnxruntime (one thread, no spinning: system/onnx_session.py).
Blocking; call from a worker thread."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from app.catalog.catalog import ModelError, check_file
from app.system.onnx_session import open_session


def open_checked(path: Path, kind: str, what: str, fetch: str, error: type[Exception]) -> Any:
    """An onnxruntime session of `path` (a catalog `kind`), or `error` with a sentence: the
    catalog's own for a bad file, else "the `what` … could not be loaded; fetch it again with:
    `fetch`"."""
    try:
        check_file(Path(path), kind)
    except ModelError as exc:
        raise error(str(exc)) from exc
    try:
        return open_session(Path(path), threads=1)
    except Exception as exc:  # onnxruntime's own types (NoSuchFile, InvalidProtobuf, ...)
        raise error(
            f"the {what} {path} could not be loaded ({str(exc).splitlines()[0]}); "
            f"fetch it again with: {fetch}"
        ) from exc
