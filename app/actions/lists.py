"""Lists the user keeps by voice ("add milk to my shopping list"): one plain text file per list,
one item per line, in the app's data folder, readable by its owner only (0600) — a file the user
can open, edit or print.

Threads: called on the llm thread; each call reads or appends to the file (no state kept).
"""

from __future__ import annotations

import os
from pathlib import Path

from app.system.paths import private_dir


class Lists:
    def __init__(self, directory: Path) -> None:
        self.directory = directory

    def path(self, name: str = "shopping") -> Path:
        safe = "".join(c for c in name.lower() if c.isalnum() or c in " -_").strip() or "shopping"
        return self.directory / f"{safe.replace(' ', '-')}.txt"

    def add(self, item: str, name: str = "shopping") -> Path:
        """Append `item` (one line) to the list; its file."""
        private_dir(self.directory)
        path = self.path(name)
        line = " ".join(item.split())
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        with os.fdopen(fd, "a", encoding="utf-8") as out:
            out.write(line + "\n")
        return path

    def items(self, name: str = "shopping") -> list[str]:
        """The list's items in the order they were added ([] for a list never written)."""
        path = self.path(name)
        if not path.is_file():
            return []
        return [line.strip() for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
