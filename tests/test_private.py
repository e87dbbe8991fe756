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
        w.export_to(tmp_path / "talk.md", "md")
        assert mode(tmp_path / "talk.md") == 0o600
        w.close()
    finally:
        os.umask(old)
