"""Hypothesis settings and structure-aware strategies shared by the fuzz tests.

Profiles (HYPOTHESIS_PROFILE): "default" — derandomized, the same cases every run, sized so a
fuzz test takes well under a minute (CI is never a coin toss); "nightly" — random cases, many
more (`HYPOTHESIS_PROFILE=nightly pytest tests/test_fuzz_files.py`).
"""

from __future__ import annotations

import json
import os
from typing import Any

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

NIGHTLY = os.environ.get("HYPOTHESIS_PROFILE", "default") == "nightly"


def fuzz_settings(examples: int, nightly: int, **extra: Any) -> settings:
    """`examples` fixed cases by default; `nightly` random ones under the nightly profile."""
    return settings(
        max_examples=nightly if NIGHTLY else examples,
        derandomize=not NIGHTLY,
        deadline=None,
        database=None,
        suppress_health_check=[
            HealthCheck.too_slow,
            HealthCheck.data_too_large,
            HealthCheck.function_scoped_fixture,
        ],
        **extra,
    )


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=12),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=6,
)


def _paths(doc: Any, prefix: tuple = ()) -> list[tuple]:
    """Every place in a parsed JSON document, as a tuple of keys and indexes (() = the root)."""
    out = [prefix]
    if isinstance(doc, dict):
        for key, value in doc.items():
            out += _paths(value, (*prefix, key))
    elif isinstance(doc, list):
        for i, value in enumerate(doc):
            out += _paths(value, (*prefix, i))
    return out


def _edit(doc: Any, path: tuple, value: Any, delete: bool) -> Any:
    if not path:
        return value
    head, rest = path[0], path[1:]
    copy = dict(doc) if isinstance(doc, dict) else list(doc)
    if delete and not rest:
        del copy[head]
    else:
        copy[head] = _edit(copy[head], rest, value, delete)
    return copy


@st.composite
def mutated_json(draw: st.DrawFn, doc: Any) -> bytes:
    """`doc` (a valid parsed document) with one to three structure-aware mutations: a value
    replaced by any JSON value (another type, an extreme number, a nested object), a key
    removed, or the serialized text cut short or given a byte that is not UTF-8."""
    for _ in range(draw(st.integers(min_value=1, max_value=3))):
        path = draw(st.sampled_from(_paths(doc)))
        delete = bool(path) and draw(st.booleans())
        doc = _edit(doc, path, None if delete else draw(json_values), delete)
    data = json.dumps(doc, ensure_ascii=False, allow_nan=True).encode()
    damage = draw(st.sampled_from(["none", "none", "cut", "byte"]))
    if damage == "cut" and data:
        data = data[: draw(st.integers(min_value=0, max_value=len(data) - 1))]
    elif damage == "byte" and data:
        at = draw(st.integers(min_value=0, max_value=len(data) - 1))
        data = data[:at] + bytes([draw(st.integers(min_value=0x80, max_value=0xFF))]) + data[at + 1 :]
    return data
