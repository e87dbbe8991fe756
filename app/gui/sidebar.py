"""The conversations sidebar: a New button and the saved conversations (title, and when it was
last used), newest first. Titles are edited in place (F2, double-click, or the context menu);
Delete removes one (the window offers Undo). The widget only shows and asks: it emits
`chosen(id)`, `new_requested()`, `rename_requested(id, title)` and `delete_requested(id)`, and
the window's Conversations controller decides. GUI thread only.
"""

from __future__ import annotations

import time
from datetime import datetime

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, QSize, Qt, Signal
from PySide6.QtGui import QAction, QFont, QFontMetrics, QKeySequence, QPainter, QPalette
from PySide6.QtWidgets import (
    QAbstractItemView,
    QApplication,
    QListWidget,
    QListWidgetItem,
    QMenu,
    QPushButton,
    QStyle,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QVBoxLayout,
    QWidget,
)

from app.loop.conversation_store import SavedConversation

ID_ROLE = Qt.ItemDataRole.UserRole
DATE_ROLE = Qt.ItemDataRole.UserRole + 1


def when(epoch: float, now: float | None = None) -> str:
    """A short date for the list: the time today, the weekday this week, else the date."""
    at, today = datetime.fromtimestamp(epoch), datetime.fromtimestamp(now or time.time())
    days = (today.date() - at.date()).days
    if days == 0:
        return at.strftime("%H:%M")
    if days == 1:
        return "Yesterday"
    if 0 < days < 7:
        return at.strftime("%A")
    return at.strftime("%d %b %Y") if at.year != today.year else at.strftime("%d %b")


class _TitleAndDate(QStyledItemDelegate):
    """Draws an item's title with its date, smaller and muted, on a second line; editing
    changes the title alone (the item's text)."""

    PAD = 6

    def _fonts(self, option: QStyleOptionViewItem) -> tuple[QFont, QFont]:
        title, small = QFont(option.font), QFont(option.font)
        small.setPointSizeF(option.font.pointSizeF() * 0.85)
        return title, small

    def sizeHint(self, option: QStyleOptionViewItem, index: QModelIndex | QPersistentModelIndex) -> QSize:
        title, small = self._fonts(option)
        height = QFontMetrics(title).height() + QFontMetrics(small).height() + 2 * self.PAD + 2
        return QSize(120, height)

    def paint(
        self, painter: QPainter, option: QStyleOptionViewItem, index: QModelIndex | QPersistentModelIndex
    ) -> None:
        opt = QStyleOptionViewItem(option)
        self.initStyleOption(opt, index)
        text, opt.text = opt.text, ""
        style = opt.widget.style() if opt.widget else QApplication.style()
        style.drawControl(QStyle.ControlElement.CE_ItemViewItem, opt, painter, opt.widget)  # background
        selected = bool(opt.state & QStyle.StateFlag.State_Selected)
        pal = opt.palette
        ink = pal.color(QPalette.ColorRole.HighlightedText if selected else QPalette.ColorRole.Text)
        muted = ink if selected else pal.color(QPalette.ColorRole.PlaceholderText)
        title_font, small = self._fonts(opt)
        box = opt.rect.adjusted(self.PAD + 2, self.PAD, -self.PAD, -self.PAD)
        line = QFontMetrics(title_font).height()
        painter.save()
        painter.setFont(title_font)
        painter.setPen(ink)
        elided = QFontMetrics(title_font).elidedText(text, Qt.TextElideMode.ElideRight, box.width())
        painter.drawText(box.adjusted(0, 0, 0, -(box.height() - line)), Qt.AlignmentFlag.AlignLeft, elided)
        painter.setFont(small)
        painter.setPen(muted)
        painter.drawText(
            box.adjusted(0, line + 2, 0, 0), Qt.AlignmentFlag.AlignLeft, str(index.data(DATE_ROLE))
        )
        painter.restore()


class Sidebar(QWidget):
    chosen = Signal(str)
    new_requested = Signal()
    rename_requested = Signal(str, str)
    delete_requested = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setAccessibleName("Conversations")
        self.new_btn = QPushButton("+  New conversation")
        self.new_btn.setAccessibleName("New conversation")
        self.new_btn.setToolTip("Start a new conversation (Ctrl+N); this one stays in the list")
        self.new_btn.clicked.connect(self.new_requested)
        self.list = QListWidget()
        self.list.setAccessibleName("Saved conversations")
        self.list.setUniformItemSizes(True)
        self.list.setEditTriggers(
            QAbstractItemView.EditTrigger.DoubleClicked | QAbstractItemView.EditTrigger.EditKeyPressed
        )
        self.list.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.list.customContextMenuRequested.connect(self._menu)
        self.list.itemActivated.connect(self._activated)
        self.list.itemClicked.connect(self._activated)
        self.list.itemChanged.connect(self._edited)
        self.list.setItemDelegate(_TitleAndDate(self.list))
        self.list.setWordWrap(False)
        self.list.setTextElideMode(Qt.TextElideMode.ElideRight)
        delete = QAction("Delete", self.list)
        delete.setShortcut(QKeySequence.StandardKey.Delete)
        delete.setShortcutContext(Qt.ShortcutContext.WidgetShortcut)
        delete.triggered.connect(lambda: self._delete(self.list.currentItem()))
        self.list.addAction(delete)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(9, 9, 0, 9)  # level with the conversation column's edges
        lay.addWidget(self.new_btn)
        lay.addWidget(self.list, 1)
        self._filling = False

    def sizeHint(self) -> QSize:
        return QSize(220, 400)

    def minimumSizeHint(self) -> QSize:
        """None: a narrow window hides the sidebar (MainWindow) instead of refusing to narrow."""
        return QSize(0, 0)

    # ----- contents ----------------------------------------------------------------------------
    def show_list(self, conversations: list[SavedConversation], current: str) -> None:
        """Replace the list; `current` is selected."""
        self._filling = True
        try:
            self.list.clear()
            for conv in conversations:
                item = QListWidgetItem(conv.title)
                item.setData(ID_ROLE, conv.id)
                item.setData(DATE_ROLE, when(conv.updated))
                item.setData(Qt.ItemDataRole.AccessibleTextRole, f"{conv.title}, {when(conv.updated)}")
                item.setToolTip(
                    f"{conv.title}\nlast used {datetime.fromtimestamp(conv.updated):%A %d %B, %H:%M}"
                )
                item.setFlags(item.flags() | Qt.ItemFlag.ItemIsEditable)
                self.list.addItem(item)
                if conv.id == current:
                    self.list.setCurrentItem(item)
        finally:
            self._filling = False

    def ids(self) -> list[str]:
        return [self.list.item(i).data(ID_ROLE) for i in range(self.list.count())]

    def rename(self, conv_id: str) -> None:
        """Start editing a title (menu: Rename)."""
        item = self._item(conv_id)
        if item is not None:
            self.list.editItem(item)

    # ----- user actions ------------------------------------------------------------------------
    def _item(self, conv_id: str) -> QListWidgetItem | None:
        items = (self.list.item(i) for i in range(self.list.count()))
        return next((item for item in items if item.data(ID_ROLE) == conv_id), None)

    def _activated(self, item: QListWidgetItem) -> None:
        self.chosen.emit(item.data(ID_ROLE))

    def _edited(self, item: QListWidgetItem) -> None:
        if self._filling:
            return
        self.rename_requested.emit(item.data(ID_ROLE), item.text().strip())

    def _delete(self, item: QListWidgetItem | None) -> None:
        if item is not None:
            self.delete_requested.emit(item.data(ID_ROLE))

    def _menu(self, pos) -> None:
        item = self.list.itemAt(pos)
        if item is None:
            return
        menu = QMenu(self)
        menu.addAction("Open", lambda: self._activated(item))
        menu.addAction("Rename", lambda: self.rename(item.data(ID_ROLE)))
        menu.addAction("Delete", lambda: self._delete(item))
        menu.exec(self.list.viewport().mapToGlobal(pos))
