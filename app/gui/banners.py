"""The window's message strips: at most one per source, replaced by a newer message from the
same source, removed by `clear(source)` once the cause is fixed (or by the user). GUI thread."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtWidgets import QVBoxLayout, QWidget

from app.gui.widgets import Banner


class BannerArea(QWidget):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._layout = QVBoxLayout(self)
        self._layout.setContentsMargins(0, 0, 0, 0)
        self._by_source: dict[str, Banner] = {}

    def show_message(
        self,
        source: str,
        text: str,
        kind: str = "error",
        action_text: str = "",
        on_action: Callable[[], None] | None = None,
    ) -> Banner:
        """Show `text` as the message of `source`, replacing the one it had."""
        old = self._by_source.get(source)
        if old is not None and old.label.text() == text and old.kind == kind:
            return old
        self.clear(source)
        banner = Banner(text, action_text, kind)
        if on_action is not None:
            banner.action.connect(on_action)
        banner.destroyed.connect(lambda _obj=None, s=source, b=banner: self._forget(s, b))
        self._by_source[source] = banner
        self._layout.addWidget(banner)
        return banner

    def pin(self, widget: QWidget) -> None:
        """`widget` stays above the messages (the running timers)."""
        self._layout.insertWidget(0, widget)

    def clear(self, *sources: str) -> None:
        """Remove the messages of `sources` (their cause is fixed or about to be re-checked)."""
        for source in sources:
            banner = self._by_source.pop(source, None)
            if banner is not None:
                banner.hide()
                banner.deleteLater()

    def _forget(self, source: str, banner: Banner) -> None:
        if self._by_source.get(source) is banner:
            del self._by_source[source]

    def messages(self) -> dict[str, str]:
        """source -> text of the messages shown now."""
        return {s: b.label.text() for s, b in self._by_source.items()}
