"""Render a conversation as per-turn token segments using the model's own chat template.

The persistent context appends one segment at a time, so we need, for each step, exactly the text
the model's template would add: the system block, a user turn plus the assistant header, and the
closing text after a reply. `ChatFormat` finds those pieces by rendering the template around a
sentinel and taking differences, which works for any Jinja chat template (ChatML, Llama 3,
Gemma, ...). Models without a template get talk-llama's plain transcript (`Person: ... / Bot:`).

Each piece is a list of `Part`s: template scaffolding (tokenized with special tokens enabled) or
user/assistant content (tokenized with special tokens DISABLED, so text that looks like
`<|im_end|>` is quoted, not obeyed). Pure text; no llama calls. Thread-safe.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime

import jinja2
from jinja2.sandbox import ImmutableSandboxedEnvironment

log = logging.getLogger(__name__)
SENTINEL = "\u2063TLSENTINEL\u2063"


@dataclass(frozen=True)
class Part:
    text: str
    special: bool  # True: template scaffolding, parse special tokens; False: literal content


class TemplateError(ValueError):
    """The chat template cannot be rendered in per-turn segments."""


def _split(text: str, content: str) -> list[Part]:
    before, sep, after = text.partition(SENTINEL)
    if not sep:
        raise TemplateError("the chat template dropped the message content")
    parts = [Part(before, True), Part(content, False), Part(after, True)]
    return [p for p in parts if p.text]


class ChatFormat:
    """Per-turn segments for one chat style. Subclasses: JinjaChatFormat, PlainChatFormat."""

    stop_strings: tuple[str, ...] = ()

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


class JinjaChatFormat(ChatFormat):
    """Segments from a Jinja chat template (GGUF `tokenizer.chat_template`)."""

    def __init__(self, template: str, bos_token: str = "", eos_token: str = "") -> None:
        env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True)

        def raise_exception(message: str) -> None:
            raise TemplateError(message)

        env.globals["raise_exception"] = raise_exception
        env.globals["strftime_now"] = lambda fmt: datetime.now().strftime(fmt)
        try:
            self._tpl = env.from_string(template)
        except jinja2.TemplateError as exc:
            raise TemplateError(f"chat template does not parse: {exc}") from exc
        self._bos, self._eos = bos_token, eos_token
        self._sys = {"role": "system", "content": "S"}
        self._usr = {"role": "user", "content": "U"}
        self._asst = {"role": "assistant", "content": "A"}
        # Validate once, so a broken template is found at load time, not mid-conversation.
        self.system("x")
        self.user("x")
        self.reply_close()

    def _render(self, messages: list[dict[str, str]], gen: bool) -> str:
        try:
            return self._tpl.render(
                messages=messages,
                add_generation_prompt=gen,
                bos_token=self._bos,
                eos_token=self._eos,
            )
        except jinja2.TemplateError as exc:
            raise TemplateError(f"chat template failed to render: {exc}") from exc

    def _delta(self, base: str, full: str) -> str:
        if not full.startswith(base):
            raise TemplateError("chat template is not prefix-stable across turns")
        return full[len(base) :]

    def system(self, prompt: str) -> list[Part]:
        text = self._render([{"role": "system", "content": SENTINEL}], False)
        return _split(text, prompt)

    def user(self, text: str) -> list[Part]:
        # Rendered after a complete exchange, so templates that treat the first turn specially
        # (e.g. by injecting a default system prompt) give the steady-state segment.
        history = [self._sys, self._usr, self._asst]
        base = self._render(history, False)
        full = self._render([*history, {"role": "user", "content": SENTINEL}], True)
        return _split(self._delta(base, full), text)

    def note(self, text: str) -> list[Part] | None:
        history = [self._sys, self._usr, self._asst]
        try:
            base = self._render(history, False)
            full = self._render([*history, {"role": "system", "content": SENTINEL}], False)
            return _split(self._delta(base, full), text)
        except TemplateError as exc:
            log.info("the chat template takes no system message mid-conversation (%s): no memory note", exc)
            return None

    def reply_open(self) -> list[Part]:
        history = [self._sys, self._usr]
        opening = self._delta(self._render(history, False), self._render(history, True))
        return [Part(opening, True)] if opening else []

    def reply_close(self) -> list[Part]:
        history = [self._sys, self._usr]
        base = self._render(history, True)
        full = self._render([*history, {"role": "assistant", "content": SENTINEL}], False)
        delta = self._delta(base, full)
        head, _, tail = delta.partition(SENTINEL)
        if head:
            raise TemplateError("chat template adds text before the assistant content")
        return [Part(tail, True)] if tail else []


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
