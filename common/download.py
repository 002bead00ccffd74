"""Resumable, verified HTTP downloads: a file appears at its destination complete or not at all.

Bytes go to `<dest>.part`; an interrupted transfer keeps that file and the next attempt (an
automatic retry, or the same command run again) asks the server for the rest with an HTTP
Range request. Only when the size (and, where known, the sha256) checks out is the part file
fsynced and renamed over `dest`. A part file whose hash is wrong is deleted, so a corrupted
transfer never survives to poison the next try. Every failure is a `DownloadError` whose
message is one line naming the file or URL, for CLIs to print as is.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import time
from pathlib import Path
from typing import Optional

import requests
import urllib3
from tqdm import tqdm

__all__ = ["DownloadError", "download", "sha256_of", "part_path", "is_complete"]

CHUNK = 1 << 16
_CONTENT_RANGE = re.compile(r"bytes (\d+)-(\d+)/(\d+)")


class DownloadError(Exception):
    """A download that could not be completed or verified (one-line message)."""


class _Interrupted(Exception):
    """The connection broke after some bytes arrived: worth resuming."""


def part_path(dest: Path) -> Path:
    return dest.with_name(dest.name + ".part")


def sha256_of(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def is_complete(path: Path, size: Optional[int], sha256: Optional[str]) -> bool:
    """Whether `path` exists and passes every check that is known (size, sha256)."""
    if not path.is_file() or (size is not None and path.stat().st_size != size):
        return False
    return sha256 is None or sha256_of(path) == sha256


def download(
    url: str,
    dest: Path,
    size: Optional[int] = None,
    sha256: Optional[str] = None,
    retries: int = 3,
    timeout: float = 30.0,
    backoff_s: float = 1.0,
    progress: bool = True,
) -> bool:
    """Fetch `url` into `dest`; False when `dest` already passes the checks (nothing fetched).

    `retries` more attempts follow a connection that broke mid-transfer (each resumes from
    the part file); a server that cannot be reached at all fails at once, since waiting does
    not help an offline machine and a clear error in seconds does.
    """
    dest = Path(dest)
    if is_complete(dest, size, sha256) and dest.stat().st_size > 0:
        return False
    part = part_path(dest)
    for attempt in range(retries + 1):
        try:
            total = _fetch_into(url, part, size, timeout, progress)
            break
        except _Interrupted as e:
            if attempt == retries:
                have = part.stat().st_size if part.exists() else 0
                raise DownloadError(
                    f"{url}: transfer interrupted after {have} bytes ({e}); run the same "
                    f"command again to resume from {part}"
                ) from None
            time.sleep(backoff_s * 2**attempt)
    _verify(part, dest, url, size if size is not None else total, sha256)
    os.replace(part, dest)
    return True


def _verify(part: Path, dest: Path, url: str, size: Optional[int], sha256: Optional[str]) -> None:
    """Size, then hash; a wrong file is deleted (resuming it could only make it worse)."""
    got_size = part.stat().st_size
    if size is not None and got_size != size:
        part.unlink()
        raise DownloadError(
            f"{dest.name}: size mismatch for {url}: expected {size} bytes, got {got_size}"
        )
    if sha256 is not None:
        got = sha256_of(part)
        if got != sha256:
            part.unlink()
            raise DownloadError(
                f"{dest.name}: sha256 mismatch for {url}: expected {sha256}, got {got}"
            )
    with open(part, "rb+") as f:
        os.fsync(f.fileno())


def _fetch_into(
    url: str, part: Path, size: Optional[int], timeout: float, progress: bool
) -> Optional[int]:
    """Append the missing bytes of `url` to `part`; returns the server's full size (None if unsaid)."""
    have = part.stat().st_size if part.exists() else 0
    if size is not None and have >= size:
        if have == size:
            return size
        part.unlink()  # longer than the file can be: not a prefix of it
        have = 0
    # identity: the bytes on disk must be the file's bytes, never a transfer-encoded form of them
    headers = {"Accept-Encoding": "identity", **({"Range": f"bytes={have}-"} if have else {})}
    try:
        resp = requests.get(url, headers=headers, stream=True, timeout=timeout)
    except requests.RequestException as e:
        kept = (
            f" (the partial file {part} is kept: run the same command again to resume)"
            if have
            else ""
        )
        raise DownloadError(f"cannot reach {url}: {_reason(e)}{kept}") from None
    with contextlib.closing(resp):
        if resp.status_code == 416 and have:
            if resp.headers.get("Content-Range", "") == f"bytes */{have}":
                return have  # the part file is already the whole file (stopped before its rename)
            part.unlink()  # no prefix the server knows
            raise _Interrupted("the server refused to resume the part file; starting over")
        if resp.status_code not in (200, 206):
            raise DownloadError(f"{url}: HTTP {resp.status_code} {resp.reason}")
        have, total = _resume_point(resp, have)
        if size is not None and total is not None and total != size:
            part.unlink(missing_ok=True)
            raise DownloadError(f"{url}: the server offers {total} bytes, expected {size}")
        part.parent.mkdir(parents=True, exist_ok=True)  # only now: a failed start leaves no folders
        _stream(resp, part, have, total, progress)
    got = part.stat().st_size
    if total is not None and got < total:
        raise _Interrupted(f"{got} of {total} bytes")
    return total


def _resume_point(resp: requests.Response, have: int) -> tuple:
    """(offset to write at, full size or None) from a 200 (start over) or 206 (resume) answer."""
    if resp.status_code == 206:
        m = _CONTENT_RANGE.match(resp.headers.get("Content-Range", ""))
        if m and int(m.group(1)) == have:
            return have, int(m.group(3))
        raise DownloadError(
            f"{resp.url}: unusable Content-Range {resp.headers.get('Content-Range')!r} "
            f"for a resume at byte {have}"
        )
    length = resp.headers.get("Content-Length")
    return 0, int(length) if length and length.isdigit() else None


def _stream(
    resp: requests.Response, part: Path, offset: int, total: Optional[int], progress: bool
) -> None:
    with (
        open(part, "ab" if offset else "wb") as f,
        tqdm(
            total=total,
            initial=offset,
            unit="B",
            unit_scale=True,
            unit_divisor=1024,
            desc=part.name[: -len(".part")],
            disable=not progress,
            leave=False,
        ) as bar,
    ):
        chunks = resp.raw.stream(CHUNK, decode_content=False)
        while True:
            try:
                chunk = next(chunks, b"")
            except (requests.RequestException, urllib3.exceptions.HTTPError, ConnectionError) as e:
                raise _Interrupted(_reason(e)) from None
            if not chunk:
                return
            try:
                f.write(chunk)
            except OSError as e:
                raise DownloadError(f"{part}: cannot write ({e.strerror or e})") from None
            bar.update(len(chunk))


def _reason(e: BaseException) -> str:
    """The cause of a requests/urllib3 error on one line, without urllib3's object reprs."""
    text = " ".join(str(e).split())
    m = re.search(r"\[Errno -?\d+\] [^')\]]+", text)
    return m.group(0) if m else (text[:200] or type(e).__name__)
