"""A local HTTP file server for download tests (no network beyond 127.0.0.1).

Serves `files[path]`, honours `Range: bytes=N-` (206, or 416 past the end), and `cut[path] =
[n, ...]` makes the next answers promise the whole file but close after n bytes, so resumed
transfers can be tested; `ignore_range` makes it answer every request from byte 0, as servers
without Range support do. `serve()` runs it in a thread for the duration of a `with` block.
"""

from __future__ import annotations

import contextlib
import re
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Dict, Iterator, List, Optional, Tuple

#: a proxy must not see 127.0.0.1
LOCAL_ENV = {"NO_PROXY": "127.0.0.1,localhost", "no_proxy": "127.0.0.1,localhost"}


class Server:
    def __init__(self) -> None:
        self.files: Dict[str, bytes] = {}
        self.log: List[Tuple[str, Optional[str]]] = []
        self.cut: Dict[str, List[int]] = {}
        self.ignore_range = False
        self.base_url = ""


def _handler(state: Server) -> type:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args) -> None:
            pass

        def do_GET(self) -> None:
            path, rng = self.path.lstrip("/"), self.headers.get("Range")
            state.log.append((path, rng))
            body = state.files.get(path)
            if body is None:
                self.send_error(404)
                return
            start = (
                int(re.match(r"bytes=(\d+)-$", rng).group(1))
                if rng and not state.ignore_range
                else 0
            )
            if rng and start >= len(body):
                self.send_response(416)
                self.send_header("Content-Range", f"bytes */{len(body)}")
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            self.send_response(206 if start else 200)
            if start:
                self.send_header("Content-Range", f"bytes {start}-{len(body) - 1}/{len(body)}")
            self.send_header("Content-Length", str(len(body) - start))
            self.send_header("Connection", "close")
            self.end_headers()
            cuts = state.cut.get(path)
            n = cuts.pop(0) if cuts else len(body) - start
            self.wfile.write(body[start : start + n])
            self.wfile.flush()
            self.close_connection = True

    return Handler


@contextlib.contextmanager
def serve() -> Iterator[Server]:
    state = Server()
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler(state))
    state.base_url = f"http://127.0.0.1:{httpd.server_address[1]}/"
    t = threading.Thread(target=httpd.serve_forever, daemon=True)
    t.start()
    try:
        yield state
    finally:
        httpd.shutdown()
        httpd.server_close()


def free_port() -> int:
    """A port where nothing listens: stands for a machine without network."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]
