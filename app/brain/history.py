"""Conversation export: Markdown for people, JSON for programs. Pure functions."""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path

from app.brain.records import Message
from app.system.paths import write_private


def speaker_name(role: str, name: str, person: str, bot: str) -> str:
    """Who said a message: the `name` it was said under, else today's name for its `role`
    (older sessions did not record names)."""
    return name or (person if role == "user" else bot)


def to_markdown(messages: Sequence[Message], person: str, bot: str) -> str:
    lines = [f"# Conversation with {bot}", ""]
    for m in messages:
        who = speaker_name(m.role, m.name, person, bot)
        when = datetime.fromtimestamp(m.time).strftime("%Y-%m-%d %H:%M")
        note = " *(interrupted)*" if m.interrupted else ""
        lines += [f"**{who}** ({when}){note}:", "", m.text, ""]
        if m.unspoken:
            lines += [f"*(not spoken: {m.unspoken})*", ""]
    return "\n".join(lines)


def to_json(messages: Sequence[Message], person: str, bot: str) -> str:
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
        },
        ensure_ascii=False,
        indent=1,
    )


def export(messages: Sequence[Message], person: str, bot: str, path: Path, fmt: str) -> str | None:
    """Write the conversation to `path` as Markdown (`fmt` "md") or JSON, privately (0600,
    atomic). None on success, else why it could not be written."""
    text = to_markdown(messages, person, bot) if fmt == "md" else to_json(messages, person, bot)
    try:
        write_private(path, text)
    except OSError as exc:
        return str(exc)
    return None
