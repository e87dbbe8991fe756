"""Settings → Models: an OpenAI-compatible server as the language model, with "Test
connection" (which asks the server in the background; the answer comes back as a signal, so
the dialog never blocks)."""

from __future__ import annotations

import threading

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QFormLayout, QHBoxLayout, QLabel, QLineEdit, QPushButton, QWidget


class ServerChooser(QWidget):
    checked = Signal(str)  # the result of a connection test, delivered on the GUI thread

    def __init__(self, url: str, model: str, form: QFormLayout) -> None:
        """Adds its rows to `form` (the dialog's Models tab)."""
        super().__init__()
        self.url = QLineEdit(url)
        self.url.setPlaceholderText("optional: http://host:8080/v1 (llama-server, vLLM, Ollama)")
        self.url.setToolTip(
            "An OpenAI-compatible server to use as the language model instead of the local one;\n"
            "speech stays on this computer. An API key, if needed, is read from TALK_LLAMA_API_KEY."
        )
        self.model = QLineEdit(model)
        self.model.setAccessibleName("Server model")  # its row's label names this whole row
        self.model.setPlaceholderText("its model (empty: the server's first)")
        test = QPushButton("Test connection")
        test.clicked.connect(self.test)
        self.result = QLabel()
        self.result.setWordWrap(True)
        self.checked.connect(self.result.setText)
        row = QHBoxLayout(self)
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(self.model, 1)
        row.addWidget(test)
        form.addRow("Or a server", self.url)
        form.addRow("Server model", self)
        form.addRow("", self.result)

    def test(self) -> None:
        """Ask the server for its model and context in the background; the answer shows below."""
        url, model = self.url.text().strip(), self.model.text().strip()
        if not url:
            self.result.setText("Enter the server's address first (it ends in /v1).")
            return
        self.result.setText(f"Connecting to {url}…")

        def work() -> None:
            from app.brain.records import BrainError
            from app.brain.server_check import describe_server

            try:
                self.checked.emit(f"✓ Connected: {describe_server(url, model)}.")
            except BrainError as exc:
                self.checked.emit(f"✗ {exc}")

        threading.Thread(target=work, daemon=True, name="gui-test-server").start()
