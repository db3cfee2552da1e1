"""What the plugin traffic tests share: a gateway on loopback whose clock the test moves,
a real backend that echoes what it received, a real redis-server."""

from __future__ import annotations

import threading
from collections.abc import AsyncIterator, Iterator
from http.server import ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
import pytest

from portico.gateway.gateway import Gateway
from portico.gateway.http.server import serve
from portico.gateway.node_options import GatewayOptions
from tests.e2e.test_gateway import Echo
from tests.gateway.test_pipeline import HOST
from tests.support.redisserver import RedisServer


class Clock:
    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


Served = tuple[Gateway, httpx.AsyncClient, Clock]


@pytest.fixture
async def served() -> AsyncIterator[Any]:
    """``start(egress_allow, **options)`` → a gateway on loopback (``GatewayOptions`` of
    those) with a client and its clock."""
    opened: list[tuple[Gateway, Any, httpx.AsyncClient]] = []

    async def start(egress_allow: tuple[str, ...] = (), **options: Any) -> Served:
        clock = Clock()
        gw = Gateway(options=GatewayOptions(egress_allow=egress_allow, **options), now=clock)
        server = await serve(gw.handle, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        client = httpx.AsyncClient(
            base_url=f"http://127.0.0.1:{port}", headers={"Host": HOST}, timeout=10
        )
        opened.append((gw, server, client))
        return gw, client, clock

    yield start
    for gw, server, client in opened:
        await client.aclose()
        server.close()
        await gw.close()


@pytest.fixture
def backend() -> Iterator[int]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), Echo)
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    yield server.server_address[1]
    server.shutdown()
    server.server_close()


@pytest.fixture
def redis_server(tmp_path: Path) -> Iterator[RedisServer]:
    with RedisServer(tmp_path / "redis") as server:
        yield server
