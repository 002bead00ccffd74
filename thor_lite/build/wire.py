"""ai2thor's FIFO framing, seen from the build: 5-byte headers (type byte, big-endian length).

Python writes one JSON action per message on client.pipe; the build answers with one msgpack
METADATA field, raw image fields and an end-of-message header on server.pipe.
"""
from __future__ import annotations

import json
import os
import struct
from typing import Any, Dict, Iterable, Optional, Tuple

METADATA = 1
ACTION = 2
RGB_IMAGE = 4
DEPTH_IMAGE = 5
CLASSES_IMAGE = 8
IDS_IMAGE = 9
END_OF_MESSAGE = 255

_HEADER = struct.Struct("!BI")


class ClientGone(Exception):
    """The client closed its end of a pipe (stopped or died): the build's cue to exit."""


class ProtocolError(Exception):
    """A message the FIFO protocol does not allow."""


def _read_exact(fd: int, n: int) -> bytes:
    chunks, left = [], n
    while left:
        b = os.read(fd, left)
        if not b:
            raise ClientGone("end of file on the client pipe")
        chunks.append(b)
        left -= len(b)
    return b"".join(chunks)


def read_action(fd: int) -> Dict[str, Any]:
    """The next action dict; the last ACTION field before end-of-message wins (as in Unity)."""
    body: Optional[bytes] = None
    while True:
        kind, length = _HEADER.unpack(_read_exact(fd, _HEADER.size))
        if kind == END_OF_MESSAGE:
            break
        data = _read_exact(fd, length) if length else b""
        if kind != ACTION:
            raise ProtocolError(f"field type {kind} is not an action")
        body = data
    if body is None:
        raise ProtocolError("message without an action")
    action = json.loads(body.decode("utf-8"))
    if not isinstance(action, dict):
        raise ProtocolError("an action must be a JSON object")
    return action


def frame_message(fields: Iterable[Tuple[int, bytes]]) -> bytes:
    """One message: each (type, body) with its header, then end-of-message."""
    parts = []
    for kind, body in fields:
        parts.append(_HEADER.pack(kind, len(body)))
        parts.append(body)
    parts.append(_HEADER.pack(END_OF_MESSAGE, 0))
    return b"".join(parts)


def write_all(fd: int, data: bytes) -> None:
    """Write every byte; a closed reader (EPIPE) means the client is gone."""
    view = memoryview(data)
    try:
        while view:
            view = view[os.write(fd, view):]
    except BrokenPipeError as e:
        raise ClientGone("the client closed the server pipe") from e
