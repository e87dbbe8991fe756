"""Loading progress and the assistant's problems, each shown where it belongs: a banner per
source (language model, speech recognition, microphone, speaker, server), the first-run panel
when a default model is missing, a passing status message for the rest. A problem's banner goes
when that part loads or comes back. GUI thread only; it only shows.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QProgressBar

from app.catalog.catalog import FETCH_HINT
from app.catalog.languages import AUTO, language_name, setting_language, whisper_choice
from app.gui.banners import BannerArea
from app.gui.model_setup import ModelSetup, missing_default
from app.gui.widgets import ContextGauge
from app.loop.events import DeviceChanged, Error, Event, Loaded, TurnReported
from app.loop.settings import AppSettings
from app.system.logs import since_start_ms

log = logging.getLogger(__name__)
PARTS = ("llm", "whisper")  # what loads before the assistant is ready
KEYS = {"llm": "llm_model", "whisper": "whisper_model"}  # the setting that names each part's model


class Problems:
    def __init__(
        self,
        loading: QProgressBar,
        banners: BannerArea,
        setup: ModelSetup,
        gauge: ContextGauge,
        status: Callable[[str], None],
        settings: Callable[[], AppSettings],
        open_settings: Callable[[], None],
        restart: Callable[[], None] = lambda: None,
    ) -> None:
        """`status(text)`: a passing message; `settings()`: the window's current settings;
        `restart()`: start the assistant again on them (after going back to a model that worked)."""
        self.loading = loading
        self.banners = banners
        self.setup = setup
        self.gauge = gauge
        self._status = status
        self._settings = settings
        self._open_settings = open_settings
        self._restart = restart
        self._working: dict[str, str] = {}  # part -> the model file that loaded before a change
        self._loaded: set[str] = set()
        self._failed: set[str] = set()
        self.llm_failed = False  # the language model could not load: typed text stays put

    def restart(self) -> None:
        """The assistant (re)starts: its problems are checked again, so their messages go."""
        self._loaded.clear()
        self._failed.clear()
        self.llm_failed = False
        self.banners.clear("llm", "whisper", "microphone", "tts", "hotkey", "model-kept", "whisper-language")
        self.gauge.update_stats({})
        self.loading.setValue(0)
        self.loading.show()
        s = self._settings()
        if notice := whisper_choice(setting_language(s.language), s.whisper_model or None)[1]:
            self.banners.show_message("whisper-language", notice, "info", "Settings…", self._open_settings)

    def working(self, part: str) -> bool:
        """`part` ("llm", "whisper") has loaded in the assistant as it runs now."""
        return part in self._loaded and part not in self._failed

    def handle(self, ev: Event) -> None:
        match ev:
            case Loaded():
                self._on_loaded(ev)
            case TurnReported(gen_tokens=n) if n:
                self.banners.clear("brain")
            case DeviceChanged():
                self._on_device(ev)
            case Error():
                self._on_error(ev)

    def _part_done(self, part: str, failed: bool = False) -> None:
        """`part` loaded or failed; the progress bar goes when every part has (after a moment
        at 100 % when the last one loaded)."""
        self._loaded.add(part)
        if failed:
            self._failed.add(part)
        self.loading.setValue(len(self._loaded))
        if not self._loaded.issuperset(PARTS):
            return
        if failed:
            self.loading.hide()
        else:
            log.info("models loaded %.0f ms after the process started", since_start_ms())
            QTimer.singleShot(300, self.loading.hide)

    def _on_loaded(self, ev: Loaded) -> None:
        self.banners.clear(ev.part)  # it loaded: an earlier problem with it is gone
        if ev.stats:
            self.gauge.update_stats(ev.stats)
        self._part_done(ev.part)

    def _on_device(self, ev: DeviceChanged) -> None:
        """A microphone or speaker went away (a banner until it is back) or came back."""
        source = "microphone" if ev.direction == "input" else "speaker"
        if ev.change == "lost":
            self.banners.show_message(source, ev.message, "warning", "Settings…", self._open_settings)
        else:
            self.banners.clear(source)
            self._status(ev.message)

    def _on_error(self, ev: Error) -> None:
        source, msg = ev.source, ev.message
        if source in PARTS:
            self._part_done(source, failed=True)
            if not self._keep_working(source, msg):
                self._model_missing(source, msg)
        elif source in ("microphone", "brain"):  # a reply failed (a server): the next good turn clears it
            kind = "warning" if source == "microphone" else "error"
            self.banners.show_message(source, msg, kind, "Settings…", self._open_settings)
        elif source == "tts":
            self.banners.show_message(source, msg, "warning")
        else:
            self._status(msg)

    def remember_working(self, old: AppSettings, new: AppSettings) -> None:
        """Settings change from `old` to `new`: the models that work now are remembered, so a
        new choice that fails to load can give way to them (`_keep_working`)."""
        self._working = {
            part: was
            for part, key in KEYS.items()
            if (was := getattr(old, key)) != getattr(new, key) and self.working(part)
        }

    def note_language(self, old: AppSettings, new: AppSettings) -> None:
        """A new spoken language other than English with the built-in language model: say once
        that the small model answers other languages poorly, and what does better."""
        if new.language == old.language or new.language == "en" or new.llm_url or new.llm_model:
            return
        self.banners.show_message(
            "language",
            f"Speech in {language_name(new.language) if new.language != AUTO else 'any language'} "
            "is heard by the multilingual speech model, but the built-in language model answers "
            "other languages poorly: for real conversations choose a bigger model (Settings → Models, "
            "e.g. talk-llama models fetch hub-qwen2.5-1.5b) or a server.",
            "info",
        )

    def _keep_working(self, part: str, message: str) -> bool:
        """A model just chosen in Settings failed to load: go back to the one that worked and
        say so (the choice is not kept: the next start must not fail the same way)."""
        old = self._working.pop(part, None)
        if old is None:
            return False
        self._working.clear()
        s = self._settings()
        setattr(s, KEYS[part], old)
        s.save()
        self._restart()
        kept = Path(old).name if old else "the built-in model"
        self.banners.show_message(
            "model-kept",
            f"{message.rstrip('.')}. Still using {kept}.",
            "warning",
            "Settings…",
            self._open_settings,
        )
        return True

    def _model_missing(self, source: str, msg: str) -> None:
        s = self._settings()
        if source == "llm":
            self.llm_failed = True
            self.gauge.update_stats({})
        remote = bool(s.llm_url) and source == "llm"
        configured = s.llm_model if source == "llm" else s.whisper_model
        if not remote and (entry := missing_default(source, configured)):
            self.setup.need(source, entry)  # first run: offer to fetch it, no error banner
            return
        if remote:
            hint = " Fix: start the server, or change it in Settings → Models."
        elif "fetch" not in msg:
            hint = f" Fix: run `{FETCH_HINT}`, or choose a model file in Settings."
        else:
            hint = ""
        self.banners.show_message(source, msg + hint, "error", "Settings…", self._open_settings)
