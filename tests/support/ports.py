"""Loopback port helpers."""

from __future__ import annotations

import os
import random
import socket
from pathlib import Path

# Ports handed out come from below the kernel's ephemeral range, which is where bind(("", 0))
# and the source ports of outgoing connections come from: a port taken from there and released
# could be reused by anything on the machine before our server binds it. Below it, only
# programs that choose a port themselves compete, and the xdist workers of a run each use
# their own slice of the pool, so they never hand out the same port.
_POOL_START = 20000
_MIN_SLICE = 500
_EPHEMERAL_RANGE = Path("/proc/sys/net/ipv4/ip_local_port_range")


def _ephemeral_start() -> int:
    try:
        return int(_EPHEMERAL_RANGE.read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return 0  # unknown: no pool below it, see free_port()


def _worker_slice() -> range | None:
    """This process's ports: its share of the pool under xdist (``gw0``, ``gw1``...), the
    whole pool otherwise; None when the ephemeral range leaves too little room."""
    end = _ephemeral_start()
    worker = os.environ.get("PYTEST_XDIST_WORKER", "gw0")
    count = max(1, int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1")))
    number = worker.removeprefix("gw")
    index = int(number) % count if number.isdigit() else 0
    size = (end - _POOL_START) // count
    if size < _MIN_SLICE:
        return None
    start = _POOL_START + index * size
    return range(start, start + size)


_SLICE = _worker_slice()
# Ports are taken in turn from a random point of the slice: two calls in a row never return
# the same port, and a port comes round again only after the whole slice has.
_next = random.randrange(len(_SLICE)) if _SLICE else 0


def _bindable(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return False
        return True


def free_port() -> int:
    """Return a TCP port on 127.0.0.1 that was free a moment ago, for a server to listen on.

    Between this check and the server's bind a program that chooses its own ports could still
    take it, so callers that start servers retry on "address already in use".
    """
    global _next
    if _SLICE is not None:
        for _ in range(len(_SLICE)):
            port = _SLICE[_next]
            _next = (_next + 1) % len(_SLICE)
            if _bindable(port):
                return port
    # No room below the ephemeral range (or all of it taken): let the kernel pick one.
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port
