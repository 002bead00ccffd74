"""The build's main loop: the Unity side of ai2thor's FIFO protocol.

Order matters (both ends block in open): open server.pipe for writing, send the start-up
frame, only then open client.pipe for reading. Every reply echoes the action's sequenceId.
The loop ends when the client goes away: end of file on client.pipe, EPIPE on server.pipe,
or (watched from a thread, for a client killed while we wait in open) a new parent process.
"""
from __future__ import annotations

import fcntl
import os
import threading
import time
from typing import Optional

from . import encode, wire
from .session import BuildSession


def watch_parent(interval: float = 0.5) -> threading.Thread:
    """Exit at once when the launching process dies (we are re-parented): never an orphan."""
    parent = os.getppid()

    def watch() -> None:
        while True:
            time.sleep(interval)
            if os.getppid() != parent:
                os._exit(0)

    t = threading.Thread(target=watch, name="thor-lite-build-parent-watch", daemon=True)
    t.start()
    return t


_F_SETPIPE_SZ = 1031  # Linux fcntl: resize a pipe's buffer
_WANTED_PIPE_BYTES = 4 << 20


def widen_pipe(fd: int) -> int:
    """Give server.pipe a buffer that holds a whole reply (up to what an unprivileged process may set).

    With the default 64 KiB, a 224x224 reply (about 0.7 MB) crosses in a dozen rounds of
    select/read in the client, each a context switch; in one buffer it is read in a few calls.
    Returns the size in effect (0 where the system does not allow resizing)."""
    try:
        with open("/proc/sys/fs/pipe-max-size") as f:
            limit = int(f.read())
        return fcntl.fcntl(fd, _F_SETPIPE_SZ, min(limit, _WANTED_PIPE_BYTES))
    except (OSError, ValueError):
        return 0


def serve(server_pipe: str, client_pipe: str, session: BuildSession) -> int:
    """Answer actions until the client goes away; returns the exit status (0)."""
    out = os.open(server_pipe, os.O_WRONLY)
    widen_pipe(out)
    inp: Optional[int] = None
    try:
        meta, images = session.first_reply()
        wire.write_all(out, encode.event_message(meta, 0, images))
        inp = os.open(client_pipe, os.O_RDONLY)
        while True:
            request = wire.read_action(inp)
            seq = request.pop("sequenceId", 0)
            try:
                meta, images = session.handle(request)
                message = encode.event_message(meta, seq, images)
            except Exception as e:  # the client would otherwise wait out its timeout
                meta, _ = session.error_reply(request, e)
                message = encode.event_message(meta, seq, [])
            wire.write_all(out, message)
    except wire.ClientGone:
        return 0
    finally:
        for fd in (out, inp):
            if fd is not None:
                try:
                    os.close(fd)
                except OSError:
                    pass
