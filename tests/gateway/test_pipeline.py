"""The request pipeline over real sockets: a Gateway given a snapshot, its HTTP engine on
loopback, a real backend. Plugin traffic behaviour is tested here, one snapshot per case."""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import re
import threading
from collections.abc import AsyncIterator, Iterator
from http.server import ThreadingHTTPServer
from typing import Any

import httpx
import pytest

from portico.gateway.environment_runtime import SnapshotRefused
from portico.gateway.gateway import Gateway, RequestIds
from portico.gateway.http.server import serve
from portico.gateway.snapshot import content_hash
from tests.e2e.test_gateway import Echo

HOST = "api.example.com"


@pytest.fixture
def backend() -> Iterator[int]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), Echo)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server.server_address[1]
    server.shutdown()
    server.server_close()


def snapshot(backend: int, plugins: list[dict[str, Any]], version: int = 1) -> dict[str, Any]:
    document: dict[str, Any] = {
        "version": version,
        "generated_at": "2026-01-01T00:00:00+00:00",
        "org_id": "org",
        "environment_id": "env",
        "environment_name": "test",
        "gateway_hosts": [HOST],
        "routes": [
            {
                "id": "rev:0",
                "api_id": "api",
                "api_name": "api",
                "revision_id": "rev",
                "revision_number": 1,
                "name": "all",
                "uri": "/*",
                "methods": [],
                "hosts": [],
                "priority": 0,
                "status": 1,
                "upstream_id": "up",
                "plugins": plugins,
            }
        ],
        "upstreams": {
            "up": {
                "id": "up",
                "name": "echo",
                "specification": {"nodes": [{"host": "127.0.0.1", "port": backend, "weight": 1}]},
            }
        },
        "consumers": [],
        "global_plugins": [],
    }
    document["content_hash"] = content_hash(document)
    return document


def plugin(name: str, order: int, **config: Any) -> dict[str, Any]:
    return {"name": name, "scope": "route", "order": order, "config": config}


@contextlib.asynccontextmanager
async def running(gw: Gateway) -> AsyncIterator[httpx.AsyncClient]:
    """``gw`` on its HTTP engine on loopback, and a client for its gateway host; closed after."""
    server = await serve(gw.handle, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    try:
        async with httpx.AsyncClient(
            base_url=f"http://127.0.0.1:{port}", headers={"Host": HOST}, timeout=10
        ) as client:
            yield client
    finally:
        server.close()
        await gw.close()


@pytest.fixture
async def gateway() -> AsyncIterator[tuple[Gateway, httpx.AsyncClient]]:
    gw = Gateway()
    async with running(gw) as client:
        yield gw, client


async def test_ip_restriction_admits_only_the_listed(
    gateway: tuple[Gateway, httpx.AsyncClient], backend: int
) -> None:
    gw, client = gateway
    await gw.apply(snapshot(backend, [plugin("ip-restriction", 10, whitelist=["10.0.0.0/8"])]))
    refused = await client.get("/x")
    assert refused.status_code == 403
    assert refused.json() == {"message": "Your IP address is not allowed"}
    await gw.apply(
        snapshot(backend, [plugin("ip-restriction", 10, whitelist=["127.0.0.1/32"])], version=2)
    )
    assert (await client.get("/x")).status_code == 200
    await gw.apply(
        snapshot(backend, [plugin("ip-restriction", 10, blacklist=["127.0.0.0/8"])], version=3)
    )
    assert (await client.get("/x")).status_code == 403


@pytest.mark.parametrize(
    "path",
    [
        "/admin/users",
        "/ADMIN/users",  # case-insensitive rule
        "//admin/users",
        "/public/../admin/users",
        "/%61dmin/users",  # percent-encoded unreserved letter
        "/./admin/./users",
    ],
)
async def test_uri_blocker_cannot_be_dodged(
    gateway: tuple[Gateway, httpx.AsyncClient], backend: int, path: str
) -> None:
    gw, client = gateway
    await gw.apply(
        snapshot(
            backend,
            [
                plugin(
                    "uri-blocker",
                    20,
                    block_rules=["^/admin"],
                    rejected_code=403,
                    case_insensitive=True,
                )
            ],
        )
    )
    # the path exactly as written, on a raw socket (HTTP clients normalise some of it)
    assert await raw_status(client, path) == 403, path
    assert (await client.get("/public/ok")).status_code == 200


async def raw_status(client: httpx.AsyncClient, path: str) -> int:
    host, port = client.base_url.host, client.base_url.port
    assert port is not None
    reader, writer = await asyncio.open_connection(host, port)
    writer.write(f"GET {path} HTTP/1.1\r\nHost: {HOST}\r\nConnection: close\r\n\r\n".encode())
    await writer.drain()
    status_line = await reader.readline()
    writer.close()
    await writer.wait_closed()
    return int(status_line.split()[1])


async def test_a_plugin_this_gateway_does_not_know_fails_closed(
    gateway: tuple[Gateway, httpx.AsyncClient], backend: int
) -> None:
    """A snapshot from a newer control plane may name a plugin this gateway lacks: its
    routes refuse (503) rather than serve without it."""
    gw, client = gateway
    await gw.apply(snapshot(backend, [plugin("plugin-of-a-newer-release", 50)]))
    response = await client.get("/x")
    assert response.status_code == 503
    assert "plugin-of-a-newer-release" in response.json()["error_msg"]


async def test_a_broken_snapshot_is_refused_whole_and_the_previous_keeps_serving(
    gateway: tuple[Gateway, httpx.AsyncClient], backend: int
) -> None:
    gw, client = gateway
    await gw.apply(snapshot(backend, []))
    assert (await client.get("/x")).status_code == 200
    broken = snapshot(backend, [plugin("limit-count", 210, count=-1, time_window=60)], version=2)
    with pytest.raises(SnapshotRefused):
        await gw.apply(broken)
    assert gw.versions() == {"env": 1}
    assert (await client.get("/x")).status_code == 200


async def test_consumer_scope_plugins_run_in_the_response_and_log_phases_too(
    gateway: tuple[Gateway, httpx.AsyncClient], backend: int
) -> None:
    gw, client = gateway
    document = snapshot(backend, [plugin("key-auth", 100)])
    rewrite = {"name": "response-rewrite", "scope": "consumer", "order": 899}
    document["consumers"] = [
        {
            "id": "c1",
            "username": "alice",
            "credentials": {"key-auth": {"key_hash": hashlib.sha256(b"alice-key").hexdigest()}},
            "plugins": [{**rewrite, "config": {"headers": {"set": {"x-seen-by": "alice"}}}}],
        }
    ]
    document["content_hash"] = content_hash(document)
    await gw.apply(document)
    logged: list[str] = []
    gw.observers.append(
        lambda _env, ctx: logged.append(ctx.consumer.username if ctx.consumer else "")
    )
    response = await client.get("/x", headers={"apikey": "alice-key"})
    assert response.status_code == 200
    assert response.headers["x-seen-by"] == "alice"
    anonymous = await client.get("/x")
    assert anonymous.status_code == 401
    assert "x-seen-by" not in anonymous.headers
    assert logged == ["alice", ""]


async def test_every_request_gets_its_own_request_id_unless_it_brings_one(
    gateway: tuple[Gateway, httpx.AsyncClient], backend: int
) -> None:
    gw, client = gateway
    await gw.apply(snapshot(backend, []))
    seen: set[str] = set()
    for _ in range(RequestIds.BATCH + 10):  # (more than one batch of random bytes)
        answer = await client.get("/x")
        request_id = answer.headers["x-request-id"]
        assert re.fullmatch(r"[0-9a-f]{32}", request_id)
        assert answer.json()["headers"]["x-request-id"] == request_id  # the backend saw it too
        seen.add(request_id)
    assert len(seen) == RequestIds.BATCH + 10
    brought = await client.get("/x", headers={"X-Request-Id": "trace-7.a:b"})
    assert brought.headers["x-request-id"] == "trace-7.a:b"
    assert brought.json()["headers"]["x-request-id"] == "trace-7.a:b"
    refused = await client.get("/x", headers={"X-Request-Id": "bad id;drop"})
    assert re.fullmatch(r"[0-9a-f]{32}", refused.headers["x-request-id"])
