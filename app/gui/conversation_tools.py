"""What the Conversation menu does with the open conversation beyond talking: export it to a
file and show what the assistant remembers of it (the memory panel).

Both read the conversation from the AssistantBridge (the llm thread answers the memory list
as a `memory` event, passed to `on_memory`). GUI thread only.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from PySide6.QtWidgets import QWidget

from app.brain import history
from app.gui.banners import BannerArea
from app.gui.bridge import AssistantBridge
from app.gui.export_path import ask_export_path
from app.gui.memory_panel import MemoryPanel
from app.loop.events import MemoryFacts
from app.loop.settings import AppSettings


class ConversationTools:
    """Export and the memory panel for the window `parent`; `settings` and `title` are read
    at each use (both change while the window lives)."""

    def __init__(
        self,
        parent: QWidget,
        bridge: AssistantBridge,
        banners: BannerArea,
        settings: Callable[[], AppSettings],
        title: Callable[[], str],
    ) -> None:
        self._parent = parent
        self._bridge = bridge
        self._banners = banners
        self._settings = settings
        self._title = title
        self.memory_panel: MemoryPanel | None = None  # made when first opened

    def show_memory(self) -> None:
        """Conversation → What I remember: the panel, filled when the llm thread answers."""
        if self.memory_panel is None:
            self.memory_panel = MemoryPanel(self._parent)
            self.memory_panel.forget_requested.connect(self._bridge.forget)
        self.memory_panel.show()
        self.memory_panel.raise_()
        self._bridge.report_memory()

    def on_memory(self, ev: MemoryFacts) -> None:
        """The facts the memory note holds now."""
        if self.memory_panel is not None:
            self.memory_panel.set_facts(list(ev.facts))

    def export(self, fmt: str) -> None:
        """Conversation → Export: a file dialog, then `export_to`."""
        if path := ask_export_path(self._parent, self._title(), fmt):
            self.export_to(path, fmt)

    def export_to(self, path: Path, fmt: str) -> None:
        """Write the conversation to `path` as `fmt` ("md" or "json"); a banner says how it went."""
        s = self._settings()
        forgotten = self._bridge.forgotten()
        problem = history.export(self._bridge.history(), s.person, s.bot, path, fmt, forgotten)
        if problem:
            self._banners.show_message("export", f"Could not save the conversation to {path}: {problem}")
        else:
            self._banners.show_message("export", f"Conversation saved to {path}", kind="info")
