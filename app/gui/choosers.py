"""Choosers of Settings: a model file (built-in, catalog, typed path or Browse…), a sound
device and the spoken language. GUI thread only; nothing here loads a model or opens a device."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtWidgets import QComboBox, QFileDialog, QHBoxLayout, QPushButton, QWidget

from app.catalog import catalog
from app.catalog.languages import AUTO, LANGUAGES, MULTILINGUAL_WHISPER, english_only, setting_language


def _devices(kind: str) -> list[tuple[str, str]]:
    """(label, value) pairs for a device combo; value "" is the system default."""
    out = [("System default", "")]
    try:
        import sounddevice as sd

        for i, d in enumerate(sd.query_devices()):
            if d[f"max_{kind}_channels"] > 0:
                out.append((f"{d['name']} (#{i})", str(i)))
    except Exception:  # no PortAudio: only the default entry
        pass
    return out


def device_chooser(kind: str, value: str) -> QComboBox:
    c = QComboBox()
    for label, v in _devices(kind):
        c.addItem(label, v)
    idx = c.findData(value)
    c.setCurrentIndex(max(idx, 0))
    return c


def model_chooser(parent: QWidget, value: str, kind: str, pattern: str) -> tuple[QWidget, QComboBox]:
    """A model chooser: the built-in default and the catalog's models that are present (named,
    with their size), a typed path or Browse…; missing models are listed only as a hint."""
    combo = QComboBox()
    combo.setAccessibleName("Language model file" if kind == "llm" else "Speech model file")
    combo.setEditable(True)
    combo.setInsertPolicy(QComboBox.InsertPolicy.NoInsert)
    default = catalog.default_entry(kind)
    default_path = catalog.models_dir() / default.file
    combo.addItem(f"Built-in: {default.name} ({_size(default_path)})", "")
    missing = []
    for e in catalog.load_catalog():
        path = catalog.models_dir() / e.file
        if e.kind != kind or e.default:
            continue
        if path.exists():
            combo.addItem(f"{e.name} ({_size(path)})", str(path))
        else:
            missing.append(e.name)
    if value:
        idx = combo.findData(value)
        if idx < 0:
            combo.addItem(f"{Path(value).name} ({_size(Path(value))})", value)
            idx = combo.count() - 1
        combo.setCurrentIndex(idx)
    if missing:
        combo.setToolTip(
            "Not downloaded yet: " + ", ".join(missing) + ". Get one with "
            "`talk-llama models fetch NAME` (needs the internet), then choose it here."
        )
    browse = QPushButton("Browse…")

    def pick() -> None:
        path, _ = QFileDialog.getOpenFileName(parent, "Choose a model", str(catalog.models_dir()), pattern)
        if path:
            combo.addItem(f"{Path(path).name} ({_size(Path(path))})", path)
            combo.setCurrentIndex(combo.count() - 1)

    browse.clicked.connect(pick)
    row = QWidget()
    h = QHBoxLayout(row)
    h.setContentsMargins(0, 0, 0, 0)
    h.addWidget(combo, 1)
    h.addWidget(browse)
    return row, combo


def chosen_path(combo: QComboBox) -> str:
    """The model path of a chooser: the selected entry's, or a path typed into it ("" = default)."""
    typed = combo.currentText().strip()
    if typed and typed != combo.itemText(combo.currentIndex()):
        return str(Path(typed).expanduser())
    return combo.currentData() or ""


def _size(path: Path) -> str:
    try:
        return f"{path.stat().st_size / 1e6:.0f} MB"
    except OSError:
        return "missing"


def language_chooser(value: str) -> QComboBox:
    """English, Automatic, then every language whisper knows by name; data: the code or AUTO."""
    c = QComboBox()
    c.setAccessibleName("Spoken language")
    c.addItem("English", "en")
    c.addItem("Automatic (found in each utterance)", AUTO)
    for code, name in sorted(LANGUAGES.items(), key=lambda kv: kv[1]):
        if code != "en":
            c.addItem(f"{name} ({code})", code)
    c.setToolTip(
        "The language you speak; replies come in it and are spoken by a voice for it.\n"
        f"Other than English, speech is heard by the multilingual model {MULTILINGUAL_WHISPER}\n"
        "unless you choose another (the built-in language model answers other languages poorly:\n"
        "a bigger model or a server does better)."
    )
    c.setCurrentIndex(max(c.findData(setting_language(value)), 0))
    return c


def language_problem(language: str, whisper_path: str) -> str:
    """Why this speech model cannot hear this language ("" when it can)."""
    if language == "en" or not whisper_path or not english_only(Path(whisper_path)):
        return ""
    return (
        f"The speech model {Path(whisper_path).name} knows English only. For another language choose "
        f"the built-in model (it uses {MULTILINGUAL_WHISPER}) or another multilingual model."
    )
