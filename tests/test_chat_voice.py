"""`talk-llama chat` voice mode as a user runs it: hands-free, --jsonl, Ctrl+C."""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import subprocess
import sys
import time

from tests.conftest import espeak
from tests.support.process import LineReader


def chat(flags: list[str], stdin: int) -> subprocess.Popen:
    """`talk-llama chat FLAGS` as a user runs it, its output read line by line."""
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    return subprocess.Popen(
        [sys.executable, "-m", "app", "chat", *flags],
        stdin=stdin,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )


def test_hands_free_terminal_turn_and_clean_ctrl_c(virtual_audio, speech_dir, tmp_path) -> None:
    flags = ["--jsonl", "--ctx-size", "1024", "--temp", "0", "-mt", "40", "-p", "Sam", "-bn", "Max"]
    proc = chat([*flags, "--session", str(tmp_path / "s")], stdin=subprocess.DEVNULL)
    err, out = LineReader(proc.stderr), LineReader(proc.stdout)
    try:
        err.wait_for("[ready", 90)
        wav = espeak("What is your favorite color?", speech_dir / "chat-color.wav", wpm=140)
        virtual_audio.play_into_mic(wav).wait(30)
        row = json.loads(out.next_line(180))
        for key in (
            "turn",
            "user",
            "reply",
            "prompt_tokens",
            "n_past",
            "n_ctx",
            "shifts",
            "t_speech_end",
            "t_transcript_ms",
            "t_first_token_ms",
            "t_first_sentence_ms",
            "t_first_audio_ms",
        ):
            assert key in row, key
        assert "color" in row["user"].lower() and row["reply"] and row["n_ctx"] == 1024
        time.sleep(1.0)
        proc.send_signal(signal.SIGINT)
        try:
            code = proc.wait(15)
        except subprocess.TimeoutExpired:
            proc.kill()
            raise AssertionError(f"Ctrl+C did not end the chat: {err.tail()}") from None
        assert code == 0
    finally:
        if proc.poll() is None:
            proc.kill()
    assert (tmp_path / "s" / "session.json").exists()


NATIVE_MARKERS = ("whisper_", "llama_", "ggml", "repack", "load_tensors", "failed to encode", "ALSA lib")


def test_terminal_shows_only_the_conversation(virtual_audio, speech_dir, tmp_path) -> None:
    """Hands-free in a real pseudo-terminal, as a user sees it: status lines and `Name: text`,
    no native library chatter (it goes to the log file instead)."""
    import pty

    wav = espeak("What is your favorite color?", speech_dir / "chat-color.wav", wpm=140)
    leader, follower = pty.openpty()
    env = {**os.environ, "PYTHONUNBUFFERED": "1", "TALK_LLAMA_CONFIG": str(tmp_path / "cfg")}
    cmd = [sys.executable, "-m", "app", "chat", "--ctx-size", "1024", "--temp", "0", "-mt", "24", "-p", "Sam"]
    proc = subprocess.Popen(cmd, stdin=follower, stdout=follower, stderr=follower, env=env, close_fds=True)
    os.close(follower)
    seen = b""

    def read_until(marker: bytes, timeout: float, after: bytes = b"") -> None:
        """Read until `marker` appears (after the first `after`, when given)."""
        nonlocal seen
        deadline = time.monotonic() + timeout
        while marker not in seen[seen.find(after) if after in seen else len(seen) :]:
            assert time.monotonic() < deadline and proc.poll() is None, seen.decode(errors="replace")
            try:
                seen += os.read(leader, 4096)
            except OSError:
                break

    try:
        read_until(b"[ready", 90)
        virtual_audio.play_into_mic(wav).wait(30)
        read_until(b"\n", 90, after=b"Aria: ")  # the whole reply line
        proc.send_signal(signal.SIGINT)
        assert proc.wait(15) == 0
        with contextlib.suppress(OSError):
            while chunk := os.read(leader, 4096):
                seen += chunk
    finally:
        if proc.poll() is None:
            proc.kill()
        os.close(leader)
    text = seen.decode(errors="replace").replace("\r", "")
    lines = [line for line in text.split("\n") if line.strip()]
    assert not [line for line in lines if any(m in line for m in NATIVE_MARKERS)], text
    assert all(line.startswith(("[", "Sam: ", "Aria: ")) for line in lines), text
    assert any(line.startswith("Sam: ") and "color" in line.lower() for line in lines), text
    assert re.search(r"^Aria: \S", text, re.M), text  # one space after the name, then the reply
    log_text = (tmp_path / "cfg" / "state" / "talk-llama.log").read_text()
    assert "language model ready" in log_text, log_text
    assert "native: whisper_" in log_text, log_text  # whisper.cpp's own lines, captured
    assert oct((tmp_path / "cfg" / "state" / "talk-llama.log").stat().st_mode & 0o777) == "0o600"


def _speaker_streams(audio) -> set[str]:
    """The ids of the streams open on the virtual speaker."""
    sinks = dict(line.split("\t")[1::-1] for line in audio.pactl("list", "short", "sinks").splitlines())
    inputs = audio.pactl("list", "short", "sink-inputs").splitlines()
    return {line.split("\t")[0] for line in inputs if line.split("\t")[1] == sinks["speaker"]}


def test_an_interrupted_reply_is_recorded_as_it_was_heard(virtual_audio, speech_dir, tmp_path) -> None:
    """Push-to-talk barge-in during a long story: the JSON record says what the assistant
    remembers (`reply` as heard, the rest `unspoken`), as the saved conversation does."""
    session = tmp_path / "s"
    flags = ["--ptt", "--jsonl", "--ctx-size", "1024", "--temp", "0", "-mt", "300", "--session", str(session)]
    proc = chat(flags, stdin=subprocess.PIPE)
    err, out = LineReader(proc.stderr), LineReader(proc.stdout)
    try:
        assert proc.stdin is not None
        err.wait_for("[ready", 90)
        wav = espeak("Tell me a long story about a dragon.", speech_dir / "chat-dragon.wav", wpm=140)
        proc.stdin.write("\n")  # press
        proc.stdin.flush()
        err.wait_for("[listening")
        virtual_audio.play_into_mic(wav).wait(30)
        before = _speaker_streams(virtual_audio)  # a stream another test left open is not the reply
        proc.stdin.write("\n")  # release: the question is asked
        proc.stdin.flush()
        deadline = time.monotonic() + 120
        while not _speaker_streams(virtual_audio) - before:
            assert time.monotonic() < deadline and proc.poll() is None, f"never spoken: {err.tail()}"
            time.sleep(0.05)
        time.sleep(1.5)  # a few words into the story (it lasts far longer)
        proc.stdin.write("\n\n")  # press (barge-in) and release with nothing said
        proc.stdin.flush()
        row = json.loads(out.next_line(120))
        proc.stdin.close()
        assert proc.wait(30) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
    assert row["interrupted"] is True and row["unspoken"], row
    assert "dragon" in row["user"].lower()
    remembered = json.loads((session / "session.json").read_text())["history"][1]
    assert remembered["role"] == "assistant" and remembered["interrupted"]
    assert row["reply"] == remembered["text"] and row["unspoken"] == remembered["unspoken"]


def test_a_turn_record_is_written_once_settled_whatever_order_the_threads_report_in(capsys) -> None:
    """The JSON record waits for a barge-in's `heard` only when one can still come: the turn's
    report and the assistant's idle state come from different threads in either order."""
    import argparse

    from app.cli.chat_shared import Transcript
    from app.cli.chat_voice import TerminalView
    from app.loop.events import Heard, State, StateChanged, TurnReported

    args = argparse.Namespace(jsonl=True, ptt=True, print_energy=False, file=None)
    written = lambda: [json.loads(x) for x in capsys.readouterr().out.splitlines()]  # noqa: E731
    idle, speaking = StateChanged(State.IDLE), StateChanged(State.SPEAKING)

    def turn(**d) -> TurnReported:
        return TurnReported(**{"user": "Tell me a story.", "reply": "Once upon a time. The end.", **d})

    view = TerminalView(args, Transcript(args), "Max", "Sam")
    view(speaking)
    view(turn(interrupted=False, settled=False))  # still speaking: a barge-in may come
    assert written() == []
    view(Heard("Once upon a time.", "The end."))
    assert [(r["reply"], r["unspoken"], r["interrupted"]) for r in written()] == [
        ("Once upon a time.", "The end.", True)
    ]
    view(idle)
    view(turn(interrupted=False, settled=False))  # idle already: nothing more can come
    assert [r["reply"] for r in written()] == ["Once upon a time. The end."]
    view(turn(interrupted=True, settled=True, reply="Once upon", unspoken="a time. The end."))
    assert [r["unspoken"] for r in written()] == ["a time. The end."]  # cut while written
    view(turn(interrupted=True, settled=False))  # cut, its `heard` still to come
    assert written() == []
    view(Heard("Once", "upon a time. The end."))
    assert [r["reply"] for r in written()] == ["Once"]
