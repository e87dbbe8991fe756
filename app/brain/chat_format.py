"""Render a conversation as per-turn token segments using the model's own chat template.

The persistent context appends one segment at a time, so we need, for each step, exactly the text
the model's template would add: the system block, a user turn plus the assistant header, and the
closing text after a reply. `JinjaChatFormat` (jinja_format.py) finds those pieces in the
model's own template; models without a usable template get talk-llama's plain transcript
(`Person: ... / Bot:`, `PlainChatFormat` here).

Each piece is a list of `Part`s: template scaffolding (tokenized with special tokens enabled) or
user/assistant content (tokenized with special tokens DISABLED, so text that looks like
`<|im_end|>` is quoted, not obeyed). Pure text; no llama calls. Thread-safe.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Part:
    text: str
    special: bool  # True: template scaffolding, parse special tokens; False: literal content


class TemplateError(ValueError):
    """The chat template cannot be rendered in per-turn segments."""


def split_at(text: str, sentinel: str, content: str) -> list[Part]:
    """`text` with `content` in place of `sentinel`: scaffolding around literal content."""
    before, sep, after = text.partition(sentinel)
    if not sep:
        raise TemplateError("the chat template dropped the message content")
    parts = [Part(before, True), Part(content, False), Part(after, True)]
    return [p for p in parts if p.text]


class ChatFormat:
    """Per-turn segments for one chat style. Subclasses: JinjaChatFormat, PlainChatFormat."""

    stop_strings: tuple[str, ...] = ()
    thinks = False  # a reasoning template: replies may open with a thinking block (thinking.py)
    thinking_opened = False  # the reply prompt opens the thinking block itself
    drops_past_thinking = False  # the template leaves earlier replies' thinking out
    thought_opener = ""  # the end of the reply prompt that opens a thinking block (taken out too)
    marks = ("<think>", "</think>")  # a thinking block's opening and closing

    def system(self, prompt: str) -> list[Part]:
        raise NotImplementedError

    def user(self, text: str) -> list[Part]:
        """The user's turn plus the assistant header that the reply continues."""
        raise NotImplementedError

    def reply_close(self) -> list[Part]:
        """What follows the assistant's content to close its turn (e.g. `<|im_end|>\\n`)."""
        raise NotImplementedError

    def note(self, text: str) -> list[Part] | None:
        """A system message in the middle of the conversation (the memory note, memory.py), as
        the template renders one after a complete exchange; None when the template refuses
        system messages there (then the conversation goes on without a note)."""
        raise NotImplementedError

    def reply_open(self) -> list[Part]:
        """The assistant header that ends every user turn and that the reply continues (e.g.
        `<|im_start|>assistant\\n`); may be empty. A recall note goes right before it."""
        raise NotImplementedError

    def user_head(self) -> list[Part]:
        """The fixed opening of every user turn, before its content (e.g. `<|im_start|>user\\n`);
        may be empty. It does not depend on the text, so it can be evaluated ahead of time."""
        marker = "\u2063"  # any content: only the parts before it are taken
        parts = self.user(marker)
        return parts[: parts.index(Part(marker, False))]


class PlainChatFormat(ChatFormat):
    """talk-llama's transcript format for models without a chat template."""

    def __init__(self, person: str, bot: str) -> None:
        self.person, self.bot = person, bot
        self.stop_strings = (f"\n{person}:",)

    def system(self, prompt: str) -> list[Part]:
        return [Part(prompt.rstrip() + "\n", False)]

    def user(self, text: str) -> list[Part]:
        return [Part(f"\n{self.person}: ", False), Part(text, False), Part(f"\n{self.bot}:", False)]

    def note(self, text: str) -> list[Part] | None:
        return [Part(f"\n({text.strip()})\n", False)]

    def reply_open(self) -> list[Part]:
        return [Part(f"\n{self.bot}:", False)]

    def reply_close(self) -> list[Part]:
        return []
