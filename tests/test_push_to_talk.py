"""Push-to-talk is one turn per hold (issue #37): the debounced key (real class, real timers) and
the real window under Xvfb, keys sent by xdotool through XTest, questions through the virtual mic."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import threading

import pytest

from app.gui.held_key import HeldKey
from tests.conftest import ARTIFACTS, espeak, words


class Calls:
    """Records the hold's callbacks; `released` is set by the timer thread."""

    def __init__(self) -> None:
        self.log: list[str] = []
        self.released = threading.Event()

    def press(self) -> None:
        self.log.append("press")

    def release(self) -> None:
        self.log.append("release")
        self.released.set()


def test_a_release_and_press_within_the_settle_time_is_the_same_hold() -> None:
    calls = Calls()
    key = HeldKey(calls.press, calls.release, settle_s=30.0)  # far longer than the calls take
    key.down()
    for _ in range(50):  # auto-repeat: flagged repeats are presses, unflagged pairs are up/down
        key.down()
        key.up()
        key.down()
    assert calls.log == ["press"] and key.held
    key.cancel()
    assert not key.held and calls.log == ["press"]


def test_the_hold_ends_once_the_key_stays_up() -> None:
    calls = Calls()
    key = HeldKey(calls.press, calls.release, settle_s=0.05)
    key.down()
    key.up()
    key.up()  # a second source's release of the same key (window and global hotkey)
    assert calls.released.wait(30)
    assert calls.log == ["press", "release"] and not key.held
    calls.released.clear()
    key.down()
    key.up()
    assert calls.released.wait(30)
    assert calls.log == ["press", "release", "press", "release"]


def test_an_up_without_a_hold_does_nothing() -> None:
    calls = Calls()
    key = HeldKey(calls.press, calls.release, settle_s=0.01)
    key.up()
    assert not calls.released.wait(0.3) and calls.log == []


WINDOW = """
import json, subprocess, sys, time
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication
from app.loop.settings import AppSettings
from app.gui.main_window import MainWindow

clips, shot = json.loads(sys.argv[1]), sys.argv[2]
app = QApplication(sys.argv[:1])
w = MainWindow(AppSettings(first_run_done=True)); w.show(); w.start_assistant()
w.raise_(); w.activateWindow()
steps = []

def xdo(*args):
    subprocess.run(["xdotool", *args], check=True)

def replies():
    return sum(1 for m in w.chat.messages[1::2] if m.latency)

def wait(cond, then):
    def poll():
        if cond():
            then()
        else:
            QTimer.singleShot(50, poll)
    poll()

def ask(i):
    if i == len(clips):
        w.grab().save(shot)
        print(json.dumps([m.text for m in w.chat.messages[0::2]]), flush=True)
        w.close(); app.quit(); return
    g = w.frameGeometry()
    xdo("mousemove", str(g.center().x()), str(g.center().y()))
    xdo("keydown", "space")  # the X server auto-repeats it while held
    wait(lambda: w.pill.state == "listening", lambda: speak(i))

def speak(i):
    play = subprocess.Popen(["paplay", "--device=micfeed", clips[i]])
    def half():  # what a remote desktop sends for a repeat: a real release and press
        xdo("keyup", "--delay", "1", "space", "keydown", "space")
    QTimer.singleShot(700, half)
    wait(lambda: play.poll() is not None, lambda: QTimer.singleShot(500, lambda: release(i)))

def release(i):
    xdo("keyup", "space")
    wait(lambda: replies() > i and w.pill.state == "idle", lambda: ask(i + 1))

wait(lambda: w.loading.isHidden(), lambda: QTimer.singleShot(500, lambda: ask(0)))
app.exec()
"""

QUESTIONS = ("What is the capital of France?", "How many legs does a spider have?")


@pytest.mark.audio
def test_holding_space_through_spoken_questions_makes_one_turn_each(x11, virtual_audio, speech_dir) -> None:
    if shutil.which("xdotool") is None:
        pytest.fail("xdotool is not installed; run `make test`, which installs it")
    clips = [str(espeak(q, speech_dir / f"ptt-{i}.wav", wpm=140)) for i, q in enumerate(QUESTIONS)]
    shot = ARTIFACTS / "screenshots" / "ptt-held-space.png"
    shot.parent.mkdir(parents=True, exist_ok=True)
    cmd = [sys.executable, "-c", WINDOW, json.dumps(clips), str(shot)]
    r = subprocess.run(cmd, env=x11, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    turns = json.loads(r.stdout.strip().splitlines()[-1])
    assert len(turns) == len(QUESTIONS), turns
    for question, turn in zip(QUESTIONS, turns, strict=True):
        assert whole(question, turn), turns


def whole(question: str, heard: str) -> bool:
    """The turn holds the whole question: its first and last words, and all but two of the rest.
    Which words whisper tiny.en writes for espeak-ng is not what the key guarantees: with one core
    busy, "a spider" comes out as "I either" about once in ten runs."""
    said, got = words(question), set(words(heard))
    return said[0] in got and said[-1] in got and sum(w not in got for w in said) <= 2
