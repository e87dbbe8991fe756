"""The window's conversations: which one is open, and what the sidebar asks for.

Owns the ConversationStore (`conversations_dir()`) and the open conversation's id, kept in the
settings so the last one opens at start. Opening one shows its saved messages at once (read from
its folder) and asks the assistant to save the current conversation and continue the chosen one
(`AssistantBridge.open_conversation`); the `switched` event then brings the messages as the
assistant holds them and how long the switch took. New starts an empty conversation (the current
one stays in the list); an empty conversation that is left is removed. Delete sets the folder
aside with an Undo banner until the window closes. GUI thread only.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path

from PySide6.QtWidgets import QLineEdit

from app.brain.session_files import read_history
from app.gui.banners import BannerArea
from app.gui.bridge import AssistantBridge
from app.gui.chat_feed import ChatFeed
from app.gui.sidebar import Sidebar
from app.loop.conversation_store import UNTITLED, ConversationStore
from app.loop.events import History, Switched
from app.loop.settings import LEGACY_SESSION, AppSettings, conversations_dir
from app.system.paths import data_dir

log = logging.getLogger(__name__)


class Conversations:
    def __init__(
        self,
        sidebar: Sidebar,
        settings: Callable[[], AppSettings],
        bridge: AssistantBridge,
        feed: ChatFeed,
        banners: BannerArea,
        status: Callable[[str], None],
        store: ConversationStore | None = None,
        draft: QLineEdit | None = None,
        show_title: Callable[[str], None] = lambda _title: None,
    ) -> None:
        """`settings()`: the window's current settings (saved when the open conversation
        changes); `status(text)`: a passing message for the status bar; `draft`: the message
        box, whose unsent text belongs to the conversation it was typed in (kept per
        conversation while the window is open); `show_title(title)`: the open conversation's
        title, whenever it may have changed (the window title)."""
        self.sidebar = sidebar
        self._settings = settings
        self.bridge = bridge
        self.feed = feed
        self.banners = banners
        self._status = status
        self.store = store or ConversationStore(conversations_dir())
        self.store.purge_deleted()
        self._deleting: list[str] = []  # deleted while open: set aside after the switch
        self._draft, self._show_title = draft, show_title
        self._drafts: dict[str, str] = {}  # conversation id -> unsent text typed in it
        self.title = UNTITLED  # the open conversation's, as last listed
        self.current = self._first()
        sidebar.chosen.connect(self.open)
        sidebar.new_requested.connect(self.new)
        sidebar.rename_requested.connect(self.rename)
        sidebar.delete_requested.connect(self.delete)
        self.refresh()

    def _first(self) -> str:
        """The conversation to open at start: the last one, else the single session of an
        earlier version, else the newest, else a new one."""
        wanted = self._settings().conversation
        if self.store.exists(wanted):
            return wanted
        adopted = self.store.adopt(data_dir() / LEGACY_SESSION)
        found = self.store.list()
        conv_id = adopted.id if adopted else found[0].id if found else self.store.create().id
        self._remember(conv_id)
        return conv_id

    @property
    def path(self) -> Path:
        """The open conversation's session folder."""
        return self.store.path(self.current)

    def refresh(self) -> None:
        listed = self.store.list()
        self.sidebar.show_list(listed, self.current)
        self.title = next((c.title for c in listed if c.id == self.current), UNTITLED)
        self._show_title(self.title)

    # ----- what the sidebar asks -----------------------------------------------------------------
    def open(self, conv_id: str) -> None:
        if conv_id != self.current and self.store.exists(conv_id):
            self._switch(conv_id)

    def _switch(self, conv_id: str, save: bool = True) -> bool:
        """Open `conv_id`; True when the assistant switches (a `switched` event will say when
        it has let go of the previous folder)."""
        self._leave()
        if self._draft is not None:  # the unsent text stays with its conversation
            self._drafts[self.current] = self._draft.text()
            self._draft.setText(self._drafts.pop(conv_id, ""))
        self.current = conv_id
        self._remember(conv_id)
        self.feed.handle(History(tuple(read_history(self.path))))  # at once, from the files
        switching = self.bridge.open_conversation(self.path, save)
        self.refresh()
        return switching

    def new(self) -> None:
        """An empty conversation (the open one if it is empty already)."""
        if self._empty(self.current):
            self.refresh()
            return
        self.open(self.store.create().id)

    def rename(self, conv_id: str, title: str) -> None:
        if self.store.exists(conv_id):
            self.store.rename(conv_id, title)
        self.refresh()

    def delete(self, conv_id: str) -> None:
        """Set the conversation aside (Undo brings it back); deleting the open one opens the
        next, or a new one."""
        if not self.store.exists(conv_id):
            return
        if conv_id == self.current:
            others = [c.id for c in self.store.list() if c.id != conv_id]
            if self._switch(others[0] if others else self.store.create().id, save=False):
                self._deleting.append(conv_id)  # moved once the assistant has let go of it
                return
        self._set_aside(conv_id)

    def _set_aside(self, conv_id: str) -> None:
        if not self.store.exists(conv_id):
            return
        title = self.store.get(conv_id).title
        self.store.delete(conv_id)
        self.refresh()
        self.banners.show_message(
            "deleted", f"Deleted “{title}”.", "info", "Undo", lambda: self.undo_delete(conv_id)
        )

    def undo_delete(self, conv_id: str) -> None:
        self.banners.clear("deleted")
        if self.store.restore(conv_id):
            self.refresh()
        else:
            self._status("That conversation can no longer be restored.")

    # ----- events from the assistant ---------------------------------------------------------------
    def on_user_turn(self, text: str) -> None:
        """The first turn names an untitled conversation."""
        if self.store.note_first_turn(self.current, text):
            self.refresh()

    def on_retracted(self, text: str) -> None:
        """The newest turn left the conversation: a title made of it goes with it."""
        if self.store.forget_first_turn(self.current, text):
            self.refresh()

    def on_saved(self) -> None:
        """A turn ended (and was saved): its title and date in the list."""
        self.refresh()

    def on_switched(self, ev: Switched) -> None:
        deleting, self._deleting = self._deleting, []
        for conv_id in deleting:
            self._set_aside(conv_id)
        if ev.message:
            self._status(ev.message)
        elif ev.messages:
            how = "its memory restored as saved" if ev.resumed else f"{ev.replayed_turns} turns read again"
            self._status(f"Conversation opened in {ev.ms:.0f} ms ({how}).")

    def closed(self) -> None:
        """The window closed (the assistant has saved): deletions are final now."""
        for conv_id in self._deleting:
            self.store.discard(conv_id)
        self.store.purge_deleted()

    # ----- helpers -----------------------------------------------------------------------------------
    def _leave(self) -> None:
        """Leaving the open conversation: an empty one is not kept."""
        if self._empty(self.current):
            self.store.discard(self.current)

    def _empty(self, conv_id: str) -> bool:
        """Nothing said in it yet (nothing saved, nothing on screen, nothing typed)."""
        typed = self._draft is not None and conv_id == self.current and self._draft.text().strip()
        return (
            self.store.exists(conv_id)
            and self.store.get(conv_id).empty
            and not self.feed.chat.messages
            and not typed
        )

    def _remember(self, conv_id: str) -> None:
        s = self._settings()
        if s.conversation != conv_id:
            s.conversation = conv_id
            s.save()
