"""Where Conversation → Export writes: a save dialog that starts in the user's Documents folder
(their home when there is none: never the app's working folder) with a file name made from the
conversation's title. GUI thread only."""

from __future__ import annotations

import re
from pathlib import Path

from PySide6.QtCore import QStandardPaths
from PySide6.QtWidgets import QFileDialog, QWidget

APP_SUFFIX = " — talk-llama"  # the window title is "<conversation title> — talk-llama"


def export_name(title: str) -> str:
    """A file name from the conversation's title: letters, digits, spaces and dashes, at most
    60 characters; "conversation" when nothing is left."""
    return re.sub(r"[^\w\- ]+", "", title).strip()[:60].strip() or "conversation"


def export_folder() -> Path:
    documents = Path(QStandardPaths.writableLocation(QStandardPaths.StandardLocation.DocumentsLocation))
    return documents if documents.is_dir() else Path.home()


def ask_export_path(parent: QWidget, title: str, fmt: str) -> Path | None:
    """The path the user chose for the conversation `title` (blocks in the dialog), or None."""
    kinds = "Markdown (*.md)" if fmt == "md" else "JSON (*.json)"
    start = export_folder() / f"{export_name(title)}.{fmt}"
    path, _ = QFileDialog.getSaveFileName(parent, "Export conversation", str(start), kinds)
    return Path(path) if path else None
