"""Settings → Voice: natural and system voices in one list, each with its language, a preview,
a Piper voice file of the user's own, and the rate.

Listing reads the models folder and espeak's voice list (fast); a preview loads the voice and
speaks on a worker thread, and reports a failure through `preview_failed` (a queued signal:
the dialog shows it on the GUI thread).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QComboBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QSpinBox,
    QWidget,
)

from app.voice.synthesizer import Voice

PREVIEW_TEXT = "Hello! This is how I sound. Ask me anything."


def voice_label(v: Voice) -> str:
    kind = "natural" if v.engine == "natural" else "system"
    return f"{v.name} — {', '.join(v.languages) or 'unknown language'} · {kind}"


def _speaks(languages: tuple[str, ...], code: str) -> bool:
    return any(lang.lower().replace("_", "-").split("-")[0] == code for lang in languages)


class VoiceTab(QWidget):
    preview_failed = Signal(str)

    def __init__(self, voice: str, rate: int, language: str, output_device: Callable[[], object]) -> None:
        """`output_device`: a callable giving the chosen output device's data (the Audio tab)."""
        super().__init__()
        self._output_device = output_device
        f = QFormLayout(self)
        self.voice = QComboBox()
        self.voice.setAccessibleName("Voice")
        own = language.lower() if language != "auto" else "en"
        self._fill(own)
        if voice and self.voice.findData(voice) < 0 and voice.endswith(".onnx"):
            self._add_file(Path(voice))
        self.voice.setCurrentIndex(max(self.voice.findData(voice), 0))
        preview = QPushButton("Preview")
        preview.setToolTip("Speak a sentence with the chosen voice and rate")
        preview.clicked.connect(self.preview)
        pick = QPushButton("Voice file…")
        pick.setToolTip("Use a Piper voice you downloaded (.onnx with its .onnx.json beside it)")
        pick.clicked.connect(self._choose_file)
        f.addRow("Voice", self.voice)
        row = QHBoxLayout()
        row.addWidget(preview)
        row.addWidget(pick)
        row.addStretch(1)
        f.addRow("", row)
        self.about = QLabel()
        self.about.setWordWrap(True)
        self.about.setOpenExternalLinks(False)
        f.addRow("", self.about)
        self.voice.currentIndexChanged.connect(self._describe)
        self._describe()
        self.rate = QSpinBox(minimum=80, maximum=450, singleStep=5, value=rate)
        self.rate.setAccessibleName("Rate")
        f.addRow("Rate (words/min)", self.rate)

    def _fill(self, own: str) -> None:
        from app.voice.voices import default_natural, natural_voices, system_voices

        try:
            natural = natural_voices()
            default = default_natural(own)
        except Exception as exc:  # a broken models folder must not break the dialog
            natural, default = [], None
            self.voice.addItem(f"Natural voices unavailable: {exc}", "")
        self.voice.addItem(f"Default ({default.name})" if default else "Default (system voice)", "")
        system = system_voices()
        for v in sorted(natural, key=lambda v: (not _speaks(v.languages, own), v.name.lower())):
            self.voice.addItem(voice_label(v), v.id)
        for v in sorted(system, key=lambda v: (not _speaks(v.languages, own), v.name.lower())):
            self.voice.addItem(voice_label(v), v.id)
        if not natural and not system:
            self.voice.addItem("No voices: run `talk-llama models fetch` or install espeak-ng", "")

    def _add_file(self, path: Path) -> int:
        from app.voice.natural_voice import VoiceFile

        try:
            name, languages = VoiceFile(path).describe()
        except Exception as exc:
            self.preview_failed.emit(str(exc))
            return -1
        self.voice.insertItem(1, voice_label(Voice(str(path), name, languages, "natural", path)), str(path))
        return 1

    def _choose_file(self) -> None:
        name, _ = QFileDialog.getOpenFileName(self, "Choose a Piper voice", "", "Piper voices (*.onnx)")
        if name:
            index = self.voice.findData(name)
            index = index if index >= 0 else self._add_file(Path(name))
            if index >= 0:
                self.voice.setCurrentIndex(index)

    def _describe(self) -> None:
        """What the chosen voice is: natural voices name their model file and licence."""
        from app.voice.voices import find_natural

        spec = self.voice.currentData() or ""
        try:
            natural = find_natural(spec) if spec else None
        except Exception as exc:
            self.about.setText(str(exc))
            return
        if natural is None:
            default = "The natural voice of the conversation's language when one is downloaded."
            self.about.setText("" if spec else default)
            return
        from app.catalog.catalog import find_entry

        try:
            licence = find_entry(natural.id).license
        except KeyError:
            licence = "see the voice's own model card"
        assert natural.model is not None
        self.about.setText(f"{natural.model.name}. Licence: {licence}.")

    def selected(self) -> str:
        return self.voice.currentData() or ""

    def preview(self) -> None:
        voice, rate, device = self.selected(), self.rate.value(), self._output_device()

        def work() -> None:
            from app.voice.speaker import Speaker, SpeakerConfig

            problems: list[str] = []
            dev = int(device) if isinstance(device, str) and device.isdigit() else None
            sp = Speaker(
                SpeakerConfig(voice or None, rate, device=dev),
                on_event=lambda e: problems.append(e.message) if e.kind == "error" else None,
            )
            if sp.notice:
                problems.append(sp.notice)
            sp.say(PREVIEW_TEXT)
            sp.wait(15)
            sp.close()
            if problems:
                self.preview_failed.emit(problems[0])

        threading.Thread(target=work, daemon=True, name="gui-voice-preview").start()
