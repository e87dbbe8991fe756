"""The window command without a usable display: one clear sentence and exit status 2, never
Qt's plugin abort; with a display, the platform chosen (and named with -v)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys

from app.gui.display import Platform, choose_platform
from tests.support.process import LineReader


def run_window(env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "app"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )


def no_display_env(tmp_path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM")}
    return {**env, "TALK_LLAMA_CONFIG": str(tmp_path)}


def test_no_display_says_so_in_one_line(tmp_path) -> None:
    res = run_window(no_display_env(tmp_path))
    assert res.returncode == 2
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1, res.stderr
    assert "No display" in lines[0] and "talk-llama chat" in lines[0]
    assert "qt.qpa" not in res.stderr and "Reinstalling" not in res.stderr


def test_unreachable_x_display_is_named(tmp_path) -> None:
    res = run_window({**no_display_env(tmp_path), "DISPLAY": ":97"})
    assert res.returncode == 2 and "Cannot connect to the X display ':97'" in res.stderr


def test_a_real_x_server_is_chosen(x11) -> None:
    assert choose_platform({"DISPLAY": x11["DISPLAY"]}) == Platform("xcb")


def test_wayland_first_with_x11_as_fallback(x11, tmp_path) -> None:
    """A Wayland socket (a listening unix socket where a compositor would put it) is preferred;
    Xwayland's DISPLAY becomes the fallback. No compositor runs here, so Qt's wayland plugin
    itself is not exercised."""
    with socket.socket(socket.AF_UNIX) as sock:
        sock.bind(str(tmp_path / "wayland-0"))
        sock.listen()
        env = {"WAYLAND_DISPLAY": "wayland-0", "XDG_RUNTIME_DIR": str(tmp_path)}
        assert choose_platform(env) == Platform("wayland")
        assert choose_platform({**env, "DISPLAY": x11["DISPLAY"]}) == Platform("wayland;xcb")
    assert choose_platform({"QT_QPA_PLATFORM": "offscreen"}) == Platform(None)


def test_verbose_window_names_its_platform(x11) -> None:
    env = {k: v for k, v in x11.items() if k != "QT_QPA_PLATFORM"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "app", "-v"],
        env=env,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        text=True,
    )
    try:
        line = LineReader(proc.stderr).wait_for("Qt platform")
        assert line.rstrip().endswith("Qt platform: xcb")
    finally:
        proc.terminate()
        proc.wait(30)
