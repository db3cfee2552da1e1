"""The gateway's HTTP/1.1 server (the data plane's listener).

``serve()`` listens and runs a ``Handler`` per request; each connection is an
``connection.HttpProtocol`` (raw asyncio protocol + llhttp). ``shutdown()`` stops listening and
drains the connections. ``Request``, ``Responder`` and ``Limits`` are what handlers work with.
"""

from __future__ import annotations

import asyncio
import weakref
from typing import cast

from .channel import Limits
from .connection import HttpProtocol
from .held_writes import HeldWrites
from .request import Request
from .responder import Handler, Responder

__all__ = ["Handler", "HttpProtocol", "Limits", "Request", "Responder", "serve", "shutdown"]

_CONNECTIONS: weakref.WeakKeyDictionary[asyncio.AbstractServer, set[HttpProtocol]] = (
    weakref.WeakKeyDictionary()
)


async def serve(
    handler: Handler,
    host: str,
    port: int,
    *,
    limits: Limits = Limits(),
    reuse_port: bool = False,
    backlog: int = 1024,
) -> asyncio.Server:
    """Listen on ``host:port`` and run ``handler`` for every request."""
    loop = asyncio.get_running_loop()
    live: set[HttpProtocol] = set()
    held_writes = HeldWrites()
    # (an asyncio protocol by its methods, not by inheritance: see CONVENTIONS.md
    # "Compiled modules")
    server = await loop.create_server(
        lambda: cast(asyncio.Protocol, HttpProtocol(handler, limits, live, held_writes)),
        host,
        port,
        reuse_port=reuse_port,
        backlog=backlog,
    )
    _CONNECTIONS[server] = live
    return server


async def shutdown(server: asyncio.AbstractServer, *, grace: float = 5.0) -> None:
    """Stop listening, close idle connections, give requests in flight ``grace`` seconds to
    finish (each connection closes after its current response), then drop the rest."""
    server.close()
    live = _CONNECTIONS.pop(server, set())
    for proto in list(live):
        proto.must_close = True
        if proto.idle:
            proto.close()
    loop = asyncio.get_running_loop()
    deadline = loop.time() + grace
    while live and loop.time() < deadline:  # noqa: ASYNC110 - shutdown only, no event to wait on
        await asyncio.sleep(0.02)
    for proto in list(live):
        if not proto.closed:
            proto.transport.abort()
    await asyncio.sleep(0)
