"""Command-line plumbing shared by every CLI: user errors as one line and exit status 2.

A user error (a bad flag value, a missing or malformed input file, an output path that cannot
be written) must be reported before any work starts, as one line on stderr that names the
flag, file and value, never as a traceback. CLIs raise `UsageError` from their checks and let
`report_usage_errors` (or `fail`) print it; `OneLineArgumentParser` makes argparse's own errors
one line too. The output checks only read the file system (plus one probe file that is removed
at once), so a rejected run leaves nothing behind.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any, Callable, Iterator, NoReturn, Optional, Union

PathLike = Union[str, os.PathLike]

__all__ = [
    "UsageError",
    "OneLineArgumentParser",
    "print_error",
    "fail",
    "report_usage_errors",
    "run_main",
    "check_output_file",
    "check_output_dir",
    "check_input_file",
    "check_input_dir",
    "check_int",
]

EXIT_USAGE = 2


class UsageError(Exception):
    """A mistake in what the user asked for; printed as one line, exit status 2."""


def print_error(prog: str, message: object) -> int:
    """Print `prog: error: message` with newlines folded (one line); returns exit status 2."""
    one_line = " ".join(str(message).split())
    print(f"{prog}: error: {one_line}", file=sys.stderr, flush=True)
    return EXIT_USAGE


def fail(prog: str, message: object) -> NoReturn:
    """`print_error`, then exit with status 2."""
    raise SystemExit(print_error(prog, message))


@contextlib.contextmanager
def report_usage_errors(prog: str, *extra: type) -> Iterator[None]:
    """Turn `UsageError` (and the `extra` exception types) raised inside into `fail(prog, ...)`."""
    try:
        yield
    except (UsageError, *extra) as e:  # type: ignore[misc]
        fail(prog, str(e))


def run_main(main: Callable[[], Any], stop_children_as: Optional[str] = None) -> NoReturn:
    """The tail of every CLI module: run `main` and exit with its int (0 for anything else).

    `main` reports its own usage errors (`report_usage_errors`). With `stop_children_as`,
    `main` runs inside `common.procs.stop_children_on_signals(stop_children_as)`: Ctrl-C or
    SIGTERM print one line naming that program, stop every child process and exit 128 + signum.
    """
    if stop_children_as is None:
        rc = main()
    else:
        from common.procs import stop_children_on_signals

        with stop_children_on_signals(stop_children_as):
            rc = main()
    sys.exit(rc if isinstance(rc, int) else 0)


class OneLineArgumentParser(argparse.ArgumentParser):
    """argparse without the usage block on errors: one line naming the flag, exit 2."""

    def error(self, message: str) -> NoReturn:  # type: ignore[override]
        fail(self.prog, f"{message} (see --help)")


def parse_json_object(flag: str, text: Optional[str], error: Optional[type] = None) -> dict:
    """A JSON-object option value (``{}`` when not given); `error` (UsageError by default) names
    the flag and the problem otherwise."""
    error = error or UsageError
    if not text:
        return {}
    try:
        value = json.loads(text)
    except json.JSONDecodeError as e:
        raise error(f"{flag}: invalid JSON: {e}") from None
    if not isinstance(value, dict):
        raise error(f"{flag}: expected a JSON object, got {text!r}")
    return value


def check_int(flag: str, value: Optional[int], minimum: int) -> None:
    """`value` (None = unset) must be an integer >= minimum."""
    if value is not None and value < minimum:
        raise UsageError(f"{flag} must be at least {minimum}, not {value}")


def _nearest_existing(path: Path) -> Path:
    p = path
    while not os.path.lexists(p):
        if p.parent == p:
            break
        p = p.parent
    return p


def _check_creatable_below(flag: str, path: Path, folder: Path) -> None:
    """Every existing ancestor of `folder` (itself included) must be a folder, the nearest one
    writable, so that `path` can be made there."""
    anchor = _nearest_existing(folder)
    if not anchor.is_dir():
        raise UsageError(f"{flag} {path}: {anchor} is a file where a folder is expected")
    try:  # os.access says yes to root even on read-only mounts; a real probe does not lie
        fd, probe = tempfile.mkstemp(prefix=".write-probe-", dir=anchor)
    except OSError as e:
        raise UsageError(f"{flag} {path}: folder {anchor} is not writable ({e.strerror})") from None
    os.close(fd)
    os.unlink(probe)


def check_output_file(flag: str, path: PathLike) -> Path:
    """An output file: not a folder, and its folder exists or can be created, and is writable."""
    p = Path(path)
    if str(path).endswith(os.sep) or p.is_dir():
        raise UsageError(f"{flag} {p}: is a folder where a file is expected")
    _check_creatable_below(flag, p, p.parent)
    return p


def check_output_dir(flag: str, path: PathLike) -> Path:
    """An output folder: an existing writable folder, or one that can be created."""
    p = Path(path)
    if os.path.lexists(p) and not p.is_dir():
        raise UsageError(f"{flag} {p}: is a file where a folder is expected")
    _check_creatable_below(flag, p, p)
    return p


def check_input_file(flag: str, path: PathLike) -> Path:
    p = Path(path)
    if p.is_dir():
        raise UsageError(f"{flag} {p}: is a folder where a file is expected")
    if not p.is_file():
        raise UsageError(f"{flag} {p}: no such file")
    return p


def check_input_dir(flag: str, path: PathLike) -> Path:
    p = Path(path)
    if not p.exists():
        raise UsageError(f"{flag} {p}: no such folder")
    if not p.is_dir():
        raise UsageError(f"{flag} {p}: is a file where a folder is expected")
    return p
