"""The conversation window: the conversations sidebar beside the open conversation, the status
row, the message box and the talk controls. Shows the loop's events (drawing the conversation is
ChatFeed's job, loading and problems are Problems', the sidebar's choices are Conversations');
sends the user's intents to the AssistantBridge. GUI thread only."""

from __future__ import annotations

import logging

from PySide6.QtCore import QByteArray, QEvent, Qt
from PySide6.QtGui import QCloseEvent, QHideEvent, QKeySequence, QResizeEvent, QShortcut, QShowEvent
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLineEdit,
    QMainWindow,
    QProgressBar,
    QPushButton,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from app.gui.alerts import Alerts
from app.gui.banners import BannerArea
from app.gui.bridge import AssistantBridge
from app.gui.chat_feed import ChatFeed
from app.gui.chat_view import HANDS_FREE_HINT, PTT_HINT, ChatView
from app.gui.conversation_tools import ConversationTools
from app.gui.conversations import Conversations
from app.gui.export_path import APP_SUFFIX
from app.gui.hotkey import GlobalHotkey
from app.gui.keys import WindowKeys
from app.gui.menus import MenuActions, build_menus
from app.gui.model_setup import ModelSetup
from app.gui.problems import Problems
from app.gui.sidebar import Sidebar
from app.gui.theme import theme
from app.gui.tray import TrayActions, TrayIcon
from app.gui.voice_orb import VoiceOrb
from app.gui.widgets import ContextGauge, StatusPill
from app.loop import events
from app.loop.events import Event
from app.loop.settings import AppSettings, assistant_config

log = logging.getLogger(__name__)
MUTED = "The microphone is muted: nothing is heard. Unmute it with Ctrl+M (Conversation → Mute microphone)."
SIDEBAR_MIN_WIDTH = 620  # a narrower window shows the conversation alone
FOCUS_STYLE = (
    "QPushButton { padding: 5px 12px; border: 1px solid palette(mid); border-radius: 5px;"
    " background: palette(button); }"
    " QPushButton:hover { background: palette(light); }"
    " QPushButton:focus { border: 2px solid #2a73c9; }"
    " QLineEdit:focus, QTextBrowser:focus { border: 2px solid #2a73c9; border-radius: 3px; }"
)
FIRST_RUN_NOTE = (
    "Welcome! The built-in language model is small (SmolLM2, 135 million parameters): it is quick "
    "and works offline, but it is not very smart. For better answers choose a bigger model in "
    "Settings → Models."
)


class MainWindow(QMainWindow):
    def __init__(self, settings: AppSettings, bridge: AssistantBridge | None = None) -> None:
        super().__init__()
        self.settings = settings
        self.bridge = bridge or AssistantBridge(self)
        self.setWindowTitle("talk-llama")
        self.resize(940, 640)
        # The style and palette first: a widget with a style sheet (the focus rings) that is
        # polished before the application's style changes keeps the old palette (Qt 6.11).
        self.theme = theme()
        self.theme.apply(settings.theme)
        self._build()
        self._quitting = False  # Quit, not a close that may hide to the tray
        self.bridge.arrived.connect(self.on_event)
        if settings.window_geometry:
            self.restoreGeometry(QByteArray.fromBase64(settings.window_geometry.encode()))
        self.keys = WindowKeys(self, self.ptt, self.bridge.press, self.bridge.release)
        self.hotkey = GlobalHotkey(self.keys.held, lambda: self.keys.window_active)
        self.apply_mode()
        self.keys.install()
        QShortcut(QKeySequence(Qt.Key.Key_Escape), self, self.bridge.interrupt)
        if not settings.first_run_done:
            self.banners.show_message("welcome", FIRST_RUN_NOTE, kind="info")
            settings.first_run_done = True
            settings.save()

    # ----- layout ----------------------------------------------------------------------------
    def _build(self) -> None:
        s = self.settings
        central = QWidget()
        central.setStyleSheet(FOCUS_STYLE)
        root = QVBoxLayout(central)
        self.banners = BannerArea()
        root.addWidget(self.banners)
        self.setup = ModelSetup(self.start_assistant, self.open_settings)
        root.addWidget(self.setup)
        self.loading = QProgressBar()
        self.loading.setRange(0, 2)
        self.loading.setFormat("Loading models… %v of %m")
        self.loading.setAccessibleName("Model loading progress")
        root.addWidget(self.loading)
        self.chat = ChatView(s.person, s.bot)
        self.feed = ChatFeed(self.chat)
        self.feed.person, self.feed.bot = s.person, s.bot
        self.chat.retry_requested.connect(self.bridge.retry)
        self.chat.version_requested.connect(self.bridge.choose_version)
        root.addWidget(self.chat, 1)

        status = QHBoxLayout()
        self.pill = StatusPill()
        self.gauge = ContextGauge()
        status.addWidget(self.pill)
        status.addStretch(1)
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
        self.ptt = VoiceOrb(s.ptt_key)
        self.ptt.pressed.connect(self.bridge.press)
        self.ptt.released.connect(self.bridge.release)
        self.stop_btn = QPushButton("■  Stop  (Esc)")
        self.stop_btn.setAccessibleName("Stop speaking")
        self.stop_btn.setToolTip("Stop the reply now (Escape)")
        self.stop_btn.setMinimumHeight(64)
        self.stop_btn.clicked.connect(self.bridge.interrupt)
        talk.addWidget(self.ptt, 1)
        talk.addWidget(self.stop_btn)
        root.addLayout(talk)
        self.sidebar = Sidebar()
        self.sidebar.setStyleSheet(FOCUS_STYLE)
        self.split = QSplitter(Qt.Orientation.Horizontal)
        self.split.addWidget(self.sidebar)
        self.split.addWidget(central)
        self.split.setStretchFactor(1, 1)
        self.split.setChildrenCollapsible(False)
        self.split.setSizes([230, 710])
        self.setCentralWidget(self.split)
        # The conversation first (it has the focus at start, so the talk key works at once),
        # then typing and talking, then the conversations list.
        order = [self.chat, self.input, self.send_btn, self.ptt, self.stop_btn, self.sidebar.new_btn]
        for a, b in zip(order, [*order[1:], self.sidebar.list], strict=True):
            self.setTabOrder(a, b)
        self.chat.setFocus()
        self.problems = Problems(
            self.loading,
            self.banners,
            self.setup,
            self.gauge,
            self.status,
            lambda: self.settings,
            self.open_settings,
            self.start_assistant,
        )
        self.conversations = Conversations(
            self.sidebar,
            lambda: self.settings,
            self.bridge,
            self.feed,
            self.banners,
            self.status,
            draft=self.input,
            show_title=lambda title: self.setWindowTitle(f"{title}{APP_SUFFIX}"),
        )
        self.tools = ConversationTools(
            self, self.bridge, self.banners, lambda: self.settings, lambda: self.conversations.title
        )
        self.menu_actions = build_menus(
            self,
            MenuActions(
                self.conversations.new,
                self.bridge.retry,
                lambda: self.tools.export("md"),
                lambda: self.tools.export("json"),
                self.tools.show_memory,
                self.open_settings,
                self.set_muted,
                self.set_theme,
                self.set_sidebar,
                self.quit,
            ),
            s,
        )
        br = self.bridge
        self.tray = TrayIcon(
            TrayActions(br.press, br.release, self.set_muted, self.toggle_visible, self.quit), self
        )
        self.alerts = Alerts(self.banners, self.tray, br.change_timer, br.cancel_reminder)
        if TrayIcon.available():
            self.tray.show()

    # ----- actions -----------------------------------------------------------------------------
    def start_assistant(self) -> None:
        """(Re)start the assistant on the open conversation; its problems are checked again."""
        self.problems.restart()
        self.bridge.start(assistant_config(self.settings, self.conversations.path))
        if self.settings.global_ptt:
            ok, message = self.hotkey.start(self.settings.ptt_key)
            if not ok:
                self.banners.show_message("hotkey", message, kind="info")

    def set_muted(self, muted: bool) -> None:
        """Mute or unmute the microphone (menu, tray); every control shows it."""
        self.bridge.set_muted(muted)
        self.menu_actions["mute"].setChecked(muted)
        self.tray.set_muted(muted)
        self.ptt.set_muted(muted)

    def set_theme(self, choice: str) -> None:
        self.settings.theme = choice
        self.settings.save()
        self.theme.apply(choice)
        self.menu_actions[f"theme_{self.theme.choice}"].setChecked(True)

    def status(self, text: str) -> None:
        """A passing message in the status bar."""
        self.statusBar().showMessage(text, 8000)

    def set_sidebar(self, shown: bool) -> None:
        """Show or hide the conversations (View menu); a narrow window hides them anyway."""
        self.settings.sidebar = shown
        self.settings.save()
        self.menu_actions["sidebar"].setChecked(shown)
        self._fit_sidebar()

    def _fit_sidebar(self) -> None:
        self.sidebar.setVisible(self.settings.sidebar and self.width() >= SIDEBAR_MIN_WIDTH)

    def resizeEvent(self, event: QResizeEvent) -> None:
        self._fit_sidebar()
        super().resizeEvent(event)

    def toggle_visible(self) -> None:
        """Show the window (raised) or hide it to the tray."""
        if self.isVisible() and not self.isMinimized():
            self.hide()
        else:
            self.showNormal()
            self.raise_()
            self.activateWindow()

    def quit(self) -> None:
        self._quitting = True
        self.close()

    def apply_mode(self) -> None:
        """Show how the assistant listens (push-to-talk or hands-free) and with which key."""
        s = self.settings
        self.keys.ptt_key = s.ptt_key
        self.ptt.set_mode(s.ptt_key, s.hands_free)
        self.chat.hint = HANDS_FREE_HINT if s.hands_free else PTT_HINT.format(key=s.ptt_key)
        self.chat.redraw()

    def send_typed(self) -> None:
        text = self.input.text().strip()
        if not text:
            return
        if self.problems.llm_failed:  # nobody to answer: the words stay in the box
            self.statusBar().showMessage("No language model is loaded: your message stays in the box.", 8000)
            return
        self.input.clear()
        self.bridge.send_text(text)

    def open_settings(self) -> None:
        from app.gui.settings_dialog import SettingsDialog

        dlg = SettingsDialog(self.settings, self)
        if dlg.exec():
            self.apply_settings(dlg.result_settings())

    def apply_settings(self, new: AppSettings) -> None:
        """Save and use `new`: the models reload only for a model-side setting; voice, persona
        and mode change in place (a new persona applies from the next turn)."""
        old, reload = self.settings, new.model_reload_needed(self.settings)
        voice = new.voice_change_needed(self.settings)
        persona = new.persona_change_needed(self.settings)
        self.problems.remember_working(self.settings, new)
        self.problems.note_language(self.settings, new)
        self.settings = new
        new.save()
        self.chat.person, self.chat.bot = new.person, new.bot
        self.feed.person, self.feed.bot = new.person, new.bot
        self.theme.apply(new.theme)
        self.menu_actions[f"theme_{self.theme.choice}"].setChecked(True)
        self.apply_mode()
        if reload:
            self.start_assistant()
            return
        config = assistant_config(new)
        if voice:  # the new voice's own problems, if any, come back as a banner
            self.banners.clear("tts")
            self.bridge.change_voice(config.speaker)
        if persona:
            self.bridge.change_persona(config.persona)
        if new.shared_memory != old.shared_memory:
            self.bridge.share_memory(config.shared_memory)
        self.bridge.set_hands_free(new.hands_free)

    # ----- events from the core ----------------------------------------------------------------
    def on_event(self, ev: Event) -> None:
        """The assistant's events, on the GUI thread: the conversation itself (ChatFeed), loading
        and what went wrong (Problems), and everything else around them here."""
        self.feed.handle(ev)
        self.problems.handle(ev)
        self.alerts.handle(ev)
        match ev:
            case events.StateChanged():
                self._on_state(ev.state)
            case events.MemoryFacts():
                self.tools.on_memory(ev)
            case events.Level():
                self.ptt.set_input_level(ev.rms)
            case events.OutputLevel():
                self.ptt.set_output_level(ev.rms)
            case events.TurnReported():
                self.gauge.update_stats(ev.stats)
                self.conversations.on_saved()
            case events.UserTurn():
                self.conversations.on_user_turn(ev.text)
            case events.Switched():
                self.gauge.update_stats(ev.stats)
                self.conversations.on_switched(ev)
            case events.Reset():
                self.gauge.update_stats(ev.stats)
            case events.Retracted():
                self.gauge.update_stats(ev.stats)
                self.conversations.on_retracted(ev.text)
            case events.Transcript():
                self._on_transcript(ev)
            case events.Notice():
                self.status(ev.message)
            case events.Unanswered():
                self._on_unanswered(ev)

    def _on_state(self, new: events.State) -> None:
        state = new.value
        self.pill.set_state(state)
        self.ptt.set_state(state)
        self.tray.set_state(state)
        self.chat.can_retry = state == "idle"
        if state not in ("speaking", "thinking"):
            self.feed.speech_ended()

    def _on_transcript(self, ev: events.Transcript) -> None:
        if self.menu_actions["mute"].isChecked():
            self.statusBar().showMessage(MUTED, 8000)
        elif ev.rejected and self.pill.state not in ("thinking", "speaking"):
            self.statusBar().showMessage(ev.why_dropped(), 6000)

    def _on_unanswered(self, ev: events.Unanswered) -> None:
        """Words that found no language model: back into the box, after what it already holds
        (typed and not sent), never lost."""
        typed = self.input.text().rstrip()
        self.input.setText(f"{typed} {ev.text}" if typed else ev.text)
        self.statusBar().showMessage(f"{ev.message} Your words are back in the message box.", 10000)

    # ----- visibility: no microphone levels for a window nobody sees ---------------------------
    def changeEvent(self, event: QEvent) -> None:
        if event.type() == QEvent.Type.WindowStateChange:
            self._want_levels()
        super().changeEvent(event)

    def showEvent(self, event: QShowEvent) -> None:
        self.tray.set_window_visible(True)
        self._want_levels()
        super().showEvent(event)

    def hideEvent(self, event: QHideEvent) -> None:
        self.tray.set_window_visible(False)
        self._want_levels()
        super().hideEvent(event)

    def _want_levels(self) -> None:
        self.bridge.set_level_updates(self.isVisible() and not self.isMinimized())

    # ----- closing -----------------------------------------------------------------------------
    def closeEvent(self, event: QCloseEvent) -> None:
        if self.settings.close_to_tray and self.tray.isVisible() and not self._quitting:
            self.hide()  # keeps running in the tray; the tray's Quit ends it
            event.ignore()
            return
        self.tray.hide()
        self.settings.window_geometry = bytes(self.saveGeometry().toBase64().data()).decode()
        self.settings.save()
        self.hotkey.stop()
        self.keys.remove()
        self.bridge.shutdown()
        self.conversations.closed()
        event.accept()
