"""Conversation → What I remember: the facts the memory note holds for the open conversation
(app/brain/memory.py), one row each with Forget.

The panel only shows and asks: it is filled from the loop's `memory` events (`set_facts`) and
says a Forget through `forget_requested`; the llm thread does the work between turns and sends
the list again. GUI thread only.
"""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QScrollArea,
    QVBoxLayout,
    QWidget,
)

EMPTY = (
    "Nothing yet. Tell me about yourself in plain words (your name, where you live, what you "
    "like, or “remember that …”) and it is kept here, even after old turns leave my memory."
)
EXPLAIN = (
    "What you told me about yourself in this conversation (and in the others, when Settings → "
    "Persona → Memory is on). I still know it after the turns that said it are shifted out of "
    "my memory. Forget takes an item out from my next reply on."
)


class MemoryPanel(QDialog):
    forget_requested = Signal(str)  # a fact's key

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("What I remember")
        self.setAccessibleName("What I remember")
        self.resize(460, 360)
        intro = QLabel(EXPLAIN)
        intro.setWordWrap(True)
        self._rows = QVBoxLayout()
        self._rows.setAlignment(Qt.AlignmentFlag.AlignTop)
        body = QWidget()
        body.setLayout(self._rows)
        scroll = QScrollArea()
        scroll.setWidgetResizable(True)
        scroll.setWidget(body)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        lay = QVBoxLayout(self)
        lay.addWidget(intro)
        lay.addWidget(scroll, 1)
        lay.addWidget(buttons)
        self.facts: list[tuple[str, str]] = []
        self.set_facts([])

    def set_facts(self, facts: list[tuple[str, str]]) -> None:
        """Show `facts` as (key, sentence) rows, replacing what was shown."""
        self.facts = list(facts)
        while (item := self._rows.takeAt(0)) is not None:
            if (w := item.widget()) is not None:
                w.deleteLater()
        if not facts:
            empty = QLabel(EMPTY)
            empty.setWordWrap(True)
            self._rows.addWidget(empty)
        for key, sentence in facts:
            self._rows.addWidget(self._row(key, sentence))

    def _row(self, key: str, sentence: str) -> QWidget:
        row = QWidget()
        text = QLabel(sentence)
        text.setWordWrap(True)
        text.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        forget = QPushButton("Forget")
        forget.setAccessibleName(f"Forget: {sentence}")
        forget.clicked.connect(lambda: self._forget(key, forget))
        lay = QHBoxLayout(row)
        lay.setContentsMargins(0, 2, 0, 2)
        lay.addWidget(text, 1)
        lay.addWidget(forget)
        return row

    def _forget(self, key: str, button: QPushButton) -> None:
        button.setEnabled(False)  # the list comes back without it once the llm thread is done
        self.forget_requested.emit(key)
