"""Conversation export: Markdown for people, JSON for programs. Pure functions."""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from datetime import datetime
from pathlib import Path

from app.brain.memory import known_facts
from app.brain.records import Message
from app.system.paths import write_private


def speaker_name(role: str, name: str, person: str, bot: str) -> str:
    """Who said a message: the `name` it was said under, else today's name for its `role`
    (older sessions did not record names)."""
    return name or (person if role == "user" else bot)


def to_markdown(messages: Sequence[Message], person: str, bot: str, forgotten: Iterable[str] = ()) -> str:
    lines = [f"# Conversation with {bot}", ""]
    for m in messages:
        who = speaker_name(m.role, m.name, person, bot)
        when = datetime.fromtimestamp(m.time).strftime("%Y-%m-%d %H:%M")
        note = " *(interrupted)*" if m.interrupted else ""
        lines += [f"**{who}** ({when}){note}:", "", m.text, ""]
        if m.unspoken:
            lines += [f"*(not spoken: {m.unspoken})*", ""]
    if facts := known_facts(messages, forgotten):
        lines += [f"## What {bot} remembers", "", *(f"- {f.sentence}" for f in facts), ""]
    return "\n".join(lines)


def to_json(messages: Sequence[Message], person: str, bot: str, forgotten: Iterable[str] = ()) -> str:
    return json.dumps(
        {
            "person": person,
            "bot": bot,
            "messages": [
                {
                    "role": m.role,
                    "name": speaker_name(m.role, m.name, person, bot),
                    "text": m.text,
                    "time": m.time,
                    "interrupted": m.interrupted,
                    **({"unspoken": m.unspoken} if m.unspoken else {}),
                }
                for m in messages
            ],
            "remembered": [
                {"key": f.key, "kind": f.kind, "value": f.value, "sentence": f.sentence}
                for f in known_facts(messages, forgotten)
            ],
        },
        ensure_ascii=False,
        indent=1,
    )


def export(
    messages: Sequence[Message], person: str, bot: str, path: Path, fmt: str, forgotten: Iterable[str] = ()
) -> str | None:
    """Write the conversation to `path` as Markdown (`fmt` "md") or JSON, with what the memory
    note holds (memory.py; `forgotten` keys left out), privately (0600, atomic). None on
    success, else why it could not be written."""
    kept = list(forgotten)
    text = (to_markdown if fmt == "md" else to_json)(messages, person, bot, kept)
    try:
        write_private(path, text)
    except OSError as exc:
        return str(exc)
    return None
