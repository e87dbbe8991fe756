"""Which Qt platform the window can use, decided before Qt is asked (Qt aborts the process with
a plugin list when it cannot open a display, which tells a user nothing).

- `QT_QPA_PLATFORM` set: the user's (or a test's) choice, used as is.
- A Wayland session (`WAYLAND_DISPLAY` with its socket in `XDG_RUNTIME_DIR`): Qt's wayland
  plugin, xcb as the fallback when an X server (Xwayland) is reachable too.
- An X server at `DISPLAY` that accepts a connection: xcb, when its libraries are present.
- Neither: one sentence saying what is missing and what to run instead.
Pure checks (environment, sockets, `ctypes.util.find_library`); no Qt import.
"""

from __future__ import annotations

import ctypes.util
import os
import re
import socket
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

INSTEAD = (
    "For the terminal assistant run `talk-llama chat`; "
    "to use a display, set DISPLAY (X11) or WAYLAND_DISPLAY."
)
XCB_LIBS = {  # library Qt's xcb plugin loads -> the Debian package that has it
    "xcb-cursor": "libxcb-cursor0",
    "xkbcommon-x11": "libxkbcommon-x11-0",
    "xcb-icccm": "libxcb-icccm4",
}


@dataclass(frozen=True)
class Platform:
    qpa: str | None  # value for QT_QPA_PLATFORM (None: leave the environment alone)
    problem: str = ""  # non-empty: the window cannot open; say this and exit


def x_server_reachable(display: str, timeout: float = 1.0) -> bool:
    """Whether an X server accepts a connection at `display` (":0", "host:10.0", "unix:1")."""
    m = re.fullmatch(r"(?P<host>[^:]*):(?P<num>\d+)(\.\d+)?", display)
    if not m:
        return False
    host, num = m["host"], int(m["num"])
    if host in ("", "unix"):
        for path in (f"/tmp/.X11-unix/X{num}", f"\0/tmp/.X11-unix/X{num}"):  # file, then abstract
            with socket.socket(socket.AF_UNIX) as s:
                s.settimeout(timeout)
                try:
                    s.connect(path)
                    return True
                except OSError:
                    continue
        if host == "unix":
            return False
        host = "localhost"
    try:
        with socket.create_connection((host, 6000 + num), timeout=timeout):
            return True
    except OSError:
        return False


def wayland_reachable(env: Mapping[str, str]) -> bool:
    name = env.get("WAYLAND_DISPLAY", "")
    if not name:
        return False
    path = Path(name) if name.startswith("/") else Path(env.get("XDG_RUNTIME_DIR", "")) / name
    return path.is_socket()


def missing_xcb_packages() -> list[str]:
    return [pkg for lib, pkg in XCB_LIBS.items() if ctypes.util.find_library(lib) is None]


def choose_platform(env: Mapping[str, str] | None = None) -> Platform:
    env = os.environ if env is None else env
    if env.get("QT_QPA_PLATFORM"):
        return Platform(None)
    wayland = wayland_reachable(env)
    display = env.get("DISPLAY", "")
    x11 = bool(display) and x_server_reachable(display)
    missing = missing_xcb_packages() if x11 else []
    if wayland:
        return Platform("wayland;xcb" if x11 and not missing else "wayland")
    if x11 and not missing:
        return Platform("xcb")
    if x11:
        return Platform(
            None,
            f"The X display {display} is reachable but Qt's X11 plugin needs {', '.join(missing)} "
            f"(Debian/Ubuntu: sudo apt install {' '.join(missing)}). {INSTEAD}",
        )
    if display:
        problem = f"Cannot connect to the X display {display!r} (no X server answers there)."
    elif env.get("WAYLAND_DISPLAY"):
        problem = f"The Wayland display {env['WAYLAND_DISPLAY']!r} is not reachable."
    else:
        problem = "No display: neither DISPLAY nor WAYLAND_DISPLAY is set (an SSH session?)."
    return Platform(None, f"{problem} {INSTEAD}")
