"""The third-party notices name every Python distribution the app needs at run time, and the
parts that are in the bundle without a package of their own (app/system/notices.py)."""

from __future__ import annotations

from app.system import notices


def test_every_runtime_distribution_has_a_row() -> None:
    text = notices.NOTICES.read_text(encoding="utf-8")
    assert notices.missing(text) == [], "run `python -m app.system.notices --write`"
    closure = notices.closure()
    native = {"piper-tts", "onnxruntime", "pyside6-essentials", "llama-cpp-python", "pywhispercpp"}
    assert native <= set(closure)
    assert "pytest" not in closure  # extras (test, dev, bundle) are not shipped


def test_a_missing_row_is_named() -> None:
    text = notices.NOTICES.read_text(encoding="utf-8")
    without = "\n".join(line for line in text.splitlines() if not line.startswith("| onnxruntime |"))
    assert notices.missing(without) == ["onnxruntime"]


def test_the_bundle_licence_and_the_native_parts_are_stated() -> None:
    text = notices.NOTICES.read_text(encoding="utf-8")
    assert "bundle as a whole is distributed under\nthe GNU GPL version 3 or later" in text
    for part in ("Qt 6", "llama.cpp", "whisper.cpp", "espeak-ng", "PortAudio", "ONNX Runtime", "CPython"):
        assert f"| {part}" in text
