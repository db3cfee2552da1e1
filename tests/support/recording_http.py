"""A canned HTTP/1.1 service on loopback for the XML mediation tests, recording what reached it.

The test services (``jsonservice``, ``soapservice``) are a :class:`RecordingService` each with
its own handler: the service runs a threaded server on a free port while the ``with`` block
runs, and its handler calls :meth:`RecordingService.record` for each request it takes, then
:func:`write_body`. Some documents are answered chunked, 1,000 bytes a chunk, so that the
mediation plugins are tested on bodies that arrive in pieces; a HEAD gets the same headers
and no body.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self

CHUNK = 1000


@dataclass
class Received:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes


class _Server(ThreadingHTTPServer):
    daemon_threads = True


class RecordingService:
    """A server answering with the handler ``handler_for(self)`` makes; every request it took
    in ``received``."""

    def __init__(self, handler_for: Callable[[Self], type[BaseHTTPRequestHandler]]) -> None:
        self.received: list[Received] = []
        self._server = _Server(("127.0.0.1", 0), handler_for(self))
        self.port = self._server.server_address[1]
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.05,))
        self._thread.daemon = True

    def __enter__(self) -> Self:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    def record(self, handler: BaseHTTPRequestHandler) -> tuple[dict[str, str], bytes]:
        """Read the request's body and keep the request; its headers (names lower-cased) and
        body."""
        length = int(handler.headers.get("content-length") or 0)
        body = handler.rfile.read(length) if length else b""
        headers = {k.lower(): v for k, v in handler.headers.items()}
        self.received.append(Received(handler.command, handler.path, headers, body))
        return headers, body


class QuietHandler(BaseHTTPRequestHandler):
    """HTTP/1.1 (kept-alive connections, as the gateway's), no line on stderr a request."""

    protocol_version = "HTTP/1.1"

    def log_message(self, *args: Any) -> None:
        return


def write_body(handler: BaseHTTPRequestHandler, body: bytes, *, chunked: bool = False) -> None:
    """End the headers (the status and the others are sent) and write ``body``."""
    if chunked:
        handler.send_header("transfer-encoding", "chunked")
        handler.end_headers()
        if handler.command == "HEAD":
            return
        for start in range(0, len(body), CHUNK):
            piece = body[start : start + CHUNK]
            handler.wfile.write(b"%x\r\n%s\r\n" % (len(piece), piece))
        handler.wfile.write(b"0\r\n\r\n")
        return
    handler.send_header("content-length", str(len(body)))
    handler.end_headers()
    if handler.command != "HEAD":
        handler.wfile.write(body)
