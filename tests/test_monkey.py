"""The monkey in the real window (#36 point 3): three minutes of random user actions with a
fixed seed under a private Xvfb, on the virtual audio devices (tests/support/monkey.py says what it
does and checks). Every violation it has found is fixed at its cause; this run must find none."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest


@pytest.mark.slow
def test_three_minutes_of_a_monkey_in_the_window_find_nothing_wrong(tmp_path):
    run = subprocess.run(
        [sys.executable, "-m", "tests.support.monkey", "--seed", "7", "--minutes", "3"],
        cwd=Path(__file__).resolve().parents[1],
        capture_output=True,
        text=True,
        timeout=1200,
        stdin=subprocess.DEVNULL,
    )
    (tmp_path / "monkey.log").write_text(run.stderr)
    lines = run.stdout.strip().splitlines()
    assert lines, run.stderr[-3000:]
    result = json.loads(lines[-1])
    assert result["violations"] == [], result
    assert run.returncode == 0
    assert result["actions"] >= 20 and result["checks"] > 3 * result["actions"]
    assert {"push_to_talk", "type_and_send"} <= set(result["by_action"])
