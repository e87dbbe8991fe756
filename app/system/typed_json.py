"""Dataclasses from JSON the user's disk holds (settings, saved conversations): only the fields
this version knows, and only values of the field's declared type. A hand-edited or damaged file
must not put a string where the app does arithmetic. Pure functions; any thread.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from typing import Any


def typed_fields(cls: type, data: Any) -> tuple[dict[str, Any], list[str]]:
    """The entries of `data` that are fields of the dataclass `cls` with a value its type
    accepts (an int where a float is declared is converted), and the names of the fields whose
    value was of the wrong type. Unknown keys are ignored. Raises ValueError when `data` is not
    a JSON object."""
    if not isinstance(data, dict):
        raise ValueError(f"expected an object, found {type(data).__name__}")
    hints = typing.get_type_hints(cls)
    kept: dict[str, Any] = {}
    wrong: list[str] = []
    for f in dataclasses.fields(cls):
        if f.name not in data:
            continue
        value, declared = data[f.name], hints[f.name]
        if not accepts(declared, value):
            wrong.append(f.name)
        else:
            kept[f.name] = float(value) if declared is float else value
    return kept, wrong


def accepts(declared: Any, value: Any) -> bool:
    """Does `value` (from json.loads) fit the annotation `declared`? bool is not a number here."""
    origin = typing.get_origin(declared)
    if origin in (typing.Union, types.UnionType):
        return any(accepts(arg, value) for arg in typing.get_args(declared))
    if declared is Any:
        return True
    if declared is type(None):
        return value is None
    if declared is float:
        return isinstance(value, int | float) and not isinstance(value, bool)
    if declared is int:
        return isinstance(value, int) and not isinstance(value, bool)
    base = origin or declared
    if not isinstance(value, base):
        return False
    if base is dict and (args := typing.get_args(declared)):
        return all(accepts(args[0], k) and accepts(args[1], v) for k, v in value.items())
    if base is list and (args := typing.get_args(declared)):
        return all(accepts(args[0], v) for v in value)
    return True
