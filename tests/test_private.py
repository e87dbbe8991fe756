"""Private by default (issue #13, point 3): what someone said aloud is readable by them only."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from app.brain import session
from app.brain.conversation import Conversation, LlmConfig
from app.brain.persona import PINNED_TIME, Persona
from app.loop.settings import AppSettings


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_sessions_settings_and_exports_are_private(llm_model, config_dir, tmp_path, qtbot) -> None:
    old = os.umask(0o022)  # the usual umask would make new files 0644
    try:
        conv = Conversation(LlmConfig(llm_model, n_ctx=512), Persona(now=PINNED_TIME))
        conv.say("My name is Sam.")
        folder = tmp_path / "session"
        folder.mkdir(mode=0o755)  # an existing, open folder is closed too
        session.save(conv, folder)
        session.save(conv, folder)  # and a second save keeps the modes
        conv.close()
        assert mode(folder) == 0o700
        assert {p.name: mode(p) for p in folder.iterdir()} == {"state.bin": 0o600, "session.json": 0o600}

        AppSettings(bot="Juno").save()
        assert mode(AppSettings.path()) == 0o600 and mode(AppSettings.path().parent) == 0o700

        from app.gui.main_window import MainWindow

        w = MainWindow(AppSettings())
        qtbot.addWidget(w)
        w.tools.export_to(tmp_path / "talk.md", "md")
        assert mode(tmp_path / "talk.md") == 0o600
        w.close()
    finally:
        os.umask(old)


def test_a_full_disk_keeps_the_previous_session_and_the_chat_goes_on(tmp_path) -> None:
    """A real write failure (the process's file size limit, as on a full disk: EFBIG) while
    saving: a warning, the previous session intact, every line still answered."""
    import json
    import resource
    import signal
    import subprocess
    import sys

    folder = tmp_path / "session"
    env = {**os.environ, "TALK_LLAMA_CONFIG": str(tmp_path / "config")}
    cmd = [
        sys.executable,
        "-m",
        "app",
        "chat",
        "--text",
        "--session",
        str(folder),
        "-mt",
        "16",
        "--ctx-size",
        "512",
    ]
    first = subprocess.run(
        cmd, input="My name is Sam.\n", capture_output=True, text=True, env=env, timeout=120
    )
    assert first.returncode == 0, first.stderr
    saved = json.loads((folder / "session.json").read_text())
    assert saved["turn_count"] == 1

    def full_disk() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # fail the write, do not kill the process
        resource.setrlimit(resource.RLIMIT_FSIZE, (300_000, 300_000))

    second = subprocess.run(
        cmd, input="I like tea.\nWhat do I like?\n", capture_output=True, text=True, env=env, timeout=120,
        preexec_fn=full_disk,
    )  # fmt: skip
    assert second.returncode == 0, second.stderr
    assert "could not save the session" in second.stderr
    assert second.stdout.count("Aria:") == 2  # both lines answered
    assert json.loads((folder / "session.json").read_text()) == saved  # the previous session, intact
    assert sorted(p.name for p in folder.iterdir()) == ["session.json", "state.bin"]  # no leftovers
