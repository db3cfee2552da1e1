"""Health checks against real backends on 127.0.0.1: active probes (http, https, tcp), passive
reports, both combined, the probe concurrency bound, passive-only re-admission, the
checker registry, and the balancer steering around what the checker finds."""

from __future__ import annotations

import asyncio
import datetime
import ipaddress
import ssl
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from portico.gateway.balancing.balancer import Balancer
from portico.gateway.balancing.nodes import Node, PickContext
from portico.gateway.health.checker import HealthChecker
from portico.gateway.health.config import PassiveConfig
from portico.gateway.health.probe import ProbeOutcome, ProbeResult, parse_status_line, probe
from portico.gateway.health.state import classify_probe, classify_report
from tests.support.waiting import eventually

Mode = Literal["ok", "error", "hang", "garbage", "close"]


@dataclass
class Gauge:
    """Connections being served, across backends."""

    open: int = 0
    max_open: int = 0


class Backend:
    """A tiny HTTP server on 127.0.0.1: answers 200 (``ok``) or 500 (``error``), hangs without
    answering (``hang``), answers garbage, closes at once, or is not listening (:meth:`down`).
    """

    def __init__(self, gauge: Gauge | None = None, tls: ssl.SSLContext | None = None) -> None:
        self.mode: Mode = "ok"
        self.delay = 0.0
        self.port = 0
        self.requests: list[bytes] = []
        self.gauge = gauge or Gauge()
        self._tls = tls
        self._server: asyncio.Server | None = None
        self._writers: set[asyncio.StreamWriter] = set()

    @property
    def node(self) -> Node:
        return Node("127.0.0.1", self.port)

    async def up(self) -> None:
        self._server = await asyncio.start_server(
            self._serve, "127.0.0.1", self.port, reuse_address=True, ssl=self._tls
        )
        self.port = self._server.sockets[0].getsockname()[1]

    async def down(self) -> None:
        if self._server is not None:
            self._server.close()
            for writer in list(self._writers):
                writer.transport.abort()
            await self._server.wait_closed()
            self._server = None

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._writers.add(writer)
        gauge = self.gauge
        gauge.open += 1
        gauge.max_open = max(gauge.max_open, gauge.open)
        counted = True
        try:
            if self.mode == "close":
                return
            self.requests.append(await reader.readuntil(b"\r\n\r\n"))
            if self.delay:
                await asyncio.sleep(self.delay)  # (the behaviour: a backend that answers late)
            if self.mode == "hang":
                await reader.read()  # until the prober gives up
                return
            gauge.open -= 1  # before answering: the prober may start another probe at once
            counted = False
            if self.mode == "garbage":
                writer.write(b"SSH-2.0-OpenSSH\r\n")
            else:
                status = b"200 OK" if self.mode == "ok" else b"500 Internal Server Error"
                writer.write(b"HTTP/1.1 " + status + b"\r\nContent-Length: 0\r\n\r\n")
            await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError, ssl.SSLError):
            pass
        finally:
            if counted:
                gauge.open -= 1
            self._writers.discard(writer)
            writer.transport.abort()


BackendFactory = Callable[..., Awaitable[Backend]]


@pytest.fixture
async def backends() -> AsyncIterator[BackendFactory]:
    made: list[Backend] = []

    async def make(
        mode: Mode = "ok", *, gauge: Gauge | None = None, tls: ssl.SSLContext | None = None
    ) -> Backend:
        backend = Backend(gauge, tls)
        backend.mode = mode
        await backend.up()
        made.append(backend)
        return backend

    yield make
    for backend in made:
        await backend.down()


@pytest.fixture
async def checkers() -> AsyncIterator[list[HealthChecker]]:
    """Checkers appended here are stopped after the test."""
    made: list[HealthChecker] = []
    yield made
    for checker in made:
        await checker.stop()


@pytest.fixture(scope="module")
def server_tls(tmp_path_factory: pytest.TempPathFactory) -> ssl.SSLContext:
    """A server TLS context with a fresh self-signed certificate."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "backend.test")])
    now = datetime.datetime.now(datetime.UTC)
    certificate = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(days=1))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(
            x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
            critical=False,
        )
        .sign(key, hashes.SHA256())
    )
    directory: Path = tmp_path_factory.mktemp("tls")
    (directory / "cert.pem").write_bytes(certificate.public_bytes(serialization.Encoding.PEM))
    (directory / "key.pem").write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(directory / "cert.pem", directory / "key.pem")
    return context


def upstream(*backends: Backend, **checks: Any) -> dict[str, Any]:
    return {
        "nodes": [
            {"host": "127.0.0.1", "port": b.port, "weight": 1, "priority": 0} for b in backends
        ],
        "checks": checks,
    }


def active(**overrides: Any) -> dict[str, Any]:
    """Fast active checks: 1 s intervals, two of anything flips a node."""
    settings: dict[str, Any] = {
        "type": "http",
        "http_path": "/healthz",
        "timeout": 1,
        "concurrency": 10,
        "healthy": {"interval": 1, "successes": 2, "http_statuses": [200, 302]},
        "unhealthy": {
            "interval": 1,
            "http_failures": 2,
            "tcp_failures": 2,
            "timeouts": 2,
            "http_statuses": [429, 404, 500, 501, 502, 503, 504, 505],
        },
    }
    return settings | overrides


def node_status(checker: HealthChecker, backend: Backend) -> dict[str, Any]:
    for node in checker.snapshot()["nodes"]:
        if node["port"] == backend.port:
            return dict(node)
    raise AssertionError(f"no node on port {backend.port}")


class FakeClock:
    def __init__(self) -> None:
        self.now = 500.0

    def __call__(self) -> float:
        return self.now


# --- the probe ------------------------------------------------------------------------------


async def test_http_probe_sends_a_minimal_get_and_reads_the_status(
    backends: BackendFactory,
) -> None:
    backend = await backends("ok")
    result = await probe(
        "http",
        "127.0.0.1",
        backend.port,
        seconds=2,
        path="/healthz?x=1",
        host_header="api.internal",
    )
    assert result == ProbeResult(ProbeOutcome.STATUS, status=200)
    request = backend.requests[0].decode()
    assert request.startswith("GET /healthz?x=1 HTTP/1.1\r\n")
    assert "\r\nHost: api.internal\r\n" in request
    assert "\r\nConnection: close\r\n" in request
    backend.mode = "error"
    assert (await probe("http", "127.0.0.1", backend.port, seconds=2)).status == 500


async def test_probe_failures_are_classified(backends: BackendFactory) -> None:
    backend = await backends("hang")
    hung = await probe("http", "127.0.0.1", backend.port, seconds=0.2)
    assert hung.outcome is ProbeOutcome.TIMEOUT
    backend.mode = "garbage"
    garbage = await probe("http", "127.0.0.1", backend.port, seconds=2)
    assert (garbage.outcome, garbage.detail) == (ProbeOutcome.TCP_FAILURE, "bad status line")
    backend.mode = "close"
    closed = await probe("http", "127.0.0.1", backend.port, seconds=2)
    assert closed.outcome is ProbeOutcome.TCP_FAILURE
    port = backend.port
    await backend.down()
    refused = await probe("http", "127.0.0.1", port, seconds=2)
    assert refused.outcome is ProbeOutcome.TCP_FAILURE


async def test_tcp_probe_only_connects(backends: BackendFactory) -> None:
    backend = await backends("hang")
    result = await probe("tcp", "127.0.0.1", backend.port, seconds=2)
    assert result.outcome is ProbeOutcome.CONNECTED
    assert backend.requests == []


async def test_https_probe_does_not_verify_the_certificate(
    backends: BackendFactory, server_tls: ssl.SSLContext
) -> None:
    backend = await backends("ok", tls=server_tls)
    result = await probe("https", "127.0.0.1", backend.port, seconds=2, host_header="x.test")
    assert result == ProbeResult(ProbeOutcome.STATUS, status=200)
    plain = await backends("ok")
    mismatch = await probe("https", "127.0.0.1", plain.port, seconds=0.5)
    assert mismatch.outcome in {ProbeOutcome.TCP_FAILURE, ProbeOutcome.TIMEOUT}


def test_parse_status_line() -> None:
    assert parse_status_line(b"HTTP/1.1 204 No Content\r\n") == 204
    assert parse_status_line(b"HTTP/1.0 302\r\n") == 302
    assert parse_status_line(b"HTTP/2 200\r\n") is None
    assert parse_status_line(b"HTTP/1.1 2000 OK\r\n") is None
    assert parse_status_line(b"") is None


def test_only_listed_statuses_count() -> None:
    checker = HealthChecker("u", {"nodes": [], "checks": {"active": active()}})
    assert checker.active is not None
    thresholds = checker.active.thresholds
    assert classify_probe(ProbeResult(ProbeOutcome.STATUS, 302), thresholds) == "success"
    assert classify_probe(ProbeResult(ProbeOutcome.STATUS, 503), thresholds) == "http_failure"
    assert classify_probe(ProbeResult(ProbeOutcome.STATUS, 401), thresholds) is None
    passive = PassiveConfig.read({})
    assert classify_report(passive, 204, False, False) == "success"
    assert classify_report(passive, 500, False, False) == "http_failure"
    assert classify_report(passive, 404, False, False) is None  # not listed by default
    assert classify_report(passive, None, True, False) == "tcp_failure"
    assert classify_report(passive, None, False, True) == "timeout"
    assert classify_report(PassiveConfig.read({"type": "tcp"}), 500, False, False) == "success"


# --- active checks --------------------------------------------------------------------------


async def test_active_takes_a_dead_node_out_and_brings_it_back(
    backends: BackendFactory, checkers: list[HealthChecker]
) -> None:
    dead, alive = await backends("ok"), await backends("ok")
    checker = HealthChecker("up-1", upstream(dead, alive, active=active()))
    checkers.append(checker)
    await checker.start()
    await eventually(lambda: len(dead.requests) >= 1)
    assert checker.healthy(dead.node)
    await dead.down()
    await eventually(lambda: not checker.healthy(dead.node))
    status = node_status(checker, dead)
    assert status["reason"] == "active: 2 consecutive tcp_failures"
    assert status["probe_failures"] >= 2
    assert checker.healthy(alive.node)
    await dead.up()
    await eventually(lambda: checker.healthy(dead.node))
    assert node_status(checker, dead)["reason"] == "active: 2 consecutive successes"
    probe_request = dead.requests[-1].decode()
    assert probe_request.startswith("GET /healthz HTTP/1.1\r\n")
    assert "\r\nHost: 127.0.0.1\r\n" in probe_request
    assert checker.healthy(alive.node)
    assert node_status(checker, alive)["probes"] >= 3


async def test_active_counts_http_failures_and_timeouts(
    backends: BackendFactory, checkers: list[HealthChecker]
) -> None:
    failing, hanging = await backends("error"), await backends("hang")
    checker = HealthChecker("up-1", upstream(failing, hanging, active=active()))
    checkers.append(checker)
    await checker.start()
    await eventually(
        lambda: not checker.healthy(failing.node) and not checker.healthy(hanging.node)
    )
    assert node_status(checker, failing)["reason"] == "active: 2 consecutive http_failures"
    assert node_status(checker, hanging)["reason"] == "active: 2 consecutive timeouts"
    assert node_status(checker, failing)["last_probe"] == "500"
    failing.mode = hanging.mode = "ok"
    await eventually(lambda: checker.healthy(failing.node) and checker.healthy(hanging.node))


async def test_active_probe_host_and_port_overrides(
    backends: BackendFactory, checkers: list[HealthChecker]
) -> None:
    probed = await backends("ok")
    # the node's own port is not listening: the probe goes to active.port instead
    specification = {
        "nodes": [{"host": "127.0.0.1", "port": 9, "weight": 1, "priority": 0}],
        "checks": {"active": active(port=probed.port, host="api.internal")},
    }
    checker = HealthChecker("up-1", specification)
    checkers.append(checker)
    await checker.start()
    await eventually(lambda: len(probed.requests) >= 3)
    assert "\r\nHost: api.internal\r\n" in probed.requests[0].decode()
    assert checker.healthy(Node("127.0.0.1", 9))


async def test_active_tcp_checks_need_only_a_connect(
    backends: BackendFactory, checkers: list[HealthChecker]
) -> None:
    backend = await backends("hang")  # never answers HTTP, but accepts connections
    checker = HealthChecker("up-1", upstream(backend, active=active(type="tcp")))
    checkers.append(checker)
    await checker.start()
    await eventually(lambda: node_status(checker, backend)["probes"] >= 2)
    assert checker.healthy(backend.node)
    await backend.down()
    await eventually(lambda: not checker.healthy(backend.node))


async def test_active_https_checks(
    backends: BackendFactory, checkers: list[HealthChecker], server_tls: ssl.SSLContext
) -> None:
    secure, plain = await backends("ok", tls=server_tls), await backends("ok")
    checker = HealthChecker("up-1", upstream(secure, plain, active=active(type="https")))
    checkers.append(checker)
    await checker.start()
    await eventually(lambda: not checker.healthy(plain.node))  # no TLS there
    assert checker.healthy(secure.node)
    assert node_status(checker, secure)["last_probe"] == "200"


async def test_probes_respect_the_concurrency_bound(
    backends: BackendFactory, checkers: list[HealthChecker]
) -> None:
    gauge = Gauge()
    slow = [await backends("ok", gauge=gauge) for _ in range(6)]
    for backend in slow:
        backend.delay = 0.2
    checker = HealthChecker("up-1", upstream(*slow, active=active(concurrency=2)))
    checkers.append(checker)
    await checker.start()
    await eventually(lambda: all(len(backend.requests) >= 1 for backend in slow))
    assert gauge.max_open == 2
    assert all(checker.healthy(backend.node) for backend in slow)


async def test_start_and_stop_are_idempotent(
    backends: BackendFactory, checkers: list[HealthChecker]
) -> None:
    backend = await backends("ok")
    checker = HealthChecker("up-1", upstream(backend, active=active()))
    checkers.append(checker)
    await checker.start()
    await checker.start()
    await eventually(lambda: len(backend.requests) >= 1)
    assert checker.probing
    await checker.stop()
    await checker.stop()
    assert not checker.probing
    # a probe stopped in flight may still be read by the backend: count from when none is open
    await eventually(lambda: backend.gauge.open == 0)
    seen = len(backend.requests)
    # (the behaviour: a window that must pass, more than the probe interval, in which no
    # probe comes; an absence has nothing to poll for)
    await asyncio.sleep(1.2)
    assert len(backend.requests) == seen
    passive_only = HealthChecker("up-2", upstream(backend, passive={}))
    await passive_only.start()
    assert not passive_only.probing


async def test_a_stopped_checker_re_admits_its_unhealthy_nodes_by_time(
    backends: BackendFactory, checkers: list[HealthChecker]
) -> None:
    backend = await backends("error")
    clock = FakeClock()
    checker = HealthChecker("up-1", upstream(backend, active=active()), clock=clock)
    checkers.append(checker)
    await checker.start()
    await eventually(lambda: not checker.healthy(backend.node))
    assert node_status(checker, backend)["readmit_in"] is None  # probing brings it back
    await checker.stop()
    assert node_status(checker, backend)["readmit_in"] == 10.0
    clock.now += 10.5
    assert checker.healthy(backend.node)


# --- passive checks -------------------------------------------------------------------------

NODE = Node("10.0.0.1", 80)
OTHER = Node("10.0.0.2", 80)


def passive_checker(clock: FakeClock | None = None, **unhealthy: Any) -> HealthChecker:
    limits = {"http_failures": 3, "tcp_failures": 2, "timeouts": 2} | unhealthy
    specification = {
        "nodes": [{"host": "10.0.0.1", "port": 80}, {"host": "10.0.0.2", "port": 80}],
        "checks": {"passive": {"healthy": {"successes": 2}, "unhealthy": limits}},
    }
    return HealthChecker("up-1", specification, clock=clock or FakeClock())


def test_passive_marks_a_node_unhealthy_after_consecutive_failures() -> None:
    checker = passive_checker()
    assert checker.healthy(NODE)
    for _ in range(2):
        checker.report(NODE, status=500)
    checker.report(NODE, status=200)  # a success resets the failure count
    for _ in range(2):
        checker.report(NODE, status=503)
    assert checker.healthy(NODE)
    checker.report(NODE, status=429)
    assert not checker.healthy(NODE)
    assert checker.healthy(OTHER)
    assert node_status_of(checker, NODE)["reason"] == "passive: 3 consecutive http_failures"


def node_status_of(checker: HealthChecker, node: Node) -> dict[str, Any]:
    return next(
        dict(n) for n in checker.snapshot()["nodes"] if (n["host"], n["port"]) == (node.host, 80)
    )


def test_passive_counts_tcp_failures_and_timeouts() -> None:
    checker = passive_checker()
    checker.report(NODE, tcp_failure=True)
    checker.report(NODE, tcp_failure=True)
    assert not checker.healthy(NODE)
    checker.report(OTHER, timeout=True)
    assert checker.healthy(OTHER)
    checker.report(OTHER, timeout=True)
    assert not checker.healthy(OTHER)


def test_passive_threshold_zero_disables_a_counter() -> None:
    checker = passive_checker(http_failures=0)
    for _ in range(50):
        checker.report(NODE, status=500)
    assert checker.healthy(NODE)
    assert node_status_of(checker, NODE)["reports"] == 50


def test_passive_statuses_in_neither_list_count_for_nothing() -> None:
    checker = passive_checker()
    for _ in range(2):
        checker.report(NODE, status=500)
    checker.report(NODE, status=404)  # neither healthy nor unhealthy by default
    checker.report(NODE, status=500)
    assert not checker.healthy(NODE)


def test_passive_successes_bring_a_node_back() -> None:
    checker = passive_checker()
    checker.report(NODE, tcp_failure=True)
    checker.report(NODE, tcp_failure=True)
    assert not checker.healthy(NODE)
    checker.report(NODE, status=200)  # traffic in panic mode
    assert not checker.healthy(NODE)
    checker.report(NODE, status=204)
    assert checker.healthy(NODE)


def test_passive_only_re_admits_after_the_cool_off() -> None:
    clock = FakeClock()
    checker = passive_checker(clock)
    checker.report(NODE, tcp_failure=True)
    checker.report(NODE, tcp_failure=True)
    version = checker.version
    assert not checker.healthy(NODE)
    assert node_status_of(checker, NODE)["readmit_in"] == 10.0
    clock.now += 9.9
    assert not checker.healthy(NODE)
    assert checker.version == version
    clock.now += 0.2
    assert checker.version != version
    assert checker.healthy(NODE)
    status = node_status_of(checker, NODE)
    assert status["reason"] == "re-admitted after 10s cool-off"
    assert status["passive"] == {
        "successes": 0,
        "http_failures": 0,
        "tcp_failures": 0,
        "timeouts": 0,
    }
    # still failing: the thresholds take it out again
    checker.report(NODE, tcp_failure=True)
    checker.report(NODE, tcp_failure=True)
    assert not checker.healthy(NODE)


def test_report_is_a_no_op_without_passive_checks_and_tracks_new_nodes() -> None:
    silent = HealthChecker("up-1", {"nodes": [{"host": "10.0.0.1", "port": 80}]})
    for _ in range(10):
        silent.report(NODE, tcp_failure=True)
    assert silent.healthy(NODE)
    discovered = HealthChecker(
        "up-2", {"discovery": {"type": "dns", "serviceName": "svc"}, "checks": {"passive": {}}}
    )
    stranger = Node("10.7.7.7", 8080)
    discovered.report(stranger, tcp_failure=True)
    discovered.report(stranger, tcp_failure=True)
    assert not discovered.healthy(stranger)


# --- combined -------------------------------------------------------------------------------


async def test_active_brings_back_a_node_marked_unhealthy_passively(
    backends: BackendFactory, checkers: list[HealthChecker]
) -> None:
    backend = await backends("ok")
    checker = HealthChecker(
        "up-1",
        upstream(backend, active=active(), passive={"unhealthy": {"http_failures": 3}}),
        cool_off=3600,
    )
    checkers.append(checker)
    await checker.start()
    await eventually(lambda: node_status(checker, backend)["probes"] >= 1)
    for _ in range(3):
        checker.report(backend.node, status=500)
    assert not checker.healthy(backend.node)
    status = node_status(checker, backend)
    assert status["reason"] == "passive: 3 consecutive http_failures"
    assert status["readmit_in"] is None  # active probing is what brings it back
    await eventually(lambda: checker.healthy(backend.node))
    assert node_status(checker, backend)["reason"] == "active: 2 consecutive successes"


async def test_passive_failures_take_out_a_node_active_probes_still_pass(
    backends: BackendFactory, checkers: list[HealthChecker]
) -> None:
    backend = await backends("ok")
    checker = HealthChecker(
        "up-1",
        upstream(
            backend,
            active=active(healthy={"interval": 30, "successes": 2}),
            passive={"unhealthy": {"timeouts": 1}},
        ),
    )
    checkers.append(checker)
    await checker.start()
    await eventually(lambda: node_status(checker, backend)["probes"] >= 1)
    checker.report(backend.node, timeout=True)
    assert not checker.healthy(backend.node)
    # now unhealthy: probed every unhealthy.interval (1 s) at once, not after the 30 s
    # healthy.interval already under way
    await eventually(lambda: checker.healthy(backend.node), timeout=10)


# --- the balancer on a live checker -----------------------------------------------------------


async def test_balancer_never_picks_an_unhealthy_node_while_a_healthy_one_exists(
    backends: BackendFactory, checkers: list[HealthChecker]
) -> None:
    a, b, c = await backends("ok"), await backends("ok"), await backends("ok")
    specification = upstream(a, b, c, active=active())
    checker = HealthChecker("up-1", specification)
    checkers.append(checker)
    balancer = Balancer.build(specification, checker)
    ctx = PickContext("192.0.2.1")
    await checker.start()
    await a.down()
    b.mode = "error"
    await eventually(lambda: not checker.healthy(a.node) and not checker.healthy(b.node))
    picked = {balancer.pick(ctx) for _ in range(30)}
    assert picked == {c.node}
    await c.down()
    await eventually(lambda: balancer.panic)
    assert {balancer.pick(ctx) for _ in range(30)} == {a.node, b.node, c.node}
    b.mode = "ok"
    await eventually(lambda: not balancer.panic)
    assert {balancer.pick(ctx) for _ in range(30)} == {b.node}


# --- lifetime across snapshots ----------------------------------------------------------------


def test_a_checker_matches_specifications_with_the_same_checks_and_addresses() -> None:
    base = {
        "type": "roundrobin",
        "nodes": [{"host": "10.0.0.1", "port": 80, "weight": 1, "priority": 0}],
        "checks": {"passive": {"unhealthy": {"tcp_failures": 1}}},
    }
    checker = HealthChecker("up-1", base)
    reweighted = base | {
        "type": "least_conn",
        "retries": 3,
        "nodes": [{"host": "10.0.0.1", "port": 80, "weight": 7, "priority": 2}],
    }
    assert checker.matches(reweighted)
    assert not checker.matches(base | {"checks": {"passive": {}}})
    assert not checker.matches(base | {"nodes": [{"host": "10.0.0.2", "port": 80}]})


async def no_pause() -> None:
    return None


async def test_follow_nodes_keeps_the_state_of_remaining_nodes(
    backends: BackendFactory, checkers: list[HealthChecker]
) -> None:
    a, b = await backends("ok"), await backends("ok")
    checker = HealthChecker(
        "up-1",
        {
            "discovery": {"type": "dns", "serviceName": "svc"},
            "checks": {"active": active(), "passive": {"unhealthy": {"tcp_failures": 1}}},
        },
        nodes=[a.node],
    )
    checkers.append(checker)
    await checker.start()
    await eventually(lambda: len(a.requests) >= 1)
    checker.report(a.node, tcp_failure=True)
    await checker.follow_nodes([a.node, b.node], no_pause)
    assert not checker.healthy(a.node)
    await eventually(lambda: len(b.requests) >= 1)
    await checker.follow_nodes([b.node], no_pause)
    assert [n["port"] for n in checker.snapshot()["nodes"]] == [b.port]
