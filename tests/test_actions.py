"""Actions (app/actions): Home Assistant's real sentence matcher and sentences, the app's own
sentences, real timers on their own thread, list files on disk. No model here: the assistant's
turns with actions are in tests/test_action_turns.py."""

from __future__ import annotations

import stat
import threading
import time
from datetime import datetime
from zoneinfo import ZoneInfo

import pytest

from app.actions import calc, clock
from app.actions.skills import Actions, describe
from app.actions.timers import Timers


@pytest.fixture
def ended() -> list[tuple[str, str]]:
    return []


@pytest.fixture
def actions(tmp_path, ended) -> Actions:
    a = Actions(tmp_path, lambda text, lang, source: ended.append((text, lang)))
    yield a
    a.close()


def answer(actions: Actions, text: str, language: str = "en") -> tuple[str, str]:
    request = actions.pick(text, language)
    assert request is not None, f"{text!r} was not read as an action"
    outcome = actions.do(request)
    return request.intent, outcome.reply


@pytest.mark.parametrize(
    ("language", "text", "intent", "reply"),
    [
        ("en", "Set a timer for five minutes.", "HassStartTimer", "Timer set for five minutes."),
        ("en", "What time is it?", "HassGetCurrentTime", ""),
        ("en", "What's 15% of 240?", "TalkCalculate", "15% of 240 is 36."),
        ("en", "What is twelve times seven?", "TalkCalculate", "Twelve times seven is 84."),
        ("en", "How many grams in a pound?", "TalkConvert", "A pound is 453.59 grams."),
        ("en", "Hey, can you tell me what time it is?", "HassGetCurrentTime", ""),
        ("en", "What day is it today?", "HassGetCurrentDate", ""),
        (
            "en",
            "Could you set a timer for five minutes, please?",
            "HassStartTimer",
            "Timer set for five minutes.",
        ),
        ("fr", "Mets un minuteur de cinq minutes.", "HassStartTimer", "Minuteur lancé."),
        ("fr", "Quelle heure est-il ?", "HassGetCurrentTime", "Il est "),
        ("fr", "Combien font douze fois sept ?", "TalkCalculate", "Douze fois sept font 84."),
        ("de", "Stelle einen Timer für fünf Minuten.", "HassStartTimer", "Timer für fünf Minuten gestartet."),
        ("de", "Wie spät ist es?", "HassGetCurrentTime", "Es ist "),
        ("de", "Was ist zwölf mal sieben?", "TalkCalculate", "Zwölf mal sieben ist 84."),
    ],
)
def test_requests_are_read_and_answered_in_three_languages(actions, language, text, intent, reply) -> None:
    found, said = answer(actions, text, language)
    assert found == intent
    assert said.startswith(reply) and said.endswith((".", "!", "?")), said


def test_the_time_is_the_clock_here_and_in_a_named_city(actions) -> None:
    before = datetime.now().astimezone()
    _, here = answer(actions, "What time is it?")
    _, tokyo = answer(actions, "What time is it in Tokyo?")
    after = datetime.now().astimezone()
    twelve = lambda t: f"{t.hour % 12 or 12}:{t.minute:02d} {'AM' if t.hour < 12 else 'PM'}"  # noqa: E731
    assert here.removesuffix(".") in {twelve(before), twelve(after)}
    in_tokyo = {twelve(t.astimezone(ZoneInfo("Asia/Tokyo"))) for t in (before, after)}
    assert any(tokyo == f"It's {t} in Tokyo." for t in in_tokyo), tokyo
    assert clock.zone_of("new york") == "America/New_York" and clock.zone_of("Narnia") is None


@pytest.mark.parametrize(
    "text",
    [
        "What is the capital of France?",
        "Tell me a story about a dragon.",
        "What is love?",
        "What time is it in Narnia?",
        "How many legs does a spider have?",
        "Call me Robin from now on.",
        "Let's play a game.",
    ],
)
def test_words_no_skill_takes_are_left_to_the_model(actions, text) -> None:
    assert actions.pick(text, "en") is None


def test_spoken_sums_are_evaluated_safely() -> None:
    assert calc.spoken_sum("three point five plus two", "en") == ("3.5 + 2", 5.5)
    assert calc.spoken_sum("two to the power of ten", "en")[1] == 1024
    assert calc.spoken_sum("100 divided by 0", "en") is None  # no value: not an answer
    assert calc.spoken_sum("9 to the power of 99999", "en") is None  # never computed
    assert calc.spoken_sum("__import__('os').system('true')", "en") is None
    assert calc.spoken_sum("seven", "en") is None  # a number alone is not a sum
    assert calc.spoken_number(14.285714) == "14.29" and calc.spoken_number(3.5, "fr") == "3,5"
    assert calc.convert("100 fahrenheit", "celsius")[2] == pytest.approx(37.78, abs=0.01)
    assert calc.convert("a pound", "seconds") is None


def test_the_shopping_list_is_a_private_file_read_back_on_request(actions, tmp_path) -> None:
    assert answer(actions, "What's on my shopping list?")[1] == "Your shopping list is empty."
    assert answer(actions, "Add milk to my shopping list.")[1] == "Added milk."
    assert answer(actions, "Put eggs on the shopping list.")[1] == "Added eggs."
    path = tmp_path / "lists" / "shopping.txt"
    assert path.read_text() == "milk\neggs\n"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert answer(actions, "What's on my shopping list?")[1] == "Your shopping list has 2 items: milk, eggs."


def test_timers_are_named_paused_resumed_and_cancelled_by_voice(actions) -> None:
    answer(actions, "Set a 10 minute timer called pasta.")
    answer(actions, "Set a timer for three minutes.")
    assert [t.name for t in actions.timers.all()] == ["", "pasta"]  # the one ending first first
    _, status = answer(actions, "How much time is left on my timer?")
    assert status.startswith("2 running timers.") and "3 minute timer" in status
    _, refused = answer(actions, "Pause the timer.")  # which one? Home Assistant's own answer
    assert refused == "Sorry, I am unable to target multiple timers."
    assert answer(actions, "Pause the pasta timer.")[1] == "Timer paused."
    pasta = actions.timers.find("pasta")[0]
    left = pasta.left(actions.timers.clock())
    assert not pasta.running and 590 < left <= 600
    assert answer(actions, "Add two minutes to the pasta timer.")[0] == "HassIncreaseTimer"
    assert pasta.left(actions.timers.clock()) == pytest.approx(left + 120)
    assert answer(actions, "Resume the pasta timer.")[1] == "Timer resumed."
    assert pasta.running
    assert answer(actions, "Cancel the pasta timer.")[1] == "Timer cancelled."
    assert answer(actions, "Cancel the pasta timer.")[1] == "Sorry, I couldn't find that timer."
    outcome = actions.do(actions.pick("Cancel all timers.", "en"))
    assert outcome.reply == "Canceled 1 timer." and outcome.changed and not actions.timers.all()
    assert describe(outcome.record()) == "Cancelled the timers"


def test_a_timer_that_ends_is_announced_in_its_language(actions, ended) -> None:
    answer(actions, "Mets un minuteur de deux secondes.", "fr")
    answer(actions, "Set a 1 second timer called eggs.")
    deadline = time.monotonic() + 60
    while len(ended) < 2 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert sorted(ended) == [
        ("The eggs timer is done.", "en"),
        ("Votre minuteur de 2 secondes est terminé.", "fr"),
    ]
    assert not actions.timers.all()


def test_a_cancelled_or_paused_timer_never_ends() -> None:
    done = threading.Event()
    now = [0.0]
    timers = Timers(lambda t: done.set(), clock=lambda: now[0])
    try:
        a, b = timers.start(1), timers.start(1)
        timers.cancel(a)
        timers.pause(b)
        now[0] = 5.0
        with timers._wake:
            timers._wake.notify()
        assert not done.wait(0.5)
        timers.resume(b)
        now[0] = 7.0
        with timers._wake:
            timers._wake.notify()
        assert done.wait(30)
    finally:
        timers.close()


@pytest.mark.parametrize(
    ("language", "text", "says"),
    [
        ("fr", "Ouvre mon agenda.", "Je ne sais pas encore ouvrir"),
        ("en", "Turn on the kitchen light.", "I can't control lights or devices."),
        ("en", "What's the weather like tomorrow?", "I can't see the weather"),
        ("en", "Send a message to Bob saying I'm late.", "I can't send messages"),
        ("fr", "Quel temps fait-il demain ?", "Je ne connais pas la météo"),
        ("de", "Schalte das Licht aus.", "Lichter und Geräte kann ich nicht steuern."),
    ],
)
def test_what_no_tool_does_is_said_so_never_claimed(actions, language, text, says) -> None:
    outcome = actions.do(actions.pick(text, language))
    assert outcome.intent == "TalkCannot" and outcome.failed and not outcome.changed
    assert outcome.reply.startswith(says)
    assert not actions.timers.all()


def test_an_app_opens_only_after_a_yes(actions, tmp_path, monkeypatch) -> None:
    apps = tmp_path / "xdg" / "applications"
    apps.mkdir(parents=True)
    marker = tmp_path / "opened"
    (apps / "markerpad.desktop").write_text(
        f"[Desktop Entry]\nType=Application\nName=Marker Pad\nExec=touch {marker} %U\n"
    )
    (apps / "hidden.desktop").write_text(
        "[Desktop Entry]\nType=Application\nName=Hidden\nNoDisplay=true\nExec=true\n"
    )
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    monkeypatch.setenv("XDG_DATA_DIRS", str(tmp_path / "none"))
    assert actions.pick("Yes.", "en") is None  # a yes with no question goes to the model
    assert answer(actions, "Open Marker Pad.") == ("TalkOpen", "Open Marker Pad? Say yes to open it.")
    assert answer(actions, "No.") == ("TalkDeny", "Okay, I won't open Marker Pad.")
    assert actions.pick("Yes.", "en") is None and not marker.exists()
    answer(actions, "Open Marker Pad.")
    assert answer(actions, "Yes, please.") == ("TalkConfirm", "Opening Marker Pad.")
    deadline = time.monotonic() + 30
    while not marker.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert marker.exists()
    answer(actions, "Open Marker Pad.")
    answer(actions, "What time is it?")  # the question was left: a later yes opens nothing
    assert actions.pick("Yes.", "en") is None
    assert answer(actions, "Open Hidden.")[1] == "I can't find an app called Hidden."
    page = actions.do(actions.pick("Open github.com.", "en"))
    assert page.reply == "Open github.com? Say yes to open it." and not page.changed


def test_the_voice_is_made_louder_or_quieter_by_voice(tmp_path) -> None:
    level = [1.0]  # a stand-in for the Speaker's volume (the real one: tests/test_action_turns.py)

    def volume(new: float | None) -> float | None:
        if new is not None:
            level[0] = new
        return level[0]

    a = Actions(tmp_path, lambda *_: None, volume=volume)
    try:
        assert answer(a, "Speak louder.") == ("TalkVolume", "That is as loud as I go.")
        assert answer(a, "Turn the volume down.")[1] == "Volume 80 percent."
        assert answer(a, "Set the volume to fifty percent.")[1] == "Volume 50 percent." and level == [0.5]
        assert answer(a, "Set the volume to 500 percent.")[1] == "Say a level from 10 to 100 percent."
        assert answer(a, "Stop talking.") == ("TalkStop", "")  # nothing to say after a stop
    finally:
        a.close()
    without = Actions(tmp_path, lambda *_: None)  # no voice (typed chat): said so
    try:
        assert answer(without, "Speak louder.")[1] == "There is no voice to change here."
    finally:
        without.close()


def test_a_tool_that_fails_is_said_not_raised(tmp_path, caplog) -> None:
    def broken(level: float | None) -> float | None:  # a stand-in for a voice that fails
        raise OSError("the sound server went away")

    a = Actions(tmp_path, lambda *_: None, volume=broken)
    try:
        outcome = a.do(a.pick("Speak louder.", "en"))
    finally:
        a.close()
    assert outcome.failed and outcome.reply == "An unexpected error occurred."
    assert "the sound server went away" in caplog.text
    (tmp_path / "lists").write_text("a file where the lists folder goes")  # a list that cannot be kept
    b = Actions(tmp_path, lambda *_: None)
    try:
        added = b.do(b.pick("Add milk to my shopping list.", "en"))
    finally:
        b.close()
    assert added.failed and not added.changed and added.reply == "An unexpected error occurred."


def test_notes_and_a_to_do_list_are_kept_apart_and_read_back(actions, tmp_path) -> None:
    assert answer(actions, "Note that the car needs an oil change.") == (
        "TalkListAdd",
        "Noted: the car needs an oil change.",
    )
    assert answer(actions, "Add call the plumber to my to-do list.")[1] == (
        "Added call the plumber to your to-do list."
    )
    assert answer(actions, "What are my notes?")[1] == "Your notes: the car needs an oil change."
    assert answer(actions, "What's on my to-do list?")[1] == "Your to-do list: call the plumber."
    assert answer(actions, "What's on my shopping list?")[1] == "Your shopping list is empty."
    for name in ("notes", "to-do"):
        assert stat.S_IMODE((tmp_path / "lists" / f"{name}.txt").stat().st_mode) == 0o600
    assert actions.pick("Remember that my dog is called Rex.", "en") is None  # the memory's, not a note
