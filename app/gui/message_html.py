"""One message of the conversation as HTML for the ChatView (QTextDocument's rich text): its
bubble (the user's on the right in the accent's tint, the assistant's on the left), its body
(replies are Markdown: markdown-it-py, CommonMark with raw HTML escaped, so text that looks like
markup or chat control tokens is shown as typed; user turns plain text), the sentence being
spoken, what was not heard, its links (copy, retry, the answers of a retried turn, timing
details) and the keyboard's outline. Pure functions; any thread (QColor only as a value).
"""

from __future__ import annotations

import functools
import html
import re
from dataclasses import dataclass, field
from datetime import datetime

from markdown_it import MarkdownIt
from PySide6.QtGui import QColor, QPalette

from app.actions.skills import describe
from app.catalog.languages import language_name

_MD = MarkdownIt("commonmark", {"html": False, "breaks": True})
LINK = re.compile(r"<a href='((?!who:)[^']+)' style='")  # a message's links (not its name)
CODE_STYLE = "font-family: monospace;"


@functools.lru_cache(maxsize=4096)
def markdown_html(text: str) -> str:
    """`text` as HTML (Markdown; raw HTML escaped). Cached: a long conversation is re-rendered
    while a reply streams, and only the streaming message changes."""
    out = _MD.render(text).strip()
    out = out.replace("<code>", f"<code style='{CODE_STYLE}'>")
    # QTextBrowser gives paragraphs a top and bottom margin; the message block has its own
    return out.replace("<p>", "<p style='margin:0'>")


@dataclass
class ChatMessage:
    role: str
    text: str
    interrupted: bool = False
    spoken: str = ""  # the sentence being spoken now (assistant)
    latency: dict = field(default_factory=dict)
    expanded: bool = False
    name: str = ""  # who said it, as named then ("" = the current name)
    unspoken: str = ""  # generated but never said aloud (a barge-in cut it): shown apart
    at: datetime = field(default_factory=datetime.now)  # when it was said (shown on hover)
    versions: list[str] = field(default_factory=list)  # every answer to its turn (Retry), oldest first
    version: int = 0  # which of them this is
    language: str = ""  # a spoken turn's language (whisper code; shown when not English)
    thinking: str = ""  # a reasoning model's thought before the reply (folded: `think:i`)
    thought_open: bool = False


def mix(a: QColor, b: QColor, share: float) -> str:
    """`share` of `b` over `a`, as an opaque #rrggbb (table backgrounds take no alpha)."""
    pairs = ((a.red(), b.red()), (a.green(), b.green()), (a.blue(), b.blue()))
    mixed = [round(x * (1 - share) + y * share) for x, y in pairs]
    return "#{:02x}{:02x}{:02x}".format(*mixed)


def chat_colors(pal: QPalette) -> tuple[str, ...]:
    """The chat's colors from the palette, as `message_html` takes them: (the spoken sentence's
    highlight, muted text, the user's bubble, text, the assistant's bubble)."""
    hi, base, text = (
        pal.color(r) for r in (QPalette.ColorRole.Highlight, QPalette.ColorRole.Base, QPalette.ColorRole.Text)
    )
    return (
        f"rgba({hi.red()},{hi.green()},{hi.blue()},0.35)",
        pal.color(QPalette.ColorRole.PlaceholderText).name(),
        mix(base, hi, 0.18),  # the user's bubble: a tint of the accent
        text.name(),
        mix(base, text, 0.07),  # the assistant's bubble
    )


def message_html(
    i: int, m: ChatMessage, who: str, colors: tuple[str, ...], retry: bool, keyboard: int | None = None
) -> str:
    """Message `i` as a bubble: `who` said it; `colors` (highlight, muted, user bubble, text,
    assistant bubble); `retry`: it offers Retry (and its answers' arrows); `keyboard`: it has
    the keyboard, and which of its links Enter follows (marked)."""
    hl, muted, user_bg, text_color, bot_bg = colors
    body = markdown_html(m.text) if m.role == "assistant" else html.escape(m.text)
    if m.spoken and m.role == "assistant":  # found when the sentence is one run of text
        s = html.escape(m.spoken)
        body = body.replace(s, f"<span style='background-color:{hl}'>{s}</span>", 1)
    note = ""
    if m.unspoken:
        rest = html.escape(m.unspoken)
        note = f" <span style='color:{muted}; text-decoration:line-through'>{rest}</span>"
        note += f" <i style='color:{muted}'>(interrupted: the struck-out part was not spoken)</i>"
    elif m.interrupted:
        note = f" <i style='color:{muted}'>(interrupted)</i>"
    if note:  # it continues the last paragraph (where the listener stopped hearing)
        end = body.rfind("</p>")
        body = body[:end] + note + body[end:] if end >= 0 and body.endswith("</p>") else body + note
    plain = f"text-decoration:none; color:{text_color}"
    name = f"<a href='who:{i}' style='{plain}'><b>{html.escape(who)}</b></a>"
    link = f"color:{muted}; font-size:small"
    if m.language and m.language != "en":  # the language it was heard in
        name += f" <span style='{link}'>{html.escape(language_name(m.language))}</span>"
    tools = f"<a href='copy:{i}' style='{link}'>copy</a>" if m.text else ""
    if retry:
        tools += f" &nbsp;<a href='retry:{i}' style='{link}'>retry</a>"
    if len(m.versions) > 1:
        tools += " &nbsp;" + versions_html(m, link, choose=retry)
    body = action_html(m, muted) + thought_html(i, m, muted) + body
    sep = "" if body.startswith("<") else "<br>"  # Markdown starts with its own block
    # A bubble: a one-cell table (QTextDocument draws table backgrounds and padding; it has
    # no rounded corners). The user's sits to the right, the assistant's to the left.
    bg, side = (user_bg, " align='right'") if m.role == "user" else (bot_bg, "")
    plain_edge = "style='margin-top:6px; border-style:none'"
    outline = f"border='2' style='margin-top:6px; border-style:solid; border-color:{hl}'"
    out = (
        f"<a name='m{i}'></a><table width='85%'{side} cellspacing='0' cellpadding='8' bgcolor='{bg}'"
        f" {plain_edge if keyboard is None else outline}>"
        f"<tr><td>{name} &nbsp;{tools}{sep}{body}</td></tr></table>"
    )
    out += latency_html(i, m, muted) if m.latency else ""
    if keyboard is not None:  # the link Enter follows is marked
        found = list(LINK.finditer(out))
        if found:
            at = found[min(keyboard, len(found) - 1)].end()
            out = out[:at] + f"background-color:{hl}; " + out[at:]
    return out


def action_html(m: ChatMessage, muted: str) -> str:
    """The action that answered the turn (a timer set, a sum worked out), as a small line."""
    action = m.latency.get("action") if m.role == "assistant" else None
    if not isinstance(action, dict):
        return ""
    return f"<br><span style='color:{muted}; font-size:small'>&#9881; {html.escape(describe(action))}</span>"


def thought_html(i: int, m: ChatMessage, muted: str) -> str:
    """A reasoning model's thought, folded above its reply: one line that opens it (never spoken)."""
    if not m.thinking:
        return ""
    words = len(m.thinking.split())
    label = "hide the thinking" if m.thought_open else f"thought ({words} words): show"
    line = f"<a href='think:{i}' style='color:{muted}; font-size:small'>{label}</a>"
    if m.thought_open:
        line += f"<br><i style='color:{muted}'>{html.escape(m.thinking)}</i>"
    return f"<p style='margin:0 0 4px 0'>{line}</p>"


def versions_html(m: ChatMessage, link: str, choose: bool) -> str:
    """ "‹ 2/3 ›": which answer this is; the arrows (`choose`: the newest reply, idle) open
    the one before or after it."""
    n, k = len(m.versions), min(max(m.version, 0), len(m.versions) - 1)
    count = f"<span style='{link}'>{k + 1}/{n}</span>"
    if not choose:
        return count

    big = link.replace("font-size:small", "font-weight:bold")  # an arrow is a small target

    def arrow(to: int, mark: str, what: str) -> str:
        if not 0 <= to < n:
            return f"<span style='{big}'>&nbsp;{mark}&nbsp;</span>"  # none that way: not a link
        return f"<a href='ver:{to}' style='{big}' title='{what}'>&nbsp;{mark}&nbsp;</a>"

    return f"{arrow(k - 1, '‹', 'the answer before')} {count} {arrow(k + 1, '›', 'the next answer')}"


def latency_html(i: int, m: ChatMessage, muted: str) -> str:
    lat = m.latency
    since = "after you pressed Enter" if lat.get("typed") else "after you stopped talking"
    v2v = lat.get("t_first_audio_ms")
    head = (
        f"spoke {v2v / 1000:.2f} s {since}"
        if v2v
        else f"first words {(lat.get('t_first_token_ms') or 0) / 1000:.2f} s {since}"
    )
    link = f"<a href='lat:{i}' style='color:{muted}'>{'hide' if m.expanded else 'details'}</a>"
    text = f"<span style='color:{muted}; font-size:small'>{head} · {link}</span>"
    if m.expanded:
        rows = [
            ("heard you", "t_transcript_ms"),
            ("sure you had finished", "t_confirmed_ms"),
            ("first word", "t_first_token_ms"),
            ("first sentence", "t_first_sentence_ms"),
            ("first sound", "t_first_audio_ms"),
        ]
        cells = " · ".join(f"{name} {lat[k]:.0f} ms" for name, k in rows if lat.get(k) is not None)
        n_in, t_in = lat.get("prompt_tokens", 0), lat.get("t_prompt_ms", 0)
        cells += f" · read your words ({n_in} tokens) in {t_in:.0f} ms"
        cells += f" · wrote {lat.get('gen_tokens', 0)} tokens in {lat.get('t_gen_ms', 0):.0f} ms"
        text += f"<br><span style='color:{muted}; font-size:small'>{since}: {cells}</span>"
    return f"<div style='margin:0 0 6px 6px'>{text}</div>"
