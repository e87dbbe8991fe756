"""Conversation export: Markdown for people, JSON for programs. Pure functions."""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import datetime

from app.brain.records import Message


def to_markdown(messages: Sequence[Message], person: str, bot: str) -> str:
    lines = [f"# Conversation with {bot}", ""]
    for m in messages:
        who = m.name or (person if m.role == "user" else bot)
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
                    "name": m.name or (person if m.role == "user" else bot),
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
