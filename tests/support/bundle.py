"""Building the PyInstaller bundle and running it the way a user would: unpacked from its
tarball, started with `env -i` (no venv, a minimal PATH, a HOME of its own). Used by
tests/test_bundle.py and bench/coldstart.py.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tarfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
MIN_PATH = "/usr/bin:/bin"
LOG = Path(".local/state/talk-llama/talk-llama.log")  # under HOME


@dataclass
class Bundle:
    tarball: Path
    folder: Path  # the unpacked top folder (holds `talk-llama`, `_internal`, install.sh…)

    @property
    def launcher(self) -> Path:
        return self.folder / "talk-llama"

    @property
    def internal(self) -> Path:
        return self.folder / "_internal"


def build(dist: Path) -> Path:
    """Run packaging/build_bundle.sh into `dist`; the tarball it made."""
    r = subprocess.run(
        [str(ROOT / "packaging" / "build_bundle.sh"), str(dist)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=1800,
        env={**os.environ, "PYTHON": sys.executable},
    )
    assert r.returncode == 0, (r.stdout + r.stderr)[-3000:]
    (tarball,) = dist.glob("talk-llama-*-linux-*.tar.gz")
    return tarball


def unpack(tarball: Path, into: Path) -> Bundle:
    into.mkdir(parents=True, exist_ok=True)
    with tarfile.open(tarball) as tf:
        tf.extractall(into, filter="tar")
    (folder,) = into.glob("talk-llama-*")
    return Bundle(tarball, folder)


def isolated_env(home: Path, **extra: str) -> list[str]:
    """`env -i` arguments: nothing of this process's environment (no venv, no PYTHONPATH)."""
    return ["env", "-i", f"PATH={MIN_PATH}", f"HOME={home}", *(f"{k}={v}" for k, v in extra.items())]


def run(
    bundle: Bundle | Path,
    args: list[str],
    home: Path,
    timeout: float = 300,
    stdin: str | None = None,
    **env: str,
) -> subprocess.CompletedProcess:
    """Run the bundle's launcher (or another program of it) isolated; blocking."""
    program = bundle.launcher if isinstance(bundle, Bundle) else bundle
    return subprocess.run(
        [*isolated_env(home, **env), str(program), *args],
        cwd=home,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def wait_for_log(home: Path, pattern: str, proc: subprocess.Popen, timeout: float = 300) -> re.Match:
    """Wait until the app's log file under `home` has a line matching `pattern` (polls; fails
    when the process ends first or `timeout` passes)."""
    log = home / LOG
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if log.exists() and (m := re.search(pattern, log.read_text(errors="replace"))):
            return m
        assert proc.poll() is None, f"the app ended ({proc.returncode}) before logging {pattern!r}"
        time.sleep(0.05)
    raise AssertionError(f"no log line {pattern!r} within {timeout} s")


def grab_screen(display: str, out: Path) -> Path:
    """Save the X screen `display` as a PNG (Qt's xcb plugin, in a process of its own)."""
    script = (
        "import sys\n"
        "from PySide6.QtGui import QGuiApplication\n"
        "app = QGuiApplication(sys.argv)\n"
        "assert QGuiApplication.primaryScreen().grabWindow(0).save(sys.argv[1])\n"
    )
    out.parent.mkdir(parents=True, exist_ok=True)
    env = {"PATH": MIN_PATH, "DISPLAY": display, "QT_QPA_PLATFORM": "xcb", "HOME": str(out.parent)}
    subprocess.run([sys.executable, "-c", script, str(out)], env=env, check=True, timeout=60)
    return out
