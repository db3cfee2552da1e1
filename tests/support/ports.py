"""Loopback port helpers."""

from __future__ import annotations

import socket


def free_port() -> int:
    """Return a TCP port on 127.0.0.1 that was free a moment ago.

    The kernel picks an unused ephemeral port for a bind to port 0; we release it immediately so
    a server can take it. Another process could grab it in between, so callers that start servers
    retry on "address already in use".
    """
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port
