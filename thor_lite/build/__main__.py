"""`python -m thor_lite.build` / `thor-lite-build`: the executable ai2thor's Controller launches.

ai2thor passes the pipes in the environment and Unity's player flags on the command line;
only the screen size is used. `--path` prints a launcher path for local_executable_path.
"""
from __future__ import annotations

import os
import signal
import sys
from typing import List, Optional

from common.cli import print_error

PROG = "thor-lite-build"
_PIPES = ("AI2THOR_FIFO_SERVER_PIPE_PATH", "AI2THOR_FIFO_CLIENT_PIPE_PATH")


def _screen_size(argv: List[str]) -> tuple:
    """(-screen-width, -screen-height) from Unity-style flags; ai2thor's default when absent."""
    from .session import DEFAULT_SIZE

    size = {"-screen-width": DEFAULT_SIZE, "-screen-height": DEFAULT_SIZE}
    for i, flag in enumerate(argv):
        if flag in size:
            value = argv[i + 1] if i + 1 < len(argv) else ""
            if not value.isdigit() or int(value) <= 0:
                raise ValueError(f"{flag} needs a positive integer, got {value!r}")
            size[flag] = int(value)
    return size["-screen-width"], size["-screen-height"]


def main(argv: Optional[List[str]] = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] in (["-h"], ["--help"]):
        print(__doc__.strip())
        return 0
    if argv[:1] == ["--path"]:
        from .launcher import executable_path

        print(executable_path())
        return 0
    try:
        width, height = _screen_size(argv)
    except ValueError as e:
        return print_error(PROG, e)
    server_type = os.environ.get("AI2THOR_SERVER_TYPE", "FIFO")
    if server_type != "FIFO":
        return print_error(PROG, f"only ai2thor's FIFO server is supported, not {server_type} "
                                 "(leave the Controller's server_class at its default)")
    missing = [k for k in _PIPES if not os.environ.get(k)]
    if missing:
        return print_error(PROG, f"{' and '.join(missing)} not set: this program is started by ai2thor's "
                                 "Controller(local_executable_path=...); run it with --path for that path")
    from .server import serve, watch_parent
    from .session import BuildSession

    signal.signal(signal.SIGPIPE, signal.SIG_IGN)  # a closed pipe surfaces as EPIPE: exit cleanly
    watch_parent()
    screenshots = os.environ.get("AI2THOR_SERVER_SIDE_SCREENSHOT", "True") != "False"
    session = BuildSession(width, height, screenshots)
    from .wire import ProtocolError

    try:
        return serve(os.environ[_PIPES[0]], os.environ[_PIPES[1]], session)
    except (ProtocolError, ValueError) as e:  # not ai2thor's FIFO protocol on the pipe
        print(f"{PROG}: error: {' '.join(str(e).split())}", file=sys.stderr, flush=True)
        return 1


if __name__ == "__main__":
    sys.exit(main())
