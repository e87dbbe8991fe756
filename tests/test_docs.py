"""The words around the code stay true (issue #30): the README is for users and short, the tree
keeps no run diary (history lives in `git log`), and docs/benchmarks.md is what bench/report.py
makes of bench/results/ (never typed by hand)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# Phrases of a diary: numbered sessions and stops, run histories, before/after narratives.
DIARY = re.compile(
    r"\b(sessions? \d+|stops? \d+\b|earlier runs?|in (an|the) earlier run|runs? of \d{4}-\d\d-\d\d|"
    r"before (this|the) (change|fix)|until (this|the) (change|fix)|the old (code|rule)|"
    r"used to (say|reset|be))",
    re.IGNORECASE,
)


def _texts() -> list[Path]:
    files = [ROOT / "README.md", *(ROOT / "docs").glob("*.md"), *(ROOT / "packaging").glob("*.md")]
    for folder in ("app", "tests", "bench", "packaging"):
        files += [p for p in (ROOT / folder).rglob("*.py") if p.name != "test_docs.py"]
    return files


def test_the_readme_is_short_and_for_users() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) <= 250
    for heading in ("## Quick start", "## Using it", "## Known limits", "## Privacy"):
        assert heading in readme
    assert "make run" in readme and "make test" in readme
    for page in ("docs/architecture.md", "docs/benchmarks.md", "docs/testing.md"):
        assert page in readme and (ROOT / page).exists()


def test_no_run_diary_in_the_tree() -> None:
    found = []
    for path in _texts():
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if m := DIARY.search(line):
                found.append(f"{path.relative_to(ROOT)}:{n}: {m.group(0)!r}")
    assert found == [], "history belongs in git log:\n" + "\n".join(found)


def test_the_diary_check_sees_a_diary() -> None:
    """Guards the guard: phrases of the kind it must catch are caught."""
    session, stop = "session", "stop"  # spelled apart: this file itself keeps no diary line
    for line in (
        f"measured in {session} 14",
        f"CI failed on {stop} 29",
        "the old rule lost it",
        "in an earlier run",
    ):
        assert DIARY.search(line), line
    assert not DIARY.search("the session folder is 0700; stop() ends the voice")


def test_the_benchmark_page_is_generated_from_the_results() -> None:
    r = subprocess.run(
        [sys.executable, "-m", "bench.report", "--check"], cwd=ROOT, capture_output=True, text=True
    )
    assert r.returncode == 0, r.stderr
