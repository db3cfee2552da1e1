"""The gateway under change and failure, through real sockets: health checks take a dead node
out and bring it back while clients see no error; 30 configuration swaps under continuous load
lose no request; a route whose upstream is missing answers 502 instead of guessing."""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest

from portico.gateway.gateway import Gateway
from portico.gateway.http.server import serve
from portico.gateway.snapshot import content_hash
from tests.gateway import test_health
from tests.gateway.test_health import Backend, BackendFactory, active
from tests.gateway.test_pipeline import HOST, plugin, snapshot
from tests.support.waiting import eventually

backends = test_health.backends  # the fixture


def document(
    backends: list[Backend], *, version: int = 1, checks: dict[str, Any] | None = None, **route: Any
) -> dict[str, Any]:
    doc = snapshot(0, route.pop("plugins", []), version=version)
    spec: dict[str, Any] = {
        "nodes": [
            {"host": "127.0.0.1", "port": b.port, "weight": route.pop(f"weight{i}", 1)}
            for i, b in enumerate(backends)
        ]
    }
    if checks:
        spec["checks"] = checks
    doc["upstreams"]["up"]["specification"] = spec
    doc["routes"][0].update(route)
    doc["content_hash"] = content_hash(doc)
    return doc


def traffic(backend: Backend) -> int:
    """Requests the backend got from clients (health probes ask for /healthz)."""
    return sum(1 for r in backend.requests if r.startswith(b"GET /x "))


@pytest.fixture
async def gateway() -> AsyncIterator[tuple[Gateway, str]]:
    gw = Gateway()
    server = await serve(gw.handle, "127.0.0.1", 0)
    yield gw, f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}"
    server.close()
    await gw.close()


async def test_health_checks_take_a_dead_node_out_and_bring_it_back(
    gateway: tuple[Gateway, str], backends: BackendFactory
) -> None:
    gw, url = gateway
    first, second = await backends("ok"), await backends("ok")
    await gw.apply(document([first, second], checks={"active": active()}))
    checker = gw.health.live()["up"]
    async with httpx.AsyncClient(base_url=url, headers={"Host": HOST}, timeout=10) as client:

        async def burst(count: int = 20) -> None:
            statuses = [(await client.get("/x")).status_code for _ in range(count)]
            assert statuses == [200] * count

        await burst()
        assert traffic(first) and traffic(second)  # both in rotation

        await first.down()
        await burst()  # before the verdict: connect failures are retried on the other node
        await eventually(lambda: not checker.healthy(first.node))
        await burst()

        await first.up()  # same port
        await eventually(lambda: checker.healthy(first.node))
        seen = len(first.requests)
        await burst()
        assert len(first.requests) > seen  # back in rotation (probes alone come 1 s apart)
        assert (
            any(not r.startswith(b"GET / HTTP") for r in first.requests[seen:])
            or len(first.requests) - seen >= 5
        )


async def test_thirty_config_swaps_under_continuous_load_lose_no_request(
    gateway: tuple[Gateway, str], backends: BackendFactory
) -> None:
    gw, url = gateway
    first, second = await backends("ok"), await backends("ok")
    await gw.apply(document([first, second]))
    statuses: list[int] = []
    failures: list[BaseException] = []
    stop = asyncio.Event()

    async def client_loop() -> None:
        async with httpx.AsyncClient(base_url=url, headers={"Host": HOST}, timeout=10) as client:
            while not stop.is_set():
                try:
                    statuses.append((await client.get("/orders/1")).status_code)
                except httpx.HTTPError as error:
                    failures.append(error)

    workers = [asyncio.create_task(client_loop()) for _ in range(6)]
    progress: list[int] = []
    variants = itertools.cycle(
        [
            {"weight0": 5, "weight1": 1},
            {"plugins": [plugin("proxy-rewrite", 1008, headers={"set": {"x-v": "2"}})]},
            {"uri": "/orders/*"},
            {"weight0": 1, "weight1": 5},
            {"plugins": [plugin("limit-count", 210, count=1_000_000, time_window=60)]},
        ]
    )

    async def load_moves_past(count: int) -> None:
        """Until a request completes after the last swap (polled: no timing asserted)."""
        await eventually(
            lambda: len(statuses) > count or failures,
            interval=0.005,
            what=f"a request answered after the first {count}",
        )

    for version in range(2, 32):
        await load_moves_past(progress[-1] if progress else 0)
        progress.append(len(statuses))
        await gw.apply(document([first, second], version=version, **dict(next(variants))))
    await load_moves_past(progress[-1])  # and after the last swap
    stop.set()
    await asyncio.gather(*workers)
    assert gw.versions() == {"env": 31}
    assert failures == []
    assert statuses and set(statuses) == {200}
    # the load really ran across the swaps, not before or after them
    assert all(later > earlier for earlier, later in itertools.pairwise(progress))


async def test_a_route_without_its_upstream_answers_502(
    gateway: tuple[Gateway, str], backends: BackendFactory
) -> None:
    gw, url = gateway
    ok = await backends("ok")
    doc = document([ok])
    doc["routes"][0]["upstream_id"] = "gone"
    doc["content_hash"] = content_hash(doc)
    await gw.apply(doc)
    async with httpx.AsyncClient(base_url=url, headers={"Host": HOST}) as client:
        response = await client.get("/x")
    assert response.status_code == 502
    assert ok.requests == []
