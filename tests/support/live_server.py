"""An ASGI app served by uvicorn on a loopback port, in a thread of its own, for tests that
need a real server (schemathesis against a live API)."""

from __future__ import annotations

import contextlib
import socket
import threading
from collections.abc import Iterator
from typing import Any

import uvicorn

from tests.support.waiting import eventually_sync


@contextlib.contextmanager
def serving(app: Any, name: str, *, host: str = "127.0.0.1") -> Iterator[str]:
    """``app`` served until the block ends; yields its base URL (``http://127.0.0.1:port``;
    ``host`` another loopback address, e.g. 127.0.0.2, for tests of address allow-lists).
    The store's connections belong to the loop that opened them, so the server runs its own
    loop in its thread."""
    # bound here, port 0: no other process can take the port between choosing and serving
    listener = socket.create_server((host, 0))
    port = listener.getsockname()[1]
    server = uvicorn.Server(
        uvicorn.Config(
            app,
            loop="asyncio",
            log_config=None,
            access_log=False,
            lifespan="on",
            # a test that leaves a response streaming (an endless body) must not hold the
            # teardown for the whole join below: open connections are cut after 2 s
            timeout_graceful_shutdown=2,
        )
    )
    # off the main thread uvicorn leaves signals alone
    thread = threading.Thread(
        target=server.run, kwargs={"sockets": [listener]}, name=name, daemon=True
    )
    thread.start()
    try:

        def started() -> bool:
            assert thread.is_alive(), "the server did not start"
            return server.started

        eventually_sync(started, 30, what="the server did not start in time")
        yield f"http://{host}:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=15)
        listener.close()
