"""Text and controls are readable in both themes: every text color the window uses on its
background meets WCAG AA (4.5:1 for text), measured from the palettes the app applies (Fusion's
light one with our selection color, and our dark one) and the chat's own colors derived from
them. Disabled controls are exempt, as WCAG has it."""

from __future__ import annotations

import re

import pytest
from PySide6.QtGui import QColor, QPalette
from PySide6.QtWidgets import QStyleFactory

from app.gui.message_html import chat_colors
from app.gui.theme import dark_palette, light_palette

AA = 4.5
R = QPalette.ColorRole


def luminance(color: QColor) -> float:
    def channel(v: int) -> float:
        c = v / 255
        return c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4

    return 0.2126 * channel(color.red()) + 0.7152 * channel(color.green()) + 0.0722 * channel(color.blue())


def contrast(a: QColor, b: QColor) -> float:
    hi, lo = sorted((luminance(a), luminance(b)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)


def over(color: str, background: QColor) -> QColor:
    """An `rgba(r,g,b,a)` color as it shows over `background`."""
    r, g, b, a = (float(x) for x in re.findall(r"[\d.]+", color))
    mixed = [round(c * a + bg * (1 - a)) for c, bg in zip((r, g, b), background.getRgb()[:3], strict=True)]
    return QColor(*mixed)


def palettes(qapp) -> dict[str, QPalette]:
    return {"light": light_palette(QStyleFactory.create("Fusion").standardPalette()), "dark": dark_palette()}


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_every_text_color_meets_wcag_aa_on_its_background(qapp, theme) -> None:
    pal = palettes(qapp)[theme]
    pairs = {
        "text on the page": (R.Text, R.Base),
        "labels on the window": (R.WindowText, R.Window),
        "button labels": (R.ButtonText, R.Button),
        "hints (placeholder)": (R.PlaceholderText, R.Base),
        "links": (R.Link, R.Base),
        "selected text": (R.HighlightedText, R.Highlight),
        "tooltips": (R.ToolTipText, R.ToolTipBase),
    }
    low = {k: round(contrast(pal.color(f), pal.color(b)), 2) for k, (f, b) in pairs.items()}
    assert all(v >= AA for v in low.values()), low
    spoken, muted, user_bubble, text, bot_bubble = (c for c in chat_colors(pal))
    chat = {}
    for name, bubble in (
        ("the user's bubble", QColor(user_bubble)),
        ("the assistant's bubble", QColor(bot_bubble)),
    ):
        chat[f"text in {name}"] = contrast(QColor(text), bubble)
        chat[f"muted notes and unspoken words in {name}"] = contrast(QColor(muted), bubble)
        chat[f"the spoken sentence in {name}"] = contrast(QColor(text), over(spoken, bubble))
    assert all(v >= AA for v in chat.values()), {k: round(v, 2) for k, v in chat.items()}
