"""The conversation window. Shows the loop's events; sends user intents to the AssistantBridge."""

from __future__ import annotations

import logging
from pathlib import Path

from PySide6.QtCore import QByteArray, QEvent, QObject, QTimer
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import (
    QAbstractSpinBox,
    QApplication,
    QComboBox,
    QFileDialog,
    QHBoxLayout,
    QLineEdit,
    QMainWindow,
    QPlainTextEdit,
    QProgressBar,
    QPushButton,
    QTextEdit,
    QVBoxLayout,
    QWidget,
)

from app.brain import history
from app.catalog.catalog import FETCH_HINT
from app.gui.bridge import AssistantBridge
from app.gui.hotkey import GlobalHotkey
from app.gui.widgets import Banner, ChatMessage, ChatView, ContextGauge, LevelMeter, PttButton, StatusPill
from app.loop.settings import AppSettings, assistant_config

log = logging.getLogger(__name__)
TEXT_INPUTS = (QLineEdit, QTextEdit, QPlainTextEdit, QAbstractSpinBox, QComboBox)


class MainWindow(QMainWindow):
    def __init__(self, settings: AppSettings, bridge: AssistantBridge | None = None) -> None:
        super().__init__()
        self.settings = settings
        self.bridge = bridge or AssistantBridge(self)
        self.setWindowTitle("talk-llama")
        self.resize(760, 640)
        self._reply: ChatMessage | None = None
        self._queued: dict[int, str] = {}
        self._key_down = False
        self._loaded: set[str] = set()
        self._build()
        self.bridge.event.connect(self.on_event)
        self.hotkey = GlobalHotkey(self.bridge.press, self.bridge.release)
        if settings.window_geometry:
            self.restoreGeometry(QByteArray.fromBase64(settings.window_geometry.encode()))
        QApplication.instance().installEventFilter(self)

    # ----- layout ----------------------------------------------------------------------------
    def _build(self) -> None:
        s = self.settings
        central = QWidget()
        root = QVBoxLayout(central)
        self.banners = QVBoxLayout()
        root.addLayout(self.banners)
        self.loading = QProgressBar()
        self.loading.setRange(0, 2)
        self.loading.setFormat("Loading models… %v of %m")
        self.loading.setAccessibleName("Model loading progress")
        root.addWidget(self.loading)
        self.chat = ChatView(s.person, s.bot)
        root.addWidget(self.chat, 1)

        status = QHBoxLayout()
        self.pill = StatusPill()
        self.meter = LevelMeter()
        self.gauge = ContextGauge()
        status.addWidget(self.pill)
        status.addWidget(self.meter, 1)
        status.addWidget(self.gauge)
        root.addLayout(status)

        typing = QHBoxLayout()
        self.input = QLineEdit()
        self.input.setPlaceholderText("Type a message and press Enter")
        self.input.setAccessibleName("Message")
        self.input.returnPressed.connect(self.send_typed)
        self.send_btn = QPushButton("Send")
        self.send_btn.clicked.connect(self.send_typed)
        typing.addWidget(self.input, 1)
        typing.addWidget(self.send_btn)
        root.addLayout(typing)

        talk = QHBoxLayout()
        self.ptt = PttButton(s.ptt_key)
        self.ptt.pressed.connect(self.bridge.press)
        self.ptt.released.connect(self.bridge.release)
        self.stop_btn = QPushButton("■  Stop")
        self.stop_btn.setAccessibleName("Stop speaking")
        self.stop_btn.setToolTip("Stop the reply now (barge-in)")
        self.stop_btn.setMinimumHeight(56)
        self.stop_btn.clicked.connect(self.bridge.interrupt)
        talk.addWidget(self.ptt, 1)
        talk.addWidget(self.stop_btn)
        root.addLayout(talk)
        self.setCentralWidget(central)
        self.setTabOrder(self.input, self.send_btn)
        self.setTabOrder(self.send_btn, self.ptt)
        self.setTabOrder(self.ptt, self.stop_btn)
        self._build_menu()

    def _build_menu(self) -> None:
        m = self.menuBar().addMenu("&Conversation")
        for text, slot, key in (
            ("&New conversation", self.new_conversation, QKeySequence.StandardKey.New),
            ("Export as &Markdown…", lambda: self.export("md"), None),
            ("Export as &JSON…", lambda: self.export("json"), None),
            ("&Settings…", self.open_settings, QKeySequence.StandardKey.Preferences),
            ("&Quit", self.close, QKeySequence.StandardKey.Quit),
        ):
            act = QAction(text, self)
            if key is not None:
                act.setShortcut(key)
            act.triggered.connect(slot)
            m.addAction(act)

    # ----- actions -----------------------------------------------------------------------------
    def start_assistant(self) -> None:
        self._loaded.clear()
        self.loading.setValue(0)
        self.loading.show()
        self.bridge.start(assistant_config(self.settings))
        if self.settings.global_ptt:
            ok, message = self.hotkey.start(self.settings.ptt_key)
            if not ok:
                self.show_banner(message, kind="info")

    def send_typed(self) -> None:
        text = self.input.text().strip()
        if text:
            self.input.clear()
            self.bridge.send_text(text)

    def new_conversation(self) -> None:
        self.bridge.new_conversation()
        self.chat.messages.clear()
        self._reply = None
        self.chat.render()

    def export(self, fmt: str) -> None:
        path, _ = QFileDialog.getSaveFileName(self, "Export conversation", f"conversation.{fmt}")
        if path:
            self.export_to(Path(path), fmt)

    def export_to(self, path: Path, fmt: str) -> None:
        msgs = self.bridge.history()
        s = self.settings
        text = (
            history.to_markdown(msgs, s.person, s.bot)
            if fmt == "md"
            else history.to_json(msgs, s.person, s.bot)
        )
        path.write_text(text, encoding="utf-8")

    def open_settings(self) -> None:
        from app.gui.settings_dialog import SettingsDialog

        dlg = SettingsDialog(self.settings, self)
        if dlg.exec():
            new = dlg.result_settings()
            reload = new.model_reload_needed(self.settings)
            self.settings = new
            new.save()
            self.ptt.set_key_name(new.ptt_key)
            self.chat.person, self.chat.bot = new.person, new.bot
            if reload:
                self.start_assistant()

    def show_banner(self, text: str, action_text: str = "", kind: str = "error", on_action=None) -> Banner:
        for i in range(self.banners.count()):
            w = self.banners.itemAt(i).widget()
            if isinstance(w, Banner) and w.label.text() == text:
                return w
        b = Banner(text, action_text, kind)
        if on_action:
            b.action.connect(on_action)
        self.banners.addWidget(b)
        return b

    # ----- events from the core ----------------------------------------------------------------
    def on_event(self, kind: str, data: dict) -> None:
        handler = getattr(self, f"_on_{kind}", None)
        if handler:
            handler(data)

    def _on_state(self, d: dict) -> None:
        self.pill.set_state(d["state"].value)

    def _on_level(self, d: dict) -> None:
        self.meter.set_rms(d["rms"])

    def _on_loading(self, d: dict) -> None:
        self._loaded.add(d["part"])
        self.loading.setValue(len(self._loaded))
        if "stats" in d:
            self.gauge.update_stats(d["stats"])
        if len(self._loaded) >= 2:
            QTimer.singleShot(300, self.loading.hide)

    def _on_history(self, d: dict) -> None:
        self.chat.messages = [ChatMessage(m.role, m.text, m.interrupted) for m in d["messages"]]
        self.chat.render()

    def _on_user(self, d: dict) -> None:
        self.chat.add("user", d["text"])
        self._reply = self.chat.add("assistant", "")
        self._queued.clear()

    def _on_token(self, d: dict) -> None:
        if self._reply is not None:
            self._reply.text = (self._reply.text + d["text"]).lstrip()
            self.chat.schedule()

    def _on_sentence(self, d: dict) -> None:
        if self._reply is None:
            return
        if d["event"] == "queued":
            self._queued[d["index"]] = d["text"]
        elif d["event"] == "sentence_started":
            self._reply.spoken = self._queued.get(d["index"], "")
            self.chat.schedule()
        elif d["event"] in ("sentence_finished", "queue_empty"):
            self._reply.spoken = ""
            self.chat.schedule()

    def _on_turn(self, d: dict) -> None:
        if self._reply is not None:
            self._reply.text = d["reply"] or self._reply.text
            self._reply.interrupted = d["interrupted"]
            self._reply.latency = d
            self.chat.schedule()
        self.gauge.update_stats(d)

    def _on_reset(self, d: dict) -> None:
        self.gauge.update_stats(d)

    def _on_transcript(self, d: dict) -> None:
        if d["rejected"]:
            self.statusBar().showMessage(f"Nothing heard ({d['reason']})", 4000)

    def _on_notice(self, d: dict) -> None:
        self.statusBar().showMessage(d["message"], 6000)

    def _on_error(self, d: dict) -> None:
        source, msg = d.get("source"), d["message"]
        if source in ("llm", "whisper"):
            self._loaded.add("llm" if source == "llm" else "whisper")
            self.loading.setValue(len(self._loaded))
            if len(self._loaded) >= 2:
                self.loading.hide()
            hint = (
                f" Fix: run `{FETCH_HINT}`, or choose a model file in Settings." if "fetch" not in msg else ""
            )
            self.show_banner(msg + hint, "Settings…", on_action=self.open_settings)
        elif source == "microphone":
            self.show_banner(msg, "Settings…", kind="warning", on_action=self.open_settings)
        elif source == "tts":
            self.show_banner(msg, kind="warning")
        else:
            self.statusBar().showMessage(msg, 8000)

    # ----- keyboard push-to-talk ---------------------------------------------------------------
    def _is_ptt_key(self, event) -> bool:
        return QKeySequence(event.key()).toString() == self.settings.ptt_key

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:
        if event.type() in (QEvent.Type.KeyPress, QEvent.Type.KeyRelease) and self._is_ptt_key(event):
            focus = QApplication.focusWidget() or (obj if isinstance(obj, QWidget) else None)
            ours = focus is None or focus.window() is self  # not in a dialog
            typing = isinstance(focus, TEXT_INPUTS) and not (
                isinstance(focus, QTextEdit) and focus.isReadOnly()
            )
            if ours and not typing:
                if event.isAutoRepeat():
                    return True
                if event.type() == QEvent.Type.KeyPress and not self._key_down:
                    self._key_down = True
                    self.ptt.setDown(True)
                    self.bridge.press()
                elif event.type() == QEvent.Type.KeyRelease and self._key_down:
                    self._key_down = False
                    self.ptt.setDown(False)
                    self.bridge.release()
                return True
        return super().eventFilter(obj, event)

    # ----- visibility: no microphone levels for a window nobody sees ---------------------------
    def changeEvent(self, event) -> None:
        if event.type() == QEvent.Type.WindowStateChange:
            self._want_levels()
        super().changeEvent(event)

    def showEvent(self, event) -> None:
        self._want_levels()
        super().showEvent(event)

    def hideEvent(self, event) -> None:
        self._want_levels()
        super().hideEvent(event)

    def _want_levels(self) -> None:
        self.bridge.set_level_updates(self.isVisible() and not self.isMinimized())

    # ----- closing -----------------------------------------------------------------------------
    def closeEvent(self, event) -> None:
        self.settings.window_geometry = bytes(self.saveGeometry().toBase64()).decode()
        self.settings.save()
        self.hotkey.stop()
        QApplication.instance().removeEventFilter(self)
        self.bridge.shutdown()
        event.accept()
