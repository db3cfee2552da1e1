"""Upstreams with DNS discovery, against a real DNS server (dnsmasq, tests/support/dnsserver.py)
and real HTTP backends on loopback addresses: traffic goes where DNS says, follows a change
of the records within their TTL, keeps going when the server answers nothing or is down,
SRV records' priorities and weights, and what /status and /metrics show."""

from __future__ import annotations

import asyncio
import contextlib
import re
from collections import Counter
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from pydantic import ValidationError

from portico.core.settings import Settings
from portico.gateway.balancing.balancer import Balancer
from portico.gateway.balancing.nodes import Node, PickContext
from portico.gateway.discovery.pacing import Pacer
from portico.gateway.discovery.sources.dns import SrvRecord, srv_nodes
from portico.gateway.discovery.watch import Bounds
from portico.gateway.environment_runtime import UpstreamRuntime
from portico.gateway.gateway import Gateway
from portico.gateway.health.checker import HealthChecker
from portico.gateway.http.server import serve
from portico.gateway.node_options import GatewayOptions
from portico.gateway.snapshot import SnapshotUpstream, content_hash
from portico.gateway.status import status_handler
from portico.runner import gateway_options
from tests.support.dnsserver import DnsServer, Srv
from tests.support.waiting import eventually

HOST = "api.example.com"
UPSTREAM = "up-discovered"


class Backend:
    """An HTTP/1.1 server on ``host:port`` answering every request with its own address (or
    ``status``), keeping connections alive."""

    def __init__(self, host: str) -> None:
        self.host = host
        self.port = 0
        self.status = 200
        self._server: asyncio.Server | None = None
        self._writers: set[asyncio.StreamWriter] = set()

    @property
    def address(self) -> str:
        return f"{self.host}:{self.port}"

    @property
    def node(self) -> Node:
        return Node(self.host, self.port)

    async def start(self, port: int = 0) -> None:
        self._server = await asyncio.start_server(self._serve, self.host, port)
        self.port = self._server.sockets[0].getsockname()[1]

    async def stop(self) -> None:
        if self._server is not None:
            self._server.close()
            for writer in list(self._writers):  # kept-alive connections end with it
                writer.transport.abort()
            await self._server.wait_closed()
            self._server = None

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._writers.add(writer)
        with contextlib.suppress(asyncio.IncompleteReadError, ConnectionError):
            while True:
                await reader.readuntil(b"\r\n\r\n")
                body = self.address.encode()
                writer.write(
                    f"HTTP/1.1 {self.status} X\r\ncontent-length: {len(body)}\r\n\r\n".encode()
                    + body
                )
                await writer.drain()
        self._writers.discard(writer)
        writer.close()


@pytest.fixture
async def backends() -> AsyncIterator[list[Backend]]:
    """Backends the test starts (``start_on_one_port``), stopped after it."""
    made: list[Backend] = []
    yield made
    for backend in made:
        await backend.stop()


async def start_on_one_port(made: list[Backend], *hosts: str) -> list[Backend]:
    """A backend on each of ``hosts``, all on the same port (an A/AAAA name has one port)."""
    for _ in range(5):
        started: list[Backend] = []
        try:
            for host in hosts:
                backend = Backend(host)
                await backend.start(started[0].port if started else 0)
                started.append(backend)
        except OSError:  # the port is taken on another address: try another one
            for backend in started:
                await backend.stop()
            continue
        made.extend(started)
        return started
    raise AssertionError(f"no port free on all of {hosts}")


@pytest.fixture(scope="module")
def dns(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DnsServer]:
    with DnsServer(tmp_path_factory.mktemp("dns"), ttl=1) as server:
        yield server


def served_gateway(resolver: str) -> Gateway:
    options = GatewayOptions(resolvers=(resolver,), discovery_min_ttl=0.5, discovery_max_ttl=5)
    return Gateway(options=options)


@contextlib.asynccontextmanager
async def running(gw: Gateway) -> AsyncIterator[tuple[httpx.AsyncClient, httpx.AsyncClient]]:
    """``gw`` on loopback with its status listener: a client for each; closed after."""
    traffic = await serve(gw.handle, "127.0.0.1", 0)
    status = await serve(status_handler(gw), "127.0.0.1", 0)
    try:
        async with (
            httpx.AsyncClient(
                base_url=f"http://127.0.0.1:{traffic.sockets[0].getsockname()[1]}",
                headers={"Host": HOST},
                timeout=10,
            ) as client,
            httpx.AsyncClient(
                base_url=f"http://127.0.0.1:{status.sockets[0].getsockname()[1]}", timeout=10
            ) as monitor,
        ):
            yield client, monitor
    finally:
        traffic.close()
        status.close()
        await gw.close()


def snapshot(specification: dict[str, Any], version: int = 1) -> dict[str, Any]:
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
                "upstream_id": UPSTREAM,
                "plugins": [],
            }
        ],
        "upstreams": {
            UPSTREAM: {"id": UPSTREAM, "name": "discovered", "specification": specification}
        },
        "consumers": [],
        "global_plugins": [],
    }
    document["content_hash"] = content_hash(document)
    return document


def discovered(service_name: str, **more: Any) -> dict[str, Any]:
    return {"discovery": {"type": "dns", "serviceName": service_name}, **more}


async def served_by(client: httpx.AsyncClient, requests: int) -> Counter[str]:
    answers: Counter[str] = Counter()
    for _ in range(requests):
        response = await client.get("/x")
        assert response.status_code == 200, response.text
        answers[response.text] += 1
    return answers


ACTIVE_CHECKS = {
    "active": {
        "http_path": "/health",
        "healthy": {"interval": 1, "successes": 1},
        "unhealthy": {"interval": 1, "http_failures": 1, "http_statuses": [500]},
    }
}


async def test_traffic_goes_where_dns_says_and_follows_a_change_keeping_node_state(
    dns: DnsServer, backends: list[Backend]
) -> None:
    first, failing, added = await start_on_one_port(backends, "127.0.0.2", "127.0.0.3", "127.0.0.4")
    dns.publish("orders.test", ["127.0.0.2", "127.0.0.3"])
    gw = served_gateway(dns.address)
    async with running(gw) as (client, monitor):
        await gw.apply(snapshot(discovered(f"orders.test:{first.port}", checks=ACTIVE_CHECKS)))
        # the first answer came before the snapshot went into service: no 502 in between
        assert set(await served_by(client, 4)) == {first.address, failing.address}

        failing.status = 500  # its probes fail: the active check takes it out
        checker = gw.health.live()[UPSTREAM]
        await eventually(lambda: not checker.healthy(failing.node), what="127.0.0.3 unhealthy")
        assert set(await served_by(client, 4)) == {first.address}
        upstream = gw.environments["env"].upstreams[UPSTREAM]
        requests_before = {n["host"]: n["requests"] for n in upstream.balancer.snapshot()["nodes"]}

        dns.publish("orders.test", ["127.0.0.2", "127.0.0.3", "127.0.0.4"])
        watcher = gw.discovery.live()[UPSTREAM]
        await eventually(lambda: len(watcher.nodes) == 3, what="the third address discovered")
        # the nodes that stayed kept their state: health (no probe has run since) and figures
        assert not checker.healthy(failing.node)
        figures = {n["host"]: n["requests"] for n in upstream.balancer.snapshot()["nodes"]}
        assert figures["127.0.0.2"] == requests_before["127.0.0.2"] > 0
        assert figures["127.0.0.4"] == 0
        assert set(await served_by(client, 6)) == {first.address, added.address}

        status = (await monitor.get("/status")).json()["discovery"][UPSTREAM]
        assert status["serviceName"] == f"orders.test:{first.port}"
        assert [n["host"] for n in status["nodes"]] == ["127.0.0.2", "127.0.0.3", "127.0.0.4"]
        assert status["error"] is None and status["ttl"] == 1
        metrics = (await monitor.get("/metrics")).text
        for backend in (first, failing, added):
            assert (
                f'portico_upstream_discovered_node{{node="{backend.address}",priority="0",'
                f'service="dns:orders.test:{first.port}",upstream="{UPSTREAM}",weight="1"}} 1.0'
            ) in metrics
        assert f'portico_upstream_discovery_failures{{service="dns:orders.test:{first.port}"' in (
            metrics
        )

        # one address left: the others get no more traffic
        dns.publish("orders.test", ["127.0.0.4"])
        await eventually(lambda: len(watcher.nodes) == 1, what="two addresses gone")
        assert set(await served_by(client, 3)) == {added.address}


async def test_the_last_good_nodes_serve_through_an_empty_answer_and_a_dns_outage(
    dns: DnsServer, backends: list[Backend]
) -> None:
    [backend] = await start_on_one_port(backends, "127.0.0.2")
    dns.publish("stock.test", ["127.0.0.2"])
    gw = served_gateway(dns.address)
    async with running(gw) as (client, monitor):
        await gw.apply(snapshot(discovered(f"stock.test:{backend.port}")))
        assert await served_by(client, 2) == {backend.address: 2}
        watcher = gw.discovery.live()[UPSTREAM]

        dns.publish("stock.test", [])  # NXDOMAIN from now on
        await eventually(lambda: watcher.error == "the answer holds no node", what="empty")
        assert await served_by(client, 2) == {backend.address: 2}

        dns.stop()
        try:
            await eventually(
                lambda: watcher.error is not None and watcher.error.startswith("A stock.test:"),
                what="the resolver's failure recorded",
            )
            assert await served_by(client, 2) == {backend.address: 2}
            status = (await monitor.get("/status")).json()["discovery"][UPSTREAM]
            assert status["nodes"] == [
                {"host": "127.0.0.2", "port": backend.port, "weight": 1, "priority": 0}
            ]
            assert status["failures"] >= 2
            metrics = (await monitor.get("/metrics")).text
            assert f'portico_upstream_discovered_node{{node="{backend.address}"' in metrics
        finally:
            dns.start()  # the same port: the module's other tests use it

        dns.publish("stock.test", ["127.0.0.2"])  # answering again: the failures are over
        await eventually(lambda: watcher.error is None and watcher.failures == 0, timeout=20)


async def test_srv_records_give_ports_weights_and_the_preferred_priority(
    tmp_path: Path, backends: list[Backend]
) -> None:
    heavy, light, standby = [Backend(host) for host in ("127.0.0.5", "127.0.0.6", "127.0.0.7")]
    for backend in (heavy, light, standby):
        await backend.start()
        backends.append(backend)
    name = "_http._tcp.shop.test"
    records = [
        Srv(name, "heavy.shop.test", heavy.port, priority=10, weight=3),
        Srv(name, "light.shop.test", light.port, priority=10, weight=1),
        Srv(name, "standby.shop.test", standby.port, priority=20, weight=1),
    ]
    with DnsServer(tmp_path / "dns", ttl=1, srv=records) as server:
        for backend, target in zip((heavy, light, standby), records, strict=True):
            server.publish(target.target, [backend.host])
        gw = served_gateway(server.address)
        passive = {"passive": {"type": "tcp", "unhealthy": {"tcp_failures": 1}}}
        async with running(gw) as (client, monitor):
            await gw.apply(snapshot(discovered(name, checks=passive)))
            status = (await monitor.get("/status")).json()["discovery"][UPSTREAM]
            assert status["nodes"] == [
                {"host": "127.0.0.5", "port": heavy.port, "weight": 300, "priority": -10},
                {"host": "127.0.0.6", "port": light.port, "weight": 100, "priority": -10},
                {"host": "127.0.0.7", "port": standby.port, "weight": 100, "priority": -20},
            ]
            # the lowest SRV priority takes all the traffic, shared by weight (3:1)
            assert await served_by(client, 8) == {heavy.address: 6, light.address: 2}

            # both down: the request is retried on the next priority, which serves from then on
            await heavy.stop()
            await light.stop()
            assert await served_by(client, 4) == {standby.address: 4}


async def test_srv_weights_follow_rfc_2782() -> None:
    addresses = {"a": ["10.0.0.1"], "b": ["10.0.0.2", "10.0.0.3"], "z": ["10.0.0.9"]}
    nodes = await srv_nodes(
        [
            SrvRecord(priority=0, weight=2, port=80, target="a"),
            SrvRecord(priority=0, weight=1, port=81, target="B"),  # names match in any case
            SrvRecord(priority=0, weight=0, port=82, target="z"),  # a very small chance
            SrvRecord(priority=5, weight=0, port=83, target="a"),  # all 0: equal chances
            SrvRecord(priority=5, weight=0, port=84, target="b"),
            SrvRecord(priority=5, weight=3, port=85, target="missing"),  # no address: no node
        ],
        addresses,
    )
    assert [(n.host, n.port, n.weight, n.priority) for n in nodes] == [
        ("10.0.0.1", 80, 200, 0),
        ("10.0.0.2", 81, 50, 0),  # the target's weight shared by its addresses
        ("10.0.0.3", 81, 50, 0),
        ("10.0.0.9", 82, 1, 0),
        ("10.0.0.1", 83, 100, -5),
        ("10.0.0.2", 84, 50, -5),
        ("10.0.0.3", 84, 50, -5),
    ]
    # one address through two records of a priority: one node, weights added; through two
    # priorities: the preferred one's
    merged = await srv_nodes(
        [
            SrvRecord(0, 1, 80, "a"),
            SrvRecord(0, 2, 80, "a"),
            SrvRecord(1, 9, 80, "a"),
        ],
        addresses,
    )
    assert [(n.host, n.port, n.weight, n.priority) for n in merged] == [("10.0.0.1", 80, 300, 0)]


def test_a_ttl_is_held_within_the_bounds_and_failures_back_off() -> None:
    bounds = Bounds(min_ttl=2, max_ttl=60)
    assert [bounds.hold(ttl) for ttl in (0, 1, 30, 3600, None)] == [2, 2, 30, 60, 60]
    assert [bounds.retry(failures) for failures in (1, 2, 3, 5, 6, 20)] == [2, 4, 8, 32, 60, 60]


def test_the_node_settings_reach_the_gateway(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``PORTICO_GATEWAY_RESOLVERS`` and the TTL bounds, as an operator sets them, are what
    ``portico serve`` and ``portico gateway`` give their gateway; a bad one names itself."""
    for name, value in {
        "PORTICO_DATA_DIR": str(tmp_path),
        "PORTICO_SECRET_KEY": "k" * 48,
        "PORTICO_GATEWAY_RESOLVERS": '["127.0.0.1:5353", "::1", "[fd00::53]:53"]',
        "PORTICO_GATEWAY_DISCOVERY_MIN_TTL_SECONDS": "2",
        "PORTICO_GATEWAY_DISCOVERY_MAX_TTL_SECONDS": "30",
    }.items():
        monkeypatch.setenv(name, value)
    options = gateway_options(Settings(_env_file=None))  # type: ignore[call-arg]
    assert options.resolvers == ("127.0.0.1:5353", "[::1]:53", "[fd00::53]:53")
    assert (options.discovery_min_ttl, options.discovery_max_ttl) == (2, 30)
    assert Gateway(options=options).discovery.bounds == Bounds(2, 30)

    monkeypatch.setenv("PORTICO_GATEWAY_RESOLVERS", '["dns.internal:53"]')
    with pytest.raises(ValidationError, match=re.escape("RESOLVERS: 'dns.internal:53' must")):
        Settings(_env_file=None)  # type: ignore[call-arg]


async def test_a_discovery_type_this_gateway_lacks_leaves_only_that_upstream_without_nodes(
    dns: DnsServer,
) -> None:
    """A snapshot from a newer control plane may name a source this gateway does not have:
    the snapshot still serves, and that upstream's routes answer 503 (no node to try)."""
    gw = served_gateway(dns.address)
    async with running(gw) as (client, _):
        await gw.apply(snapshot({"discovery": {"type": "consul", "serviceName": "orders"}}))
        assert gw.environments["env"].discovered == {}
        assert (await client.get("/x")).status_code == 503


def node_figures(gw: Gateway) -> dict[tuple[str, int], dict[str, Any]]:
    """The balancer's figures of the upstream, by (host, port)."""
    balancer = gw.environments["env"].upstreams[UPSTREAM].balancer
    return {(n["host"], n["port"]): n for n in balancer.snapshot()["nodes"]}


def health_of(gw: Gateway, backend: Backend) -> dict[str, Any]:
    for node in gw.health.live()[UPSTREAM].snapshot()["nodes"]:
        if (node["host"], node["port"]) == (backend.host, backend.port):
            return dict(node)
    raise AssertionError(f"{backend.address} is not a target of the health checker")


async def test_srv_records_changing_over_time_keep_the_state_of_nodes_that_stayed(
    tmp_path: Path, backends: list[Backend]
) -> None:
    """Against dnsmasq, SRV records change three times (dnsmasq restarts with each set: it
    reads them at start): a target added and a weight changed, then a target removed, a port
    and a priority changed. Traffic follows each set, the lowest priority value takes all of
    it while one of its nodes is healthy, and the nodes that stayed keep their balancing
    figures and their health (a passive failure that no traffic can undo)."""
    hosts = ("127.0.0.9", "127.0.0.10", "127.0.0.11", "127.0.0.12", "127.0.0.12")
    one, two, three, standby, moved = [Backend(host) for host in hosts]  # moved: another port
    for backend in (one, two, three, standby, moved):
        await backend.start()
        backends.append(backend)
    name = "_http._tcp.fleet.test"
    targets = {one: "one.fleet.test", two: "two.fleet.test", three: "three.fleet.test"}
    targets |= {standby: "standby.fleet.test", moved: "standby.fleet.test"}

    def srv(backend: Backend, priority: int, weight: int) -> Srv:
        return Srv(name, targets[backend], backend.port, priority=priority, weight=weight)

    first = [srv(one, 10, 1), srv(two, 10, 1), srv(standby, 20, 1)]
    with DnsServer(tmp_path / "dns", ttl=1, srv=first) as server:
        for backend in (one, two, three, standby):
            server.publish(targets[backend], [backend.host])
        gw = served_gateway(server.address)
        passive = {"passive": {"unhealthy": {"http_failures": 1, "http_statuses": [500]}}}
        async with running(gw) as (client, _):
            await gw.apply(snapshot(discovered(name, checks=passive)))
            watcher = gw.discovery.live()[UPSTREAM]

            def nodes() -> set[tuple[str, int, int, int]]:
                return {(n.host, n.port, n.weight, n.priority) for n in watcher.nodes}

            # priority 10 takes everything; the standby (20) nothing while one of it is up
            assert await served_by(client, 4) == {one.address: 2, two.address: 2}

            two.status = 500  # one failed request: passively unhealthy until its cool-off
            for _ in range(4):
                if (await client.get("/x")).status_code == 500:
                    break
            else:
                raise AssertionError("two.fleet.test got no request")
            assert await served_by(client, 3) == {one.address: 3}
            two_health = health_of(gw, two)
            assert not two_health["healthy"] and two_health["reason"].startswith("passive")
            requests_of_one = node_figures(gw)[(one.host, one.port)]["requests"]

            # a target added, a weight changed
            await asyncio.to_thread(
                server.publish_srv,
                [srv(one, 10, 3), srv(two, 10, 1), srv(three, 10, 1), srv(standby, 20, 1)],
            )
            expected = {
                (one.host, one.port, 300, -10),
                (two.host, two.port, 100, -10),
                (three.host, three.port, 100, -10),
                (standby.host, standby.port, 100, -20),
            }
            await eventually(lambda: nodes() == expected, what=lambda: f"{nodes()}: 3 added")
            kept = health_of(gw, two)
            assert not kept["healthy"] and kept["passive"] == two_health["passive"]
            assert (kept["reason"], kept["reports"]) == (
                two_health["reason"],
                two_health["reports"],
            )
            figures = node_figures(gw)
            assert figures[(one.host, one.port)]["requests"] == requests_of_one
            assert figures[(three.host, three.port)]["requests"] == 0
            served = await served_by(client, 8)
            assert served == {one.address: 6, three.address: 2}, served
            requests_of_three = node_figures(gw)[(three.host, three.port)]["requests"]

            # a target removed, the standby's port changed, three's priority now 30: the
            # preferred priority's only node left is unhealthy, so the next one (20) serves,
            # and 30 stays unused while 20 has a healthy node
            await asyncio.to_thread(
                server.publish_srv, [srv(two, 10, 1), srv(three, 30, 1), srv(moved, 20, 1)]
            )
            expected = {
                (two.host, two.port, 100, -10),
                (moved.host, moved.port, 100, -20),
                (three.host, three.port, 100, -30),
            }
            await eventually(lambda: nodes() == expected, what=lambda: f"{nodes()}: 1 gone")
            assert health_of(gw, two)["passive"] == two_health["passive"]
            assert not health_of(gw, two)["healthy"]
            assert set(node_figures(gw)) == {(n[0], n[1]) for n in expected}
            assert await served_by(client, 4) == {moved.address: 4}
            assert node_figures(gw)[(three.host, three.port)]["requests"] == requests_of_three


class TurnClock:
    """A clock for a :class:`Pacer` that moves ``step`` seconds each time it is read: the
    pacer's decisions then depend on how many steps ran, not on the machine's speed."""

    def __init__(self, step: float) -> None:
        self.now = 0.0
        self.step = step

    def __call__(self) -> float:
        self.now += self.step
        return self.now


async def test_the_pacer_lets_other_callbacks_run_once_a_turns_budget_is_spent() -> None:
    pacer = Pacer(seconds=0.001, clock=TurnClock(0.0004))
    ran: list[str] = []
    asyncio.get_running_loop().call_soon(ran.append, "other")
    await pacer.pause()  # the turn begins
    await pacer.pause()  # 0.4 ms later: within the budget, no other callback ran
    assert ran == [] and pacer.waits == 0
    await pacer.pause()  # 0.8 ms: still within
    await pacer.pause()  # 1.2 ms: spent: a later turn, after what was ready
    assert ran == ["other"] and pacer.waits >= 1
    assert pacer.steps == 4


async def test_a_chash_rebuild_of_discovered_nodes_is_paced_and_keeps_node_state() -> None:
    """1,000 nodes under ``chash``: the ring (65,000 points) is made in steps, other
    callbacks run in between; the new balancer keeps the figures of the nodes that stayed,
    the health checker their targets, and it maps a key as a ring made in one go does."""
    passive = {"passive": {"unhealthy": {"http_failures": 1, "http_statuses": [500]}}}
    specification = {"type": "chash", "hashOn": "vars", "key": "remote_addr", "checks": passive}
    before = tuple(Node(f"10.1.{i // 250}.{i % 250}", 8080) for i in range(10))
    health = HealthChecker(UPSTREAM, specification, nodes=before)
    runtime = UpstreamRuntime.build(
        SnapshotUpstream(id=UPSTREAM, name="ring", specification=specification),
        Balancer.build(specification, health, nodes=before),
        health,
        discovered=before,
    )
    kept = runtime.balancer.pick(PickContext(client_ip="192.0.2.1"))
    assert kept is not None
    runtime.balancer.started(kept)
    health.report(kept, status=500)  # passively unhealthy: nothing in the test undoes it
    assert not health.healthy(kept)

    pacer = Pacer(seconds=0.001, clock=TurnClock(0.0002))
    turns = 0

    async def count_turns() -> None:
        nonlocal turns
        while True:
            turns += 1
            await asyncio.sleep(0)

    counter = asyncio.get_running_loop().create_task(count_turns())
    nodes = (*before, *(Node(f"10.2.{i // 250}.{i % 250}", 8080) for i in range(990)))
    try:
        await runtime.use_nodes(nodes, pacer.pause)
    finally:
        counter.cancel()
    assert pacer.steps > 300 and pacer.waits > 50  # the ring went in steps, between turns
    assert turns > 50  # other callbacks ran while it was made
    assert runtime.discovered == nodes
    figures = {(n["host"], n["port"]): n for n in runtime.balancer.snapshot()["nodes"]}
    assert len(figures) == 1000
    assert figures[(kept.host, kept.port)]["in_flight"] == 1  # carried over
    targets = {(n["host"], n["port"]): n for n in health.snapshot()["nodes"]}
    assert len(targets) == 1000
    assert not targets[(kept.host, kept.port)]["healthy"]  # its target kept its state
    assert targets[(kept.host, kept.port)]["reports"] == 1
    in_one_go = Balancer.build(specification, health, nodes=nodes)
    for client in ("198.51.100.7", "203.0.113.9", "192.0.2.200"):
        context = PickContext(client_ip=client)
        assert runtime.balancer.pick(context) == in_one_go.pick(context)
