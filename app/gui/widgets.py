"""Small widgets of the main window: status pill, context gauge, banner. Paint-only; no core
work. (The conversation view is chat_view.py, the push-to-talk orb voice_orb.py.)"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from PySide6.QtCore import QSize, Qt, Signal
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QLabel,
    QProgressBar,
    QPushButton,
    QWidget,
)

STATE_COLORS = {
    "loading": "#8a8a8a",
    "idle": "#6b7b8c",
    "listening": "#2e9d4f",
    "transcribing": "#c08a12",
    "thinking": "#7b4fc4",
    "speaking": "#2a73c9",
}


class StatusPill(QLabel):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setAccessibleName("Assistant state")
        self.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.setMinimumWidth(110)
        self.set_state("loading")

    def set_state(self, state: str) -> None:
        self.state = state
        self.setText(state.capitalize())
        self.setStyleSheet(
            f"QLabel {{ background: {STATE_COLORS.get(state, '#888')}; color: white; border-radius: 9px;"
            " padding: 2px 10px; font-weight: 600; }"
        )


class ContextGauge(QProgressBar):
    """How full the model's memory (context window) is, in plain words; details in the tooltip.
    The fill is a light tint under the text, so the words stay readable at any level."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setAccessibleName("Conversation memory")
        self.setTextVisible(True)
        self.setMinimumWidth(120)  # a narrow window gets the short wording (resizeEvent)
        self.setMaximumWidth(330)
        self._long = self._short = ""
        self.setStyleSheet(
            "QProgressBar { border: 1px solid palette(mid); border-radius: 4px; text-align: center;"
            " background: palette(base); color: palette(text); }"
            " QProgressBar::chunk { background-color: rgba(42, 115, 201, 0.28); border-radius: 3px; }"
        )
        self.update_stats({})

    def update_stats(self, stats: Mapping[str, Any]) -> None:
        """`stats`: the conversation's context counters; {} means no model is loaded."""
        n_past, n_ctx = stats.get("n_past", 0), stats.get("n_ctx", 1) or 1
        shifts, discarded = stats.get("shifts", 0), stats.get("discarded", 0)
        dropped = stats.get("dropped_turns", 0)
        self.setRange(0, n_ctx)
        self.setValue(min(n_past, n_ctx))
        if "n_ctx" not in stats:
            self._set_words("Memory: no model loaded", "No model")
            self.setToolTip("No language model is loaded.")
            return
        where = "Server memory" if stats.get("server") else "Memory"
        full = f"{where} {round(100 * n_past / n_ctx)}%"
        self._set_words(f"{full} · older turns set aside: {dropped}", full)
        cached = stats.get("cached_tokens")
        if stats.get("server"):
            cache = (
                f"Last turn the server reused {cached} tokens from its cache."
                if cached is not None and cached >= 0
                else "This server does not report how much it reused from its cache."
            )
            self.setToolTip(
                f"The language model runs on {stats['server']} ({stats.get('model', '')}).\n"
                f"The conversation fills about {n_past} of its {n_ctx} context tokens. When it is\n"
                "full, the oldest whole exchanges are left out of the next requests (half the\n"
                f"space at once, so the server can keep reusing the rest). {cache}\n"
                f"So far: {dropped} exchanges left out."
            )
            return
        self.setToolTip(
            f"The conversation fills {n_past} of the model's {n_ctx} context tokens; the persona\n"
            f"prompt ({stats.get('n_keep', 0)} tokens) always stays. When it is full, the oldest whole\n"
            "exchanges are set aside so the conversation goes on (a KV-cache shift).\n"
            f"So far: {dropped} exchanges set aside, {discarded} tokens, in {shifts} shifts."
        )

    def _set_words(self, long: str, short: str) -> None:
        self._long, self._short = long, short
        self.updateGeometry()
        self._fit()

    def _fit(self) -> None:
        """The long wording when it fits, else the short one (a narrow window)."""
        fits = self.fontMetrics().horizontalAdvance(self._long) + 16 <= self.width()
        self.setFormat(self._long if fits else self._short)

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        self._fit()

    def sizeHint(self) -> QSize:
        """Wide enough for the long wording (the layout shrinks it only when space runs out)."""
        hint = super().sizeHint()
        return QSize(
            min(self.maximumWidth(), self.fontMetrics().horizontalAdvance(self._long) + 24), hint.height()
        )


class Banner(QFrame):
    """A dismissable, non-blocking message strip with an optional action button."""

    action = Signal()

    def __init__(self, text: str, action_text: str = "", kind: str = "error", parent: QWidget | None = None):
        super().__init__(parent)
        self.kind = kind
        color = {"error": "#b3261e", "warning": "#8a5a00", "info": "#1f5fae"}[kind]
        self.setStyleSheet(
            f"Banner {{ background: {color}; border-radius: 6px; }} QLabel {{ color: white; }}"
        )
        self.setAccessibleName(f"{kind} message")
        lay = QHBoxLayout(self)
        lay.setContentsMargins(10, 6, 6, 6)
        self.label = QLabel(text)
        self.label.setWordWrap(True)
        self.label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        lay.addWidget(self.label, 1)
        if action_text:
            btn = QPushButton(action_text)
            btn.clicked.connect(self.action.emit)
            lay.addWidget(btn)
        close = QPushButton("Dismiss")
        close.setAccessibleName("Dismiss message")
        close.clicked.connect(self.deleteLater)
        lay.addWidget(close)
