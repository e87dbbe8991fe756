"""A reasoning model's thinking, kept apart from its answer.

Reasoning models (Qwen3, QwQ, DeepSeek-R1 and its distills, SmolLM3, Kimi, ...) write
`<think>…</think>` before the answer, or their reply prompt already opens the block and they
write only its end. The thinking is never spoken: `ThoughtSplitter` cuts the streamed reply into
thought and answer; the voice hears only the answer, and the history keeps the thought beside it
for the window to fold.

Pure text; one splitter per reply, single thread.
"""

from __future__ import annotations

THINK_OPEN = "<think>"
THINK_CLOSE = "</think>"
# (opening, closing) of a thinking block, by family: most reasoning models; Gemma 4's channel.
MARKS: tuple[tuple[str, str], ...] = ((THINK_OPEN, THINK_CLOSE), ("<|channel>thought", "<channel|>"))


def marks_of(template: str) -> tuple[str, str] | None:
    """The thinking marks a chat template writes (None: not a reasoning template)."""
    return next((m for m in MARKS if m[1] in template), None)


def thinking_opened(prompt: str, marks: tuple[str, str] = MARKS[0]) -> bool:
    """The reply prompt leaves a thinking block open (DeepSeek-R1's `<｜Assistant｜><think>\\n`):
    the reply starts inside it."""
    return prompt.rfind(marks[0]) > prompt.rfind(marks[1])


def thinking_for(choice: str, voice: bool) -> bool | None:
    """A reasoning model's thinking for a `choice` of auto|on|off. Auto is off when replies are
    spoken, where the template has a switch: nothing is heard until the thought ends (a thought
    of a few hundred tokens is tens of seconds of silence on a CPU), and the template's own
    default when typed, where the thought is shown folded and costs no silence."""
    return {"on": True, "off": False}.get(choice, False if voice else None)


def _partial_tag(text: str, tag: str) -> int:
    """Length of the longest suffix of `text` that is a proper prefix of `tag`."""
    for k in range(min(len(tag) - 1, len(text)), 0, -1):
        if text.endswith(tag[:k]):
            return k
    return 0


class ThoughtSplitter:
    """Feed reply text pieces in order; each `feed` returns the new answer text (what may be
    spoken). A thinking block is recognised only at the reply's start (after blanks), or from the
    first piece when `opened`. An unclosed block at the end is all thought."""

    def __init__(self, opened: bool = False, marks: tuple[str, str] = MARKS[0]):
        self._open, self._close = marks
        self._in_thought = opened
        self._seen_start = opened  # past the point where a block may open
        self._held = ""
        self.thought = ""
        self.answer = ""

    def feed(self, piece: str) -> str:
        text = self._held + piece
        self._held = ""
        out = ""
        while text:
            if self._in_thought:
                end = text.find(self._close)
                if end < 0:
                    keep = _partial_tag(text, self._close)
                    self.thought += text[: len(text) - keep]
                    self._held = text[len(text) - keep :]
                    break
                self.thought += text[:end]
                text = text[end + len(self._close) :].lstrip()
                self._in_thought, self._seen_start = False, True
                continue
            if not self._seen_start:
                stripped = text.lstrip()
                if not stripped:
                    self._held = text
                    break
                if stripped.startswith(self._open):
                    text, self._in_thought = stripped[len(self._open) :], True
                    continue
                if self._open.startswith(stripped):
                    self._held = text
                    break
                self._seen_start = True
            if not self.answer:
                text = text.lstrip()
            out += text
            break
        self.thought = self.thought.lstrip() if not self.answer else self.thought
        self.answer += out
        return out

    def finish(self) -> str:
        """The text still held (a reply that ended on what looked like a tag's start)."""
        held, self._held = self._held, ""
        if self._in_thought:
            self.thought += held
            return ""
        self.answer += held
        return held
