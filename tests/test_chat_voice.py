"""`talk-llama chat` voice mode as a user runs it: hands-free, --jsonl, Ctrl+C."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

from tests.conftest import espeak


def test_hands_free_terminal_turn_and_clean_ctrl_c(virtual_audio, speech_dir, tmp_path) -> None:
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "app",
            "chat",
            "--jsonl",
            "--ctx-size",
            "1024",
            "--temp",
            "0",
            "-mt",
            "40",
            "-p",
            "Sam",
            "-bn",
            "Max",
            "--session",
            str(tmp_path / "s"),
        ],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        deadline = time.monotonic() + 60
        line = ""
        while "[ready" not in line:
            assert time.monotonic() < deadline and proc.poll() is None, "chat did not become ready"
            line = proc.stderr.readline()
        wav = espeak("What is your favorite color?", speech_dir / "chat-color.wav", wpm=140)
        virtual_audio.play_into_mic(wav).wait(30)
        row = json.loads(proc.stdout.readline())
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
            raise AssertionError(f"Ctrl+C did not end the chat: {proc.stderr.read()[-3000:]}") from None
        assert code == 0
    finally:
        if proc.poll() is None:
            proc.kill()
    assert (tmp_path / "s" / "session.json").exists()
