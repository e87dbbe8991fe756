"""Per-turn segments from a model's Jinja chat template (GGUF `tokenizer.chat_template`).

The persistent context appends one segment at a time, so it needs, for each step, exactly the
text the template would add. One render of a whole conversation with a sentinel as every
message's content — system, user, assistant, user, with the reply prompt — is cut at the
sentinels into the pieces: the system block, the user turn (closing, reply prompt), the closing
after a reply. Rendered again piece by piece, they must give the same text: a template that
does not (it moves the system prompt into the newest user message, say) is refused at load with
one sentence naming what it cannot do, and the conversation uses the plain transcript format.

What templates do that this takes in:
- **The newest reply written apart.** Many templates render the last message differently:
  Phi-3.5 adds the end-of-text token after it, Qwen3 and DeepSeek-R1 keep its thinking (and
  drop the thinking of every earlier reply). The closing of a reply is the part of the newest
  reply's closing that earlier replies share; thinking before the newest reply's content is
  what the model writes itself (`drops_past_thinking`: the conversation takes it out of the
  cache after the reply, as the template would render it).
- **No system role** (Gemma): the system prompt is written as the conversation's first user
  message, closed as the template closes one; later turns are shifted out after it.
- HF's extensions: `break`/`continue` (jinja2's loop controls) and `{% generation %}` blocks
  (a marker for training masks; rendered as its body).

Pure text; no llama calls. Thread-safe once built.
"""

from __future__ import annotations

import logging
from datetime import datetime
from typing import Any

import jinja2
from jinja2 import nodes
from jinja2.ext import Extension
from jinja2.parser import Parser
from jinja2.sandbox import ImmutableSandboxedEnvironment

from app.brain.chat_format import ChatFormat, Part, TemplateError, split_at
from app.brain.thinking import MARKS, marks_of, thinking_opened

log = logging.getLogger(__name__)

# One invisible sentinel per message of the probe conversation.
_S = {k: f"\u2063TL{k}\u2063" for k in ("sys", "u1", "a1", "u2", "note")}
Msg = dict[str, str]
ACK = "Understood."  # the reply to a system prompt written as a user message (no system role)


class _GenerationTag(Extension):
    """`{% generation %}…{% endgeneration %}` (HF's assistant-mask marker): its body, as is."""

    tags = {"generation"}  # noqa: RUF012 (jinja2 declares it so)

    def parse(self, parser: Parser) -> nodes.Node:
        lineno = next(parser.stream).lineno
        body = parser.parse_statements(("name:endgeneration",), drop_needle=True)
        return nodes.Scope(body, lineno=lineno)


def _common_head(a: str, b: str) -> str:
    """The longest common prefix of `a` and `b`, cut back to a line or tag end when it stops
    inside one (`<|end|>\\n</s>` and `<|end|>\\n<|user|>` share `<|end|>\\n`)."""
    n = 0
    while n < min(len(a), len(b)) and a[n] == b[n]:
        n += 1
    if n in (len(a), len(b)):
        return a[:n]
    cut = max(a.rfind("\n", 0, n), a.rfind(">", 0, n))
    return a[: cut + 1]


class JinjaChatFormat(ChatFormat):
    """Segments from a Jinja chat template. `thinking`: the template's `enable_thinking`
    (None: the template's own default). Raises TemplateError (one sentence) when the template
    cannot be kept turn by turn."""

    def __init__(self, template: str, bos_token: str = "", eos_token: str = "", thinking: bool | None = None):
        env = ImmutableSandboxedEnvironment(
            trim_blocks=True, lstrip_blocks=True, extensions=["jinja2.ext.loopcontrols", _GenerationTag]
        )

        def raise_exception(message: str) -> None:
            raise TemplateError(message)

        env.globals["raise_exception"] = raise_exception
        env.globals["strftime_now"] = lambda fmt: datetime.now().strftime(fmt)
        try:
            self._tpl = env.from_string(template)
        except jinja2.TemplateError as exc:
            raise TemplateError(f"the chat template does not parse ({exc})") from exc
        self._vars: dict[str, Any] = {"bos_token": bos_token, "eos_token": eos_token}
        marks = marks_of(template)  # a reasoning template's thinking marks (thinking.py)
        self.thinks, self.marks = marks is not None, marks or MARKS[0]
        if thinking is not None:
            self._vars["enable_thinking"] = thinking
        self._derive()

    # ----- rendering ----------------------------------------------------------------------
    def _render(self, messages: list[dict[str, str]], gen: bool) -> str:
        try:
            return self._tpl.render(messages=messages, add_generation_prompt=gen, **self._vars)
        except TemplateError:
            raise
        except Exception as exc:  # a template is foreign code: any error it raises is its own
            raise TemplateError(f"the chat template failed to render ({type(exc).__name__}: {exc})") from exc

    def _derive(self) -> None:
        """Cut the probe conversation into the pieces (see the module docstring)."""
        try:
            self._derive_roles()
        except TemplateError:
            raise
        except (ValueError, IndexError) as exc:  # a piece not where a chat template puts it
            why = f"the chat template writes turns in an order talk-llama cannot follow ({exc})"
            raise TemplateError(why) from exc

    def _derive_roles(self) -> None:
        try:
            self._derive_with([{"role": "system", "content": _S["sys"]}])
        except TemplateError as exc:  # no system role, or one folded into the first user turn
            try:
                self._derive_with(
                    [{"role": "user", "content": _S["sys"]}, {"role": "assistant", "content": ACK}]
                )
            except TemplateError:
                raise exc from None
            log.info("chat template: no system role (%s); the system prompt is the first user message", exc)

    def _derive_with(self, pre: list[dict[str, str]]) -> None:
        s = _S
        user1 = {"role": "user", "content": s["u1"]}
        reply = {"role": "assistant", "content": s["a1"]}
        full = self._render([*pre, user1, reply, {"role": "user", "content": s["u2"]}], True)
        for key in ("sys", "u1", "a1", "u2"):
            if full.count(s[key]) != 1:
                raise TemplateError(f"the chat template does not write each message once ({key})")
        # The reply prompt, and the newest reply as the template closes it. A prompt that writes
        # a thinking block, open (DeepSeek-R1) or empty (QwQ, Gemma 4 with thinking off), is
        # followed by replies without it: the conversation takes it out again after the reply.
        asked = self._render([*pre, user1], True)
        newest = self._render([*pre, user1, reply], False)
        bare = self._try_render([*pre, user1])
        opening = asked[len(bare) :] if bare is not None and asked.startswith(bare) else ""
        head, _, rest = full.partition(s["a1"])  # the conversation up to the first reply's content
        prefix, opener = asked, ""
        if head != asked and self.marks[0] in opening:
            prefix = asked[: len(asked) - len(opening) + opening.rfind(self.marks[0])]
            opener = asked[len(prefix) :]
        if head != prefix:
            raise TemplateError("the chat template writes past turns differently once a reply follows them")
        if not newest.startswith(prefix):
            raise TemplateError("the chat template writes a reply that does not follow its own reply prompt")
        before, _, newest_tail = newest[len(prefix) :].partition(s["a1"])
        if before.strip() and self.marks[1] not in before:
            raise TemplateError(f"the chat template writes {before.strip()!r} before every reply")
        close = _common_head(newest_tail, rest)
        user_head, _, user_tail = rest[len(close) :].partition(s["u2"])
        sys_and_head = asked[: asked.index(s["u1"])]
        if not sys_and_head.endswith(user_head) or asked[asked.index(s["u1"]) + len(s["u1"]) :] != user_tail:
            raise TemplateError("the chat template writes the first user turn unlike the others")
        system = sys_and_head[: len(sys_and_head) - len(user_head)]
        if s["sys"] not in system:
            raise TemplateError(
                "the chat template moves the system prompt away from the conversation's start"
            )
        self._system, self._close, self._user_head, self._user_tail = system, close, user_head, user_tail
        self.thought_opener = opener
        self.drops_past_thinking = self.marks[1] in before or bool(opener)
        self._open = opening if user_tail.endswith(opening) else ""
        self._note = None if pre[0]["role"] != "system" else self._note_block(pre, user1, reply)
        self.thinking_opened = thinking_opened(self._open, self.marks)

    def _try_render(self, messages: list[dict[str, str]]) -> str | None:
        try:
            return self._render(messages, False)
        except TemplateError:
            return None

    def _note_block(
        self, pre: list[dict[str, str]], user1: dict[str, str], reply: dict[str, str]
    ) -> str | None:
        """A system message between two exchanges, as the template writes one (None: refused)."""
        s = _S
        note = {"role": "system", "content": s["note"]}
        try:
            full = self._render([*pre, user1, reply, note, {"role": "user", "content": s["u2"]}], True)
        except TemplateError as exc:
            log.info("the chat template takes no system message mid-conversation (%s): no memory note", exc)
            return None
        after = full.partition(s["a1"])[2]
        end = after.find(self._user_head + s["u2"])
        if not after.startswith(self._close) or end < 0:
            return None
        block = after[len(self._close) : end]
        return block if block.count(s["note"]) == 1 else None

    # ----- segments ------------------------------------------------------------------------
    def system(self, prompt: str) -> list[Part]:
        return split_at(self._system, _S["sys"], prompt)

    def user(self, text: str) -> list[Part]:
        return [
            p for p in (Part(self._user_head, True), Part(text, False), Part(self._user_tail, True)) if p.text
        ]

    def note(self, text: str) -> list[Part] | None:
        return None if self._note is None else split_at(self._note, _S["note"], text)

    def reply_open(self) -> list[Part]:
        return [Part(self._open, True)] if self._open else []

    def reply_close(self) -> list[Part]:
        return [Part(self._close, True)] if self._close else []
