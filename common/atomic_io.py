"""Atomic file writes: a reader (or a crash, Ctrl-C, SIGTERM) never sees a half-written file.

Every writer of results, datasets and caches in this repository goes through these helpers.
The data is written to a temporary file in the destination folder, flushed to disk, given the
usual 0o644 permissions and renamed over the destination (``os.replace`` is atomic on POSIX).
On any exception the temporary file is removed and the destination is left as it was.
"""

from __future__ import annotations

import contextlib
import gzip
import json
import os
import tempfile
from pathlib import Path
from typing import IO, Any, Iterator, Union

PathLike = Union[str, os.PathLike]

__all__ = ["atomic_open", "write_bytes_atomic", "write_text_atomic", "write_json_atomic"]


@contextlib.contextmanager
def atomic_open(
    path: PathLike, mode: str = "wb", gzip_mtime: int | None = None, encoding: str | None = None
) -> Iterator[IO[Any]]:
    """Open ``path`` for writing through a temporary sibling that replaces it on success.

    ``mode`` is "w" (text, UTF-8 unless ``encoding``) or "wb". With ``gzip_mtime`` set the
    stream is gzip-compressed with that fixed mtime, so equal data gives identical files.
    """
    if mode not in ("w", "wb"):
        raise ValueError(f"atomic_open: mode must be 'w' or 'wb', got {mode!r}")
    dest = Path(path)
    dest.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{dest.name}.", suffix=".tmp", dir=dest.parent)
    try:
        with os.fdopen(fd, "wb") as raw:
            if gzip_mtime is not None:
                with gzip.GzipFile(fileobj=raw, mode="wb", mtime=gzip_mtime) as gz:
                    yield _text(gz, mode, encoding)
            else:
                yield _text(raw, mode, encoding)
            raw.flush()
            os.fsync(raw.fileno())
        os.chmod(tmp, 0o644)
        os.replace(tmp, dest)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def _text(stream: IO[bytes], mode: str, encoding: str | None) -> IO[Any]:
    if mode == "wb":
        return stream
    import io

    wrapper = io.TextIOWrapper(stream, encoding=encoding or "utf-8", write_through=True)
    # Closing the wrapper would close the underlying file before it is flushed to disk.
    wrapper.close = lambda: None  # type: ignore[method-assign]
    return wrapper


def write_bytes_atomic(path: PathLike, data: bytes) -> Path:
    with atomic_open(path, "wb") as f:
        f.write(data)
    return Path(path)


def write_text_atomic(path: PathLike, text: str, encoding: str = "utf-8") -> Path:
    with atomic_open(path, "w", encoding=encoding) as f:
        f.write(text)
    return Path(path)


def write_json_atomic(
    path: PathLike, obj: Any, indent: int | None = 4, sort_keys: bool = True, **json_kwargs: Any
) -> Path:
    """JSON with ASCII output by default (ALFRED's result files are written that way)."""
    json_kwargs.setdefault("ensure_ascii", True)
    return write_text_atomic(
        path, json.dumps(obj, indent=indent, sort_keys=sort_keys, **json_kwargs)
    )
