"""The voice orb: the push-to-talk button, which also shows what the assistant is doing.

An orb beside the button's caption: resting when idle, green and growing with your voice while it
listens (the microphone's level), a turning arc while it transcribes or thinks, blue and moving
with its own voice while it speaks (the output level; a gentle pulse when a `-s` command speaks
and there is no level), grey and struck through when the microphone is muted.

Animation: a 60 Hz timer runs only while something moves (a state other than idle/loading, or a
level still settling), so an idle window costs no CPU. Each tick only eases the shown level
toward the latest one and schedules a repaint; the levels arrive as events from the audio threads
(already averaged there). The state is also the button's accessible description, and the status
pill keeps the words. GUI thread only.
"""

from __future__ import annotations

import math

from PySide6.QtCore import QElapsedTimer, QPointF, QRectF, QSize, Qt, QTimer
from PySide6.QtGui import QColor, QFont, QPainter, QPainterPath, QPalette, QPen, QRadialGradient
from PySide6.QtWidgets import QAbstractButton, QSizePolicy, QWidget

from app.gui.widgets import STATE_COLORS

FRAME_MS = 16  # ~60 frames a second while animating
MOVING = ("listening", "transcribing", "thinking", "speaking")
SPINNING = ("transcribing", "thinking")
DESCRIPTIONS = {
    "loading": "Loading the models",
    "idle": "Ready",
    "listening": "Listening",
    "transcribing": "Working out what you said",
    "thinking": "Thinking",
    "speaking": "Speaking",
}


def level_of(rms: float) -> float:
    """An RMS level (0..1 full scale) as 0..1 for the eye: -60 dBFS .. 0 dBFS."""
    db = 20 * math.log10(max(rms, 1e-6))
    return min(1.0, max(0.0, (db + 60) / 60))


class VoiceOrb(QAbstractButton):
    """Press-and-hold push-to-talk (pressed/released) that shows the assistant's state; its
    caption says which mode the assistant listens in (`set_mode`, `set_muted`)."""

    def __init__(self, key_name: str, hands_free: bool = False, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setAccessibleName("Push to talk")
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        self.setMinimumHeight(64)
        self.muted = False
        self.state = "loading"
        self.frames = 0  # painted frames (tests and bench/orb.py count them)
        self._target = 0.0  # the newest level, 0..1
        self._shown = 0.0  # the level drawn, easing toward the target
        self._has_output_level = False  # this reply's voice reports levels
        self._phase = 0.0  # seconds of animation, for the arc and the pulse
        self._clock = QElapsedTimer()
        self._timer = QTimer(self)
        self._timer.setInterval(FRAME_MS)
        self._timer.setTimerType(Qt.TimerType.PreciseTimer)
        self._timer.timeout.connect(self._tick)
        self.set_mode(key_name, hands_free)

    # ----- what it shows ---------------------------------------------------------------------------
    def set_state(self, state: str) -> None:
        if state == self.state:
            return
        self.state = state
        if state != "speaking":
            self._has_output_level = False
        if state not in ("listening", "speaking"):
            self._target = 0.0
        self.setAccessibleDescription(DESCRIPTIONS.get(state, state))
        self._animate()
        self.update()

    def set_input_level(self, rms: float) -> None:
        """The microphone's level (shown while listening)."""
        if self.state == "listening":
            self._set_target(level_of(rms))

    def set_output_level(self, rms: float) -> None:
        """The assistant's voice level (shown while speaking)."""
        self._has_output_level = True
        if self.state == "speaking":
            self._set_target(level_of(rms))

    def set_muted(self, muted: bool) -> None:
        """The microphone is muted: the orb and caption say so (and how to undo it)."""
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
        self.update()

    @property
    def animating(self) -> bool:
        return self._timer.isActive()

    # ----- animation ----------------------------------------------------------------------------------
    def _set_target(self, level: float) -> None:
        self._target = level
        self._animate()

    def _animate(self) -> None:
        """Run the frame timer while something moves; stop it when all is still."""
        moving = self.state in MOVING or abs(self._shown - self._target) > 0.01
        if moving and self.isVisible() and not self._timer.isActive():
            self._clock.start()
            self._timer.start()
        elif not moving and self._timer.isActive():
            self._timer.stop()
            self._shown = self._target
            self.update()

    def _tick(self) -> None:
        dt = min(self._clock.restart() / 1000, 0.1)
        self._phase += dt
        # up fast (a syllable shows at once), down slower (no flicker between words)
        rate = 18.0 if self._target > self._shown else 9.0
        self._shown += (self._target - self._shown) * min(1.0, rate * dt)
        self.update()
        self._animate()

    def showEvent(self, event) -> None:
        super().showEvent(event)
        self._animate()

    def hideEvent(self, event) -> None:
        super().hideEvent(event)
        self._timer.stop()  # nobody sees it

    # ----- painting -----------------------------------------------------------------------------------
    def sizeHint(self) -> QSize:
        return QSize(320, 64)

    def minimumSizeHint(self) -> QSize:
        return QSize(160, 64)

    def paintEvent(self, _event) -> None:
        self.frames += 1
        p = QPainter(self)
        p.setRenderHint(QPainter.RenderHint.Antialiasing)
        pal = self.palette()
        box = QRectF(self.rect()).adjusted(1, 1, -1, -1)
        face = pal.color(QPalette.ColorRole.Button)
        if self.isDown():  # held: a tint of the listening green, so the orb stays the brightest
            green = QColor(STATE_COLORS["listening"])
            face = QColor.fromRgbF(
                *(
                    a * 0.7 + b * 0.3
                    for a, b in (
                        (face.redF(), green.redF()),
                        (face.greenF(), green.greenF()),
                        (face.blueF(), green.blueF()),
                    )
                )
            )
        elif self.underMouse():
            face = pal.color(QPalette.ColorRole.Light)
        edge = QColor("#2a73c9") if self.hasFocus() else pal.color(QPalette.ColorRole.Mid)
        p.setPen(QPen(edge, 2 if self.hasFocus() else 1))
        p.setBrush(face)
        p.drawRoundedRect(box, 8, 8)

        font = QFont(self.font())
        font.setPixelSize(16)
        font.setWeight(QFont.Weight.DemiBold)
        p.setFont(font)
        text_w = p.fontMetrics().horizontalAdvance(self.text())
        radius = min(box.height() * 0.30, 20.0)
        gap = radius * 2.6
        left = box.center().x() - (gap + text_w) / 2
        center = QPointF(max(box.left() + radius * 1.6, left + radius), box.center().y())
        self._paint_orb(p, center, radius)
        p.setPen(pal.color(QPalette.ColorRole.ButtonText))
        text_box = QRectF(
            center.x() + gap - radius, box.top(), box.right() - center.x() - gap + radius, box.height()
        )
        elided = p.fontMetrics().elidedText(
            self.text(), Qt.TextElideMode.ElideRight, int(text_box.width()) - 8
        )
        p.drawText(text_box, Qt.AlignmentFlag.AlignVCenter | Qt.AlignmentFlag.AlignLeft, elided)

    def _paint_orb(self, p: QPainter, c: QPointF, r: float) -> None:
        state = "idle" if self.state == "loading" else self.state
        color = QColor("#8a8a8a") if self.muted else QColor(STATE_COLORS.get(state, "#6b7b8c"))
        level = self._shown
        if state == "speaking" and not self._has_output_level:  # a voice without levels: a pulse
            level = 0.35 + 0.15 * math.sin(self._phase * 2 * math.pi * 1.2)
        if self.state == "loading":
            color.setAlpha(140)
        if state in ("listening", "speaking"):  # the halo moves with the voice
            halo = QColor(color)
            halo.setAlpha(95)
            p.setPen(Qt.PenStyle.NoPen)
            p.setBrush(halo)
            p.drawEllipse(c, r * (1.05 + 0.5 * level), r * (1.05 + 0.5 * level))
        glow = QRadialGradient(c - QPointF(r * 0.3, r * 0.3), r * 1.4)
        glow.setColorAt(0.0, color.lighter(135))
        glow.setColorAt(1.0, color.darker(115))
        p.setPen(Qt.PenStyle.NoPen)
        p.setBrush(glow)
        core = r * (0.92 + 0.12 * level)
        p.drawEllipse(c, core, core)
        if state in SPINNING:  # a turning arc: work in progress
            pen = QPen(color.lighter(150), max(2.0, r * 0.14))
            pen.setCapStyle(Qt.PenCapStyle.RoundCap)
            p.setPen(pen)
            p.setBrush(Qt.BrushStyle.NoBrush)
            ring = r * 1.3
            start = int(-self._phase * 360 * 16 * 1.1) % (360 * 16)
            p.drawArc(QRectF(c.x() - ring, c.y() - ring, 2 * ring, 2 * ring), start, 100 * 16)
        self._paint_microphone(p, c, r)

    def _paint_microphone(self, p: QPainter, c: QPointF, r: float) -> None:
        """A small white microphone in the orb (struck through when muted)."""
        white = QColor(255, 255, 255, 235)
        w, h = r * 0.42, r * 0.78
        capsule = QPainterPath()
        capsule.addRoundedRect(QRectF(c.x() - w / 2, c.y() - h * 0.62, w, h * 0.78), w / 2, w / 2)
        p.setPen(Qt.PenStyle.NoPen)
        p.setBrush(white)
        p.drawPath(capsule)
        pen = QPen(white, max(1.5, r * 0.09))
        pen.setCapStyle(Qt.PenCapStyle.RoundCap)
        p.setPen(pen)
        p.setBrush(Qt.BrushStyle.NoBrush)
        cup = r * 0.36
        p.drawArc(QRectF(c.x() - cup, c.y() - h * 0.45, 2 * cup, h * 0.85), 180 * 16, 180 * 16)
        p.drawLine(QPointF(c.x(), c.y() + h * 0.40), QPointF(c.x(), c.y() + h * 0.56))
        if self.muted:
            p.setPen(QPen(white, max(2.0, r * 0.12)))
            p.drawLine(
                QPointF(c.x() - r * 0.55, c.y() - r * 0.55), QPointF(c.x() + r * 0.55, c.y() + r * 0.55)
            )
