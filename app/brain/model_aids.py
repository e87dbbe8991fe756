"""Conversation aids a small model needs, switched on per model by what was measured for it.

Three aids were built for the built-in 135M model, and each was measured there (docs/
conversation.md): the reply to "repeat after me" or "what is your name" opens with the answer
(`forced_openings`: repeat_request.py, name_question.py); a turn that asks about a remembered
fact gets a note of just that fact right before the reply (`recall_note`: recall.py); the
sampler reads the model's own earlier replies so that DRY stops it copying them
(`own_replies_dry`: sampling.py); and the memory note is written at the head of the turn after a
shift, near the question (`note_at_turn`), not beside the system prompt. A real instruct model
does not need them the same way, and two of them hurt it: a note right before its words or its
reply is text it reads out.

Which aids a model gets: the catalog entry's `aids` (measured for that model by
`bench/model_memory.py`), else those of the measured catalog model nearest in size (by parameter
count, on a log scale), so a user's 1B GGUF is treated like the 0.5B, not like the 135M.
`LlmConfig.aids` overrides it. Pure functions over the catalog; any thread.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields
from pathlib import Path

from app.catalog.catalog import ModelError, load_catalog


@dataclass(frozen=True)
class Aids:
    forced_openings: bool = True
    recall_note: bool = True
    own_replies_dry: bool = True
    # The memory note at the head of the turn after a shift, near the question (False: beside
    # the system prompt, memory_context.py): where the 135M was measured; the 0.5B recites it.
    note_at_turn: bool = True


def _measured() -> list[tuple[str, int, Aids]]:
    """(file, parameter count, aids) of every catalog model with measured aids."""
    try:
        catalog = load_catalog()
    except ModelError:
        return []
    names = {f.name for f in fields(Aids)}
    return [
        (e.file, int(e.aids["params"]), Aids(**{k: bool(v) for k, v in e.aids.items() if k in names}))
        for e in catalog
        if e.kind == "llm" and e.aids and "params" in e.aids
    ]


def aids_for(model: Path, n_params: int) -> Aids:
    """The aids for `model` (its file name in the catalog, else the nearest measured size)."""
    measured = _measured()
    for file, _params, aids in measured:
        if file == model.name:
            return aids
    if not measured or n_params <= 0:
        return Aids()
    return min(measured, key=lambda m: abs(math.log(m[1]) - math.log(n_params)))[2]
