"""Saved conversations: one session folder each, listed for the window's sidebar.

    conversations/                 (under the app's data folder)
      <id>/                        a session folder (brain.session or the remote brain's file)
        about.json                 {"title": ..., "renamed": bool, "created": epoch seconds}
      .deleted/<id>/               deleted, until `purge_deleted()`; `restore()` brings it back

Ids are creation stamps ("20261201-031500-4f2a"), so they sort by age and never clash. A
conversation's title is the start of its first user turn (`note_first_turn`) unless the user
renamed it; its date is when its session was last written. The session files inside a folder
are written by the assistant's llm thread; this class writes only `about.json` and moves whole
folders. Use it from one thread (the GUI's). Nothing here raises for a damaged folder: a folder
whose about.json is unreadable is listed with a title made from its history.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from app.brain import session_files
from app.system.paths import private_dir, write_private
from app.system.typed_json import typed_fields

log = logging.getLogger(__name__)
ABOUT = "about.json"
DELETED = ".deleted"
UNTITLED = "New conversation"
TITLE_CHARS = 48


@dataclass
class SavedConversation:
    id: str
    path: Path
    title: str
    updated: float  # epoch seconds: the last save (or creation)
    empty: bool  # nothing said yet (no session written)


@dataclass
class About:
    """What about.json holds (the entries `_about` accepts)."""

    title: str = ""
    renamed: bool = False  # the user chose the title
    created: float = 0.0  # epoch seconds


def title_from(text: str) -> str:
    """A title from a user turn: its first line, cut at a word near TITLE_CHARS."""
    line = " ".join(text.split())
    if len(line) <= TITLE_CHARS:
        return line or UNTITLED
    cut = line[:TITLE_CHARS].rsplit(" ", 1)[0] or line[:TITLE_CHARS]
    return cut.rstrip(",.;:") + "…"


class ConversationStore:
    """See the module docstring."""

    def __init__(self, root: Path) -> None:
        self.root = root
        private_dir(root)

    # ----- listing -------------------------------------------------------------------------
    def list(self) -> list[SavedConversation]:
        """Every saved conversation, the most recently used first."""
        found = [self.get(p.name) for p in self.root.iterdir() if p.is_dir() and not p.name.startswith(".")]
        return sorted(found, key=lambda c: (c.updated, c.id), reverse=True)

    def get(self, conv_id: str) -> SavedConversation:
        path = self.root / conv_id
        about = self._about(path)
        saved = [p.stat().st_mtime for name in session_files.ALL if (p := path / name).exists()]
        updated = max(saved, default=float(about.get("created") or path.stat().st_mtime))
        title = str(about.get("title") or "")
        # Named from its history once (reading it is not cheap).
        if not title and saved and (first := self._first_user_text(path)):
            title = title_from(first)
            try:
                self._write_about(path, {**about, "title": title})
            except OSError as exc:  # a read-only folder is still listed
                log.warning("could not keep the title of %s: %s", path, exc)
        return SavedConversation(conv_id, path, title or UNTITLED, updated, empty=not saved)

    def path(self, conv_id: str) -> Path:
        return self.root / conv_id

    def exists(self, conv_id: str) -> bool:
        return bool(conv_id) and not conv_id.startswith(".") and (self.root / conv_id).is_dir()

    # ----- changes -------------------------------------------------------------------------
    def create(self) -> SavedConversation:
        """A new, empty conversation."""
        conv_id = time.strftime("%Y%m%d-%H%M%S-") + uuid.uuid4().hex[:4]
        path = self.root / conv_id
        private_dir(path)
        self._write_about(path, {"title": "", "renamed": False, "created": time.time()})
        return self.get(conv_id)

    def adopt(self, folder: Path) -> SavedConversation | None:
        """Move an existing session folder in as a conversation (the single session of earlier
        versions); None when `folder` holds no session."""
        if not any((folder / name).exists() for name in session_files.ALL):
            return None
        new = self.create()
        for name in session_files.ALL:
            if (folder / name).exists():
                os.replace(folder / name, new.path / name)
        shutil.rmtree(folder, ignore_errors=True)
        log.info("the saved conversation in %s is now conversation %s", folder, new.id)
        return self.get(new.id)

    def note_first_turn(self, conv_id: str, text: str) -> bool:
        """Title an untitled conversation after its first user turn; True if the title changed."""
        path = self.root / conv_id
        about = self._about(path)
        if about.get("title") or not text.strip() or not path.is_dir():
            return False
        self._write_about(path, {**about, "title": title_from(text)})
        return True

    def forget_first_turn(self, conv_id: str, text: str) -> bool:
        """The turn `text` left the conversation: an automatic title made of it goes (the next
        first turn names the conversation); True if the title changed."""
        path = self.root / conv_id
        about = self._about(path)
        if about.get("renamed") or not about.get("title") or about["title"] != title_from(text):
            return False
        self._write_about(path, {**about, "title": ""})
        return True

    def rename(self, conv_id: str, title: str) -> None:
        """The user's title (an empty one goes back to the automatic title)."""
        path = self.root / conv_id
        title = " ".join(title.split())
        about = self._about(path)
        auto = title_from(first) if (first := self._first_user_text(path)) else ""
        self._write_about(path, {**about, "title": title or auto, "renamed": bool(title)})

    def delete(self, conv_id: str) -> None:
        """Set aside (restorable until `purge_deleted`)."""
        bin_dir = self.root / DELETED
        private_dir(bin_dir)
        target = bin_dir / conv_id
        if target.exists():
            shutil.rmtree(target)
        os.replace(self.root / conv_id, target)

    def restore(self, conv_id: str) -> bool:
        """Undo a delete; False if it is gone."""
        source = self.root / DELETED / conv_id
        if not source.is_dir() or (self.root / conv_id).exists():
            return False
        os.replace(source, self.root / conv_id)
        return True

    def discard(self, conv_id: str) -> None:
        """Remove for good (an empty conversation left behind)."""
        shutil.rmtree(self.root / conv_id, ignore_errors=True)

    def purge_deleted(self) -> None:
        """Forget the deleted conversations (at start and when the window closes)."""
        shutil.rmtree(self.root / DELETED, ignore_errors=True)

    # ----- files ---------------------------------------------------------------------------
    @staticmethod
    def _about(path: Path) -> dict[str, Any]:
        """The folder's about.json: its entries of the right type (a damaged file gives {})."""
        try:
            kept, _wrong = typed_fields(About, json.loads((path / ABOUT).read_text(encoding="utf-8")))
            return kept
        except (OSError, ValueError, RecursionError):
            return {}

    @staticmethod
    def _write_about(path: Path, about: dict[str, Any]) -> None:
        tmp = path / f".{ABOUT}.tmp"
        write_private(tmp, json.dumps(about, ensure_ascii=False, indent=1))
        os.replace(tmp, path / ABOUT)

    @staticmethod
    def _first_user_text(path: Path) -> str:
        return next((m.text for m in session_files.read_history(path) if m.role == "user"), "")
