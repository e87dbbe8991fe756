"""Small widgets of the main window: level meter, status pill, context gauge, banner, PTT button,
and the conversation view. Paint-only; no core work."""

from __future__ import annotations

import html
import math
from dataclasses import dataclass, field

from PySide6.QtCore import QEvent, QRectF, QSize, Qt, QTimer, QUrl, Signal
from PySide6.QtGui import QColor, QPainter, QPalette
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QLabel,
    QProgressBar,
    QPushButton,
    QSizePolicy,
    QTextBrowser,
    QWidget,
)

from app.brain.history import speaker_name

STATE_COLORS = {
    "loading": "#8a8a8a",
    "idle": "#6b7b8c",
    "listening": "#2e9d4f",
    "transcribing": "#c08a12",
    "thinking": "#7b4fc4",
    "speaking": "#2a73c9",
}


class LevelMeter(QWidget):
    """Microphone level (dBFS mapped to 0..1), with a slow-falling peak."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.level = 0.0
        self.setMinimumSize(40, 14)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        self.setAccessibleName("Microphone level")

    def set_rms(self, rms: float) -> None:
        db = 20 * math.log10(max(rms, 1e-6))
        target = min(1.0, max(0.0, (db + 60) / 60))
        level = target if target > self.level else self.level * 0.85 + target * 0.15
        moved = abs(level - self.level) * self.width() >= 0.5  # repaint only a visible change
        self.level = level
        if moved:
            self.update()

    def paintEvent(self, _event) -> None:
        p = QPainter(self)
        pal = self.palette()
        r = QRectF(self.rect()).adjusted(0.5, 0.5, -0.5, -0.5)
        p.setPen(pal.color(QPalette.ColorRole.Mid))
        p.setBrush(pal.color(QPalette.ColorRole.Base))
        p.drawRoundedRect(r, 4, 4)
        fill = QRectF(r.x() + 1, r.y() + 1, (r.width() - 2) * self.level, r.height() - 2)
        color = QColor("#2e9d4f") if self.level < 0.85 else QColor("#d04a2f")
        p.setPen(Qt.PenStyle.NoPen)
        p.setBrush(color)
        p.drawRoundedRect(fill, 3, 3)


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

    def update_stats(self, stats: dict) -> None:
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


class PttButton(QPushButton):
    """Press-and-hold push-to-talk; its label says which mode the assistant listens in."""

    def __init__(self, key_name: str, hands_free: bool = False, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setMinimumHeight(56)
        self.setAccessibleName("Push to talk")
        self.muted = False
        self.set_mode(key_name, hands_free)
        self.setStyleSheet(
            "QPushButton { font-size: 16px; font-weight: 600; }"
            " QPushButton:pressed { background: #2e9d4f; color: white; }"
        )

    def set_muted(self, muted: bool) -> None:
        """The microphone is muted: the button says so (and how to undo it) instead."""
        self.muted = muted
        self.set_mode(self._key, self._hands_free)

    def set_mode(self, key_name: str, hands_free: bool) -> None:
        self._key, self._hands_free = key_name, hands_free
        if self.muted:
            self.setText("Microphone muted  ·  Ctrl+M to unmute")
            self.setToolTip("The microphone is muted: nothing is heard until you unmute it.")
        elif hands_free:
            self.setText(f"Hands-free: just talk  ·  or hold ({key_name})")
            self.setToolTip(
                f"Hands-free is on: speak and the assistant answers when you pause.\n"
                f"You can also hold this button or {key_name} to talk."
            )
        else:
            self.setText(f"Hold to talk  ({key_name})")
            self.setToolTip(f"Press and hold this button, or the {key_name} key, while you speak.")


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


PTT_HINT = "Hold the button (or {key}) and speak, or type a message below."
HANDS_FREE_HINT = "Just speak: hands-free listening is on. You can also type a message below."


class ChatView(QTextBrowser):
    """The conversation, re-rendered (throttled) from a list of ChatMessage. It follows new
    messages unless the reader has scrolled up."""

    def __init__(self, person: str, bot: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.person, self.bot = person, bot
        self.hint = PTT_HINT.format(key="Space")
        self.messages: list[ChatMessage] = []
        self.setOpenLinks(False)
        self.setTabChangesFocus(True)  # Tab leaves the view instead of walking its links
        self.setAccessibleName("Conversation")
        self.anchorClicked.connect(self._toggle)
        self._follow = True  # at the bottom: keep showing the newest message
        self._rendering = False
        bar = self.verticalScrollBar()
        bar.valueChanged.connect(self._scrolled)
        bar.rangeChanged.connect(self._range_changed)
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(40)
        self._timer.timeout.connect(self.render)
        self.render()

    def changeEvent(self, event) -> None:
        if event.type() == QEvent.Type.PaletteChange:  # light/dark: the HTML takes its colors
            self.schedule()
        super().changeEvent(event)

    def add(self, role: str, text: str, interrupted: bool = False, name: str = "") -> ChatMessage:
        msg = ChatMessage(role, text, interrupted, name=name)
        self.messages.append(msg)
        self.schedule()
        return msg

    def schedule(self) -> None:
        if not self._timer.isActive():
            self._timer.start()

    def _scrolled(self, value: int) -> None:
        if not self._rendering:  # the reader moved: follow only from the bottom
            self._follow = value >= self.verticalScrollBar().maximum() - 4

    def _range_changed(self, _lo: int, hi: int) -> None:
        if self._follow:  # the layout grew after a render: stay at the bottom
            self.verticalScrollBar().setValue(hi)

    def _toggle(self, url: QUrl) -> None:
        i = int(url.toString().removeprefix("lat:"))
        self.messages[i].expanded = not self.messages[i].expanded
        self.render()

    def render(self) -> None:
        pal = self.palette()
        hi = pal.color(QPalette.ColorRole.Highlight)
        hl = f"rgba({hi.red()},{hi.green()},{hi.blue()},0.35)"
        muted = pal.color(QPalette.ColorRole.PlaceholderText).name()
        user_bg = pal.color(QPalette.ColorRole.AlternateBase).name()
        parts = []
        if not self.messages:
            parts.append(
                f"<p style='color:{muted}; text-align:center; margin-top:40px'>{html.escape(self.hint)}</p>"
            )
        for i, m in enumerate(self.messages):
            who = speaker_name(m.role, m.name, self.person, self.bot)
            body = html.escape(m.text)
            if m.spoken and m.role == "assistant":
                s = html.escape(m.spoken)
                body = body.replace(s, f"<span style='background-color:{hl}'>{s}</span>", 1)
            if m.unspoken:
                rest = html.escape(m.unspoken)
                body += f" <span style='color:#9a9a9a; text-decoration:line-through'>{rest}</span>"
                body += f" <i style='color:{muted}'>(interrupted: the struck-out part was not spoken)</i>"
            elif m.interrupted:
                body += f" <i style='color:{muted}'>(interrupted)</i>"
            bg = f"background-color:{user_bg};" if m.role == "user" else ""
            parts.append(
                f"<div style='{bg} padding:6px; margin:4px 0'><b>{html.escape(who)}</b><br>{body}</div>"
            )
            if m.latency:
                parts.append(self._latency_html(i, m, muted))
        bar = self.verticalScrollBar()
        keep = bar.value()
        self._rendering = True
        try:
            self.setHtml("".join(parts))
            bar.setValue(bar.maximum() if self._follow else keep)
        finally:
            self._rendering = False

    @staticmethod
    def _latency_html(i: int, m: ChatMessage, muted: str) -> str:
        lat = m.latency
        since = "after you pressed Enter" if lat.get("typed") else "after you stopped talking"
        v2v = lat.get("t_first_audio_ms")
        head = (
            f"spoke {v2v / 1000:.2f} s {since}"
            if v2v
            else f"first words {(lat.get('t_first_token_ms') or 0) / 1000:.2f} s {since}"
        )
        link = f"<a href='lat:{i}'>{'hide' if m.expanded else 'details'}</a>"
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
