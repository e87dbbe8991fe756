"""Reminders and alarms (app/actions): the moment read from people's words, kept in a private
file across a restart, said when they come or as missed at the next start, snoozed by voice.
Real files, real threads, the real sentence matcher."""

from __future__ import annotations

import json
import stat
import time
from datetime import datetime

import pytest

from app.actions.reminders import Reminders
from app.actions.skills import Actions
from app.actions.when import when_said

NOW = datetime(2026, 12, 7, 14, 30)  # a Monday afternoon


@pytest.mark.parametrize(
    ("said", "language", "moment"),
    [
        ("at five", "en", datetime(2026, 12, 7, 17, 0)),  # the next five to come
        ("at 5 pm", "en", datetime(2026, 12, 7, 17, 0)),
        ("at seven tomorrow", "en", datetime(2026, 12, 8, 7, 0)),
        ("tonight at eight", "en", datetime(2026, 12, 7, 20, 0)),
        ("at half past six", "en", datetime(2026, 12, 7, 18, 30)),
        ("at two", "en", datetime(2026, 12, 8, 2, 0)),
        ("in ninety seconds", "en", datetime(2026, 12, 7, 14, 31, 30)),
        ("in two hours", "en", datetime(2026, 12, 7, 16, 30)),
        ("on Friday at noon", "en", datetime(2026, 12, 11, 12, 0)),
        ("demain à sept heures", "fr", datetime(2026, 12, 8, 7, 0)),
        ("dans dix minutes", "fr", datetime(2026, 12, 7, 14, 40)),
        ("morgen um sieben", "de", datetime(2026, 12, 8, 7, 0)),
        ("in zehn Minuten", "de", datetime(2026, 12, 7, 14, 40)),
    ],
)
def test_the_moment_is_read_from_peoples_words(said, language, moment) -> None:
    assert when_said(said, language, NOW) == moment


@pytest.mark.parametrize("said", ["yesterday", "to call Anna", "", "at 25:00"])
def test_no_moment_or_a_past_one_is_none(said) -> None:
    assert when_said(said, "en", NOW) is None


def heard(announced: list, n: int, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while len(announced) < n and time.monotonic() < deadline:
        time.sleep(0.05)


def test_a_reminder_is_set_split_from_its_words_kept_private_and_said(tmp_path) -> None:
    announced: list[tuple[str, str, str]] = []
    a = Actions(tmp_path, lambda text, lang, source: announced.append((source, text, lang)))
    a.start()
    try:
        answer = a.do(a.pick("Remind me in 2 seconds to stretch my legs.", "en"))
        assert answer.intent == "TalkRemind" and answer.changed
        assert answer.reply.startswith("I'll remind you at ") and answer.reply.endswith(
            " to stretch my legs."
        )
        path = tmp_path / "reminders.json"
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
        assert json.loads(path.read_text())[0]["text"] == "to stretch my legs"
        heard(announced, 1)
        assert announced == [("reminder", "Reminder: stretch my legs.", "en")]
        assert json.loads(path.read_text()) == []  # said: gone from the file
    finally:
        a.close()


def test_without_a_moment_it_asks_and_sets_nothing(tmp_path) -> None:
    a = Actions(tmp_path, lambda *_: None)
    try:
        answer = a.do(a.pick("Remind me to water the plants.", "en"))
        assert answer.failed and answer.reply.startswith("When should I remind you?")
        assert a.reminding.reminders.upcoming() == []
    finally:
        a.close()


def test_a_reminder_survives_a_restart_and_one_missed_is_said_at_the_next_start(tmp_path) -> None:
    first = Actions(tmp_path, lambda *_: None)
    first.do(first.pick("Remind me tomorrow at 9 about the meeting.", "en"))
    first.do(first.pick("Remind me in 1 second to check the oven.", "en"))
    first.close()  # the app ends before the second one comes
    time.sleep(1.5)
    announced: list[tuple[str, str, str]] = []
    again = Actions(tmp_path, lambda text, lang, source: announced.append((source, text, lang)))
    try:
        upcoming = again.reminding.reminders.upcoming()
        assert [r.text for r in upcoming] == ["to check the oven", "about the meeting"]
        again.start()
        heard(announced, 1)
        source, text, _ = announced[0]
        assert source == "reminder" and text.startswith("While I was not running, you had a reminder at ")
        assert text.endswith(": check the oven.")
        listed = again.do(again.pick("What are my reminders?", "en")).reply
        assert "At 9:00 AM tomorrow: the meeting." in listed, listed
    finally:
        again.close()


def test_an_alarm_rings_and_is_snoozed_by_voice(tmp_path) -> None:
    announced: list[tuple[str, str, str]] = []
    a = Actions(tmp_path, lambda text, lang, source: announced.append((source, text, lang)))
    a.start()
    try:
        assert a.do(a.pick("Snooze.", "en")).reply == "There is no alarm to snooze."
        assert a.do(a.pick("Set an alarm in 1 second.", "en")).intent == "TalkAlarm"
        heard(announced, 1)
        assert announced[0][0] == "alarm" and "This is your alarm" in announced[0][1]
        assert a.do(a.pick("Snooze for five minutes.", "en")).reply == "Snoozed for 5 minutes."
        (alarm,) = a.reminding.reminders.upcoming()
        assert alarm.kind == "alarm" and 280 < alarm.at - time.time() <= 300
        assert a.do(a.pick("Cancel my alarms.", "en")).reply == "Cancelled 1 reminder."
    finally:
        a.close()


def test_a_damaged_reminders_file_is_said_and_replaced(tmp_path, caplog) -> None:
    path = tmp_path / "reminders.json"
    path.write_text("{not json")
    r = Reminders(path, lambda *_: None)
    assert r.upcoming() == [] and "unreadable" in caplog.text
    r.add(time.time() + 60, "x")
    assert len(json.loads(path.read_text())) == 1
    r.close()


def test_other_languages_are_split_too(tmp_path) -> None:
    a = Actions(tmp_path, lambda *_: None)
    try:
        fr = a.do(a.pick("Rappelle-moi demain à sept heures d'appeler Anna.", "fr")).reply
        assert fr == "Je vous le rappellerai demain à 7 h 00 : appeler Anna."
        de = a.do(a.pick("Erinnere mich morgen um sieben an den Termin.", "de")).reply
        assert de == "Ich erinnere dich morgen um 7:00 Uhr: den Termin."
    finally:
        a.close()
