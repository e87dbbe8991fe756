"""Opening an app or a page, once the user has said yes: apps are found by the name their
desktop entry shows (the XDG applications folders), pages by an address said aloud
("github.com"). An app starts from its entry's Exec line; a page opens with Python's
`webbrowser` (the desktop's browser, or $BROWSER).

Desktop entries are read here with configparser: the library that reads them (PyGObject's
Gio.DesktopAppInfo) is not a dependency of the app, and only Name, Exec, NoDisplay and Hidden
are needed. Exec's field codes (%u, %F, ...) are dropped: nothing is passed to the app.
Pure lookups; `start` returns at once (the app runs on its own, in its own session).
"""

from __future__ import annotations

import configparser
import logging
import os
import re
import shlex
import subprocess
import webbrowser
from dataclasses import dataclass
from pathlib import Path

log = logging.getLogger(__name__)
ADDRESS = re.compile(r"^(https?://)?([a-z0-9-]+\.)+[a-z]{2,}(/\S*)?$", re.IGNORECASE)


@dataclass(frozen=True)
class Target:
    """What to open: an app (its desktop entry's name and command) or a page (`url`)."""

    name: str
    command: tuple[str, ...] = ()
    url: str = ""


def application_dirs() -> list[Path]:
    home = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    dirs = os.environ.get("XDG_DATA_DIRS") or "/usr/local/share:/usr/share"
    return [Path(d) / "applications" for d in [home, *dirs.split(":")] if d]


def find(said: str) -> Target | None:
    """The app or page `said` names ("Firefox", "the text editor", "github.com"), or None."""
    words = said.strip(" .!?").lower().removeprefix("the ").strip()
    compact = words.replace(" dot ", ".").replace(" ", "")
    if ADDRESS.match(compact):
        url = compact if compact.startswith(("http://", "https://")) else f"https://{compact}"
        return Target(compact, url=url)
    seen: set[str] = set()
    for folder in application_dirs():
        for entry in sorted(folder.glob("*.desktop")) if folder.is_dir() else []:
            if entry.name in seen:  # the first folder's entry wins (the user's over the system's)
                continue
            seen.add(entry.name)
            app = _read(entry)
            if app is not None and words in (app.name.lower(), entry.stem.lower()):
                return app
    return None


def start(target: Target) -> bool:
    """Open it (returns at once); False when it could not be started."""
    try:
        if target.url:
            return webbrowser.open(target.url)
        subprocess.Popen(
            list(target.command),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        return True
    except (OSError, webbrowser.Error) as exc:
        log.warning("could not open %s: %s", target.name, exc)
        return False


def _read(path: Path) -> Target | None:
    parser = configparser.ConfigParser(interpolation=None, strict=False)
    try:
        parser.read(path, encoding="utf-8")
        entry = parser["Desktop Entry"]
    except (configparser.Error, KeyError, UnicodeDecodeError):
        return None
    if (
        entry.get("Type") != "Application"
        or entry.get("NoDisplay") == "true"
        or entry.get("Hidden") == "true"
    ):
        return None
    try:
        argv = [
            a.replace("%%", "%")
            for a in shlex.split(entry.get("Exec", ""))
            if not re.fullmatch(r"%[a-zA-Z]", a)
        ]
    except ValueError:
        return None
    return Target(entry.get("Name", path.stem), tuple(argv)) if argv else None
