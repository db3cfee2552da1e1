"""Writing a canned answer's body from a ``BaseHTTPRequestHandler``, whole or chunked.

The test services (``jsonservice``, ``soapservice``) answer some documents chunked, 1,000 bytes
a chunk, so that the mediation plugins are tested on bodies that arrive in pieces; a HEAD
gets the same headers and no body.
"""

from __future__ import annotations

from http.server import BaseHTTPRequestHandler

CHUNK = 1000


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
