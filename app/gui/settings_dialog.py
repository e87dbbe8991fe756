"""Settings dialog: edits a copy of AppSettings; the window decides what to reload."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QDoubleSpinBox,
    QFormLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QPushButton,
    QSpinBox,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from app.brain.persona import default_prompt
from app.brain.sampling import SamplingConfig
from app.catalog import catalog
from app.gui import theme
from app.gui.choosers import chosen_path, device_chooser, language_chooser, language_problem, model_chooser
from app.gui.server_chooser import ServerChooser
from app.gui.tray import TrayIcon
from app.gui.voice_tab import VoiceTab
from app.loop.settings import AppSettings, sampling_config


class SettingsDialog(QDialog):
    def __init__(self, settings: AppSettings, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Settings")
        self.setMinimumWidth(560)
        self.s = dataclasses.replace(settings)
        tabs = QTabWidget()
        tabs.setAccessibleName("Settings sections")
        tabs.addTab(self._models_tab(), "Models")
        tabs.addTab(self._audio_tab(), "Audio")
        tabs.addTab(self._persona_tab(), "Persona")
        tabs.addTab(self._voice_tab(), "Voice")
        tabs.addTab(self._window_tab(), "Window")
        tabs.addTab(self._advanced_tab(), "Advanced")
        buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel
        )
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        self.tabs = tabs
        self.problem = QLabel()  # why OK did not close the dialog
        self.problem.setWordWrap(True)
        self.problem.setStyleSheet("QLabel { color: #b3261e; font-weight: 600; }")
        self.problem.setAccessibleName("Settings problem")
        self.problem.hide()
        lay = QVBoxLayout(self)
        lay.addWidget(tabs)
        lay.addWidget(self.problem)
        lay.addWidget(buttons)

    def accept(self) -> None:
        """OK: the chosen model files must be usable, else say what is wrong and stay open."""
        for combo, kind in ((self.llm, "llm"), (self.whisper, "whisper")):
            path = chosen_path(combo)
            if not path:  # the built-in default: when missing, the window says how to fetch it
                continue
            try:
                catalog.check_file(Path(path), kind, verify_hash=False)
            except catalog.ModelError as exc:
                self.problem.setText(str(exc))
                self.problem.show()
                self.tabs.setCurrentIndex(0)
                combo.setFocus()
                return
        if why := language_problem(self.language.currentData(), chosen_path(self.whisper)):
            self._show_problem(why)
            self.tabs.setCurrentIndex(0)
            self.language.setFocus()
            return
        self.problem.hide()
        super().accept()

    def _show_problem(self, message: str) -> None:
        self.problem.setText(message)
        self.problem.show()

    def _models_tab(self) -> QWidget:
        w = QWidget()
        f = QFormLayout(w)
        row, self.llm = model_chooser(self, self.s.llm_model, "llm", "GGUF models (*.gguf)")
        f.addRow("Language model", row)
        row, self.whisper = model_chooser(self, self.s.whisper_model, "whisper", "Whisper ggml (*.bin)")
        f.addRow("Speech model", row)
        more = QLabel(
            "More models: run <code>talk-llama models list</code> and <code>models fetch NAME</code>."
        )
        more.setWordWrap(True)
        f.addRow("", more)
        self.server = ServerChooser(self.s.llm_url, self.s.llm_remote_model, f)
        self.n_ctx = QSpinBox(minimum=256, maximum=131072, singleStep=256, value=self.s.n_ctx)
        f.addRow("Context size (tokens)", self.n_ctx)
        self.threads = QSpinBox(minimum=0, maximum=64, value=self.s.threads)
        self.threads.setSpecialValueText("Automatic")
        self.threads.setToolTip(
            "Automatic: as many as the cores other programs leave free, checked before each turn\n"
            "(a thread sharing a busy core slows all the others down)."
        )
        f.addRow("Threads", self.threads)
        self.language = language_chooser(self.s.language)
        f.addRow("Language", self.language)
        return w

    def _audio_tab(self) -> QWidget:
        w = QWidget()
        f = QFormLayout(w)
        self.input_dev = device_chooser("input", self.s.input_device)
        self.output_dev = device_chooser("output", self.s.output_device)
        f.addRow("Microphone", self.input_dev)
        f.addRow("Speaker", self.output_dev)
        self.hands_free = QCheckBox("Hands-free (voice activity detection)")
        self.hands_free.setChecked(self.s.hands_free)
        f.addRow("Mode", self.hands_free)
        self.vad = QDoubleSpinBox(minimum=0.05, maximum=1.0, singleStep=0.05, value=self.s.vad_thold)
        f.addRow("VAD threshold", self.vad)
        self.fth = QDoubleSpinBox(minimum=0, maximum=1000, singleStep=10, value=self.s.freq_thold)
        f.addRow("High-pass (Hz)", self.fth)
        self.turn_end = QComboBox()
        self.turn_end.addItem("When the words sound finished", "words")
        self.turn_end.addItem("After a fixed silence", "fixed")
        self.turn_end.setToolTip(
            "Hands-free: the language model judges whether your words are finished, and your "
            "voice whether you paused mid-sentence; after “tell me about…” it waits longer, "
            "after a complete question it answers sooner."
        )
        self.turn_end.setCurrentIndex(max(0, self.turn_end.findData(self.s.turn_end)))
        f.addRow("End of turn", self.turn_end)
        self.silence = QSpinBox(minimum=200, maximum=3000, singleStep=50, value=self.s.end_silence_ms)
        self.silence.setToolTip("The fixed silence; with a remote server this rule always applies.")
        f.addRow("Fixed silence (ms)", self.silence)
        self.go_on = QSpinBox(minimum=0, maximum=5000, singleStep=250, value=self.s.continue_ms)
        self.go_on.setToolTip("Talking again this soon after a turn ended joins it (0: never).")
        f.addRow("Going on within (ms)", self.go_on)
        self.ptt_key = QLineEdit(self.s.ptt_key)
        f.addRow("Push-to-talk key", self.ptt_key)
        self.global_ptt = QCheckBox("Also outside the window (X11 only)")
        self.global_ptt.setChecked(self.s.global_ptt)
        f.addRow("", self.global_ptt)
        return w

    def _persona_tab(self) -> QWidget:
        w = QWidget()
        f = QFormLayout(w)
        self.person = QLineEdit(self.s.person)
        self.bot = QLineEdit(self.s.bot)
        f.addRow("Your name", self.person)
        f.addRow("Assistant name", self.bot)
        self.prompt = QPlainTextEdit(self.s.prompt)
        self.prompt.setToolTip("{person}, {bot}, {time} and {year} are filled in.")
        f.addRow("System prompt", self.prompt)
        reset = QPushButton("Reset to default")
        reset.clicked.connect(lambda: self.prompt.setPlainText(default_prompt()))
        f.addRow("", reset)
        self.shared_memory = QCheckBox("Remember what I tell you across conversations")
        self.shared_memory.setToolTip(
            "Off: each conversation knows only what was said in it. On: your name, where you "
            "live, what you like… told in one conversation are known in the others (kept on this "
            "computer only; Conversation → What I remember shows them, each with Forget)."
        )
        self.shared_memory.setChecked(self.s.shared_memory)
        f.addRow("Memory", self.shared_memory)
        self.thinking = QComboBox()
        for label, value in (("Automatic (off: replies are spoken)", "auto"), ("On", "on"), ("Off", "off")):
            self.thinking.addItem(label, value)
        self.thinking.setCurrentIndex(max(0, self.thinking.findData(self.s.thinking)))
        self.thinking.setToolTip(
            "Reasoning models (Qwen3, DeepSeek-R1, ...) can think before they answer. The thinking "
            "is never spoken: it is shown folded above the reply, and nothing is heard until it ends."
        )
        f.addRow("Thinking", self.thinking)
        return w

    def _voice_tab(self) -> QWidget:
        self.voice_tab = VoiceTab(self.s.voice, self.s.rate, self.s.language, self.output_dev.currentData)
        self.voice_tab.preview_failed.connect(self._show_problem)
        return self.voice_tab

    # Sampling knobs: (field, label, minimum, maximum, step; step 1 = whole numbers), tooltip.
    SAMPLING_FIELDS = (
        ("temperature", "Temperature", 0.0, 2.0, 0.05, "0 = always the likeliest word"),
        ("top_k", "Top-k", 0, 200, 1, "Choose among the k likeliest tokens (0 = all)"),
        ("top_p", "Top-p", 0.0, 1.0, 0.05, "Choose among the likeliest tokens covering this probability"),
        (
            "dry_multiplier",
            "Repetition guard (DRY)",
            0.0,
            5.0,
            0.1,
            "How strongly the assistant avoids repeating phrases it has already said (0 = off)",
        ),
        ("dry_allowed_length", "DRY: free repeat length", 1, 10, 1, "Repeats this many tokens long are free"),
        (
            "history_tokens",
            "Earlier replies considered",
            -1,
            131072,
            64,
            "How much of its own earlier replies (tokens) the repetition guards look at: All "
            "(everything still in the context), or the newest N tokens (0: only the reply being written)",
        ),
        ("repeat_penalty", "Repeat penalty", 1.0, 2.0, 0.05, "Penalty on recently used tokens (1 = off)"),
        ("repeat_last_n", "Repeat penalty window", 0, 4096, 16, "Tokens the repeat penalty looks back"),
        ("presence_penalty", "Presence penalty", 0.0, 2.0, 0.05, "Penalty on any token already used"),
        ("frequency_penalty", "Frequency penalty", 0.0, 2.0, 0.05, "Penalty growing with each use"),
        ("seed", "Seed", 0, 2**31 - 1, 1, "Random seed of the sampler"),
    )

    def _window_tab(self) -> QWidget:
        w = QWidget()
        f = QFormLayout(w)
        self.theme = QComboBox()
        self.theme.setAccessibleName("Appearance")
        for choice in theme.CHOICES:
            self.theme.addItem(theme.LABELS[choice], choice)
        self.theme.setCurrentIndex(max(0, self.theme.findData(self.s.theme)))
        f.addRow("Appearance", self.theme)
        self.close_to_tray = QCheckBox("Closing the window keeps talk-llama in the system tray")
        self.close_to_tray.setChecked(self.s.close_to_tray)
        if not TrayIcon.available():
            self.close_to_tray.setEnabled(False)
            self.close_to_tray.setToolTip("This desktop shows no system tray: closing the window quits.")
        f.addRow("", self.close_to_tray)
        return w

    def _advanced_tab(self) -> QWidget:
        """Sampling: how the assistant picks its words (docs/conversation.md: the sampler)."""
        w = QWidget()
        f = QFormLayout(w)
        current = sampling_config(self.s.sampling)
        self.sampling_boxes: dict[str, QSpinBox | QDoubleSpinBox] = {}
        for key, label, lo, hi, step, tip in self.SAMPLING_FIELDS:
            box: QSpinBox | QDoubleSpinBox
            if isinstance(step, int):
                box = QSpinBox()
                box.setRange(int(lo), int(hi))
                box.setSingleStep(step)
            else:
                box = QDoubleSpinBox(decimals=2)
                box.setRange(lo, hi)
                box.setSingleStep(step)
            box.setValue(getattr(current, key))
            if lo < 0:
                box.setSpecialValueText("All")  # shown for the minimum, -1
            box.setToolTip(tip)
            box.setAccessibleName(label)
            self.sampling_boxes[key] = box
            f.addRow(label, box)
        reset = QPushButton("Reset to defaults")
        reset.clicked.connect(self._reset_sampling)
        f.addRow("", reset)
        return w

    def _reset_sampling(self) -> None:
        defaults = SamplingConfig()
        for key, box in self.sampling_boxes.items():
            box.setValue(getattr(defaults, key))

    def _sampling_overrides(self) -> dict[str, float]:
        """Only the values that differ from the defaults are stored."""
        defaults = SamplingConfig()
        out = {}
        for key, box in self.sampling_boxes.items():
            value = box.value()
            if abs(value - getattr(defaults, key)) > 1e-6:
                out[key] = value
        return out

    def result_settings(self) -> AppSettings:
        return dataclasses.replace(
            self.s,
            llm_model=chosen_path(self.llm),
            llm_url=self.server.url.text().strip(),
            llm_remote_model=self.server.model.text().strip(),
            whisper_model=chosen_path(self.whisper),
            n_ctx=self.n_ctx.value(),
            threads=self.threads.value(),
            language=self.language.currentData(),
            input_device=self.input_dev.currentData(),
            output_device=self.output_dev.currentData(),
            hands_free=self.hands_free.isChecked(),
            vad_thold=self.vad.value(),
            freq_thold=self.fth.value(),
            end_silence_ms=self.silence.value(),
            turn_end=self.turn_end.currentData(),
            continue_ms=self.go_on.value(),
            ptt_key=self.ptt_key.text().strip() or "Space",
            global_ptt=self.global_ptt.isChecked(),
            person=self.person.text().strip() or "User",
            bot=self.bot.text().strip() or "Aria",
            prompt=self.prompt.toPlainText().strip() or default_prompt(),
            voice=self.voice_tab.selected(),
            rate=self.voice_tab.rate.value(),
            sampling=self._sampling_overrides(),
            theme=self.theme.currentData(),
            close_to_tray=self.close_to_tray.isChecked(),
            shared_memory=self.shared_memory.isChecked(),
            thinking=self.thinking.currentData(),
        )
