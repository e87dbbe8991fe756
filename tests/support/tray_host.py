"""A minimal system tray host for an X display (tests only; Debian has no standalone tray here).

It does what a panel's tray does to be found, per the freedesktop System Tray spec: owns the
`_NET_SYSTEM_TRAY_S<screen>` selection and announces itself with a MANAGER client message on the
root window. Qt then reports a tray (`QSystemTrayIcon.isSystemTrayAvailable()`) and docks its
icon; this host accepts the dock requests without drawing anything.
Run: python -m tests.support.tray_host DISPLAY  (until killed).
"""

from __future__ import annotations

import sys

from Xlib import X, display
from Xlib.protocol import event


def serve(name: str) -> None:
    d = display.Display(name)
    screen = d.screen()
    owner = screen.root.create_window(0, 0, 1, 1, 0, screen.root_depth)
    selection = d.intern_atom(f"_NET_SYSTEM_TRAY_S{d.get_default_screen()}")
    owner.set_selection_owner(selection, X.CurrentTime)
    manager = d.intern_atom("MANAGER")
    announce = event.ClientMessage(
        window=screen.root,
        client_type=manager,
        data=(32, [X.CurrentTime, selection, owner.id, 0, 0]),
    )
    screen.root.send_event(announce, event_mask=X.StructureNotifyMask)
    d.flush()
    print("tray ready", flush=True)
    while True:
        d.next_event()  # dock requests and the like: accepted, nothing drawn


if __name__ == "__main__":
    serve(sys.argv[1])
