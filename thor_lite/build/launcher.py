"""A small shell launcher that ai2thor can start as if it were a Unity build.

ai2thor splits its command line with shlex and kills only the pid it started, so the launcher
lives at a path without spaces and `exec`s the interpreter: the simulator is that very pid and
dies with it. `-P` keeps the caller's working directory off sys.path, so the thor_lite next to
this file is the one that runs, whatever directory the client was started from.
"""
from __future__ import annotations

import hashlib
import os
import shlex
import sys
import tempfile
from pathlib import Path
from typing import Optional

_TEMPLATE = """#!/bin/sh
# thor_lite as an AI2-THOR build (written by thor_lite.build.launcher; safe to delete)
PYTHONPATH={root}${{PYTHONPATH:+:$PYTHONPATH}}
export PYTHONPATH
exec {python} -P -m thor_lite.build "$@"
"""


def _source_root() -> Path:
    """The folder holding the thor_lite package that is running now."""
    return Path(__file__).resolve().parents[2]


def _cache_dir() -> Path:
    """thor_lite's cache folder (THOR_LITE_CACHE, else ~/.cache/thor_lite)."""
    return Path(os.environ.get("THOR_LITE_CACHE", Path.home() / ".cache" / "thor_lite"))


def launcher_text(python: str, root: Path) -> str:
    """The launcher script for this interpreter and source folder."""
    return _TEMPLATE.format(root=shlex.quote(str(root)), python=shlex.quote(python))


def executable_path(folder: Optional[os.PathLike] = None) -> str:
    """Write (once, atomically) and return the launcher for the current interpreter and checkout.

    The name carries a hash of both, so checkouts and virtual environments never share one.
    A folder whose path has whitespace (which ai2thor's shlex split would break) is replaced
    by a per-user folder in the temporary directory.
    """
    python, root = sys.executable, _source_root()
    text = launcher_text(python, root)
    tag = hashlib.sha1(f"{python}\0{root}".encode()).hexdigest()[:12]
    where = Path(folder) if folder is not None else _cache_dir() / "build"
    if any(c.isspace() for c in str(where.resolve())):
        where = Path(tempfile.gettempdir()) / f"thor_lite-{os.getuid()}"
    where.mkdir(parents=True, exist_ok=True)
    path = where / f"thor-lite-build-{tag}"
    try:
        if path.read_text() == text and os.access(path, os.X_OK):
            return str(path)
    except OSError:
        pass
    fd, tmp = tempfile.mkstemp(dir=where, prefix=".launcher-")
    try:
        with os.fdopen(fd, "w") as f:
            f.write(text)
        os.chmod(tmp, 0o755)
        os.replace(tmp, path)  # readers see the old launcher or the new one, never half of one
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    return str(path)
