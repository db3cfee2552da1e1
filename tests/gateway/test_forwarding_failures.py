"""Every failure kind of the forwarding table (``http.forwarding``), as real HTTP through the
gateway as production wires it (``Gateway.handle`` behind ``serve``), against real loopback
backends that fail that way.

A request without a body that finds an idle pooled connection to its node is forwarded by
callbacks (``callback_forward.forward_now``, what production runs for most requests); any
other in a coroutine (``proxy.forward``). The kinds a pooled connection can meet are driven on
both paths: ``callback`` first sends a request the backend answers, which leaves its
connection in the pool, then the one under test on the same client connection; ``coroutine``
sends the one under test first, the pool empty. The other kinds happen only before a
connection is pooled (connecting), with a body (the client's), or before forwarding (no
upstream).
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest

from portico.gateway.context import RequestContext
from portico.gateway.environment_runtime import EnvironmentRuntime
from portico.gateway.gateway import Gateway
from portico.gateway.http.channel import Limits
from portico.gateway.http.errors import (
    BadRequest,
    ClientDisconnected,
    ClientError,
    ConnectFailed,
    ConnectTimeout,
    InvalidResponse,
    PayloadTooLarge,
    RequestTimeout,
    StaleConnection,
    UpstreamError,
    UpstreamReset,
    UpstreamTimeout,
    error_body,
)
from portico.gateway.http.forwarding import ANSWERS, FailureKind, failure_of
from portico.gateway.http.server import serve, shutdown
from portico.gateway.snapshot import content_hash
from tests.gateway.test_pipeline import HOST, snapshot
from tests.support.ports import free_port
from tests.support.waiting import eventually

OK = b"HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\ncontent-length: 2\r\n\r\nok"
PATHS = ["callback", "coroutine"]

#: the kinds each test below drives through the gateway (filled by ``drives``)
DRIVEN: set[FailureKind] = set()


def drives(*kinds: FailureKind) -> Callable[[Any], Any]:
    """Mark a test as the one that drives ``kinds`` through real sockets."""
    DRIVEN.update(kinds)
    return lambda test: test


# -- the table ---------------------------------------------------------------------------


def test_every_failure_kind_has_an_entry_in_the_table() -> None:
    assert set(ANSWERS) == set(FailureKind)
    for kind, row in ANSWERS.items():
        assert 400 <= row.status <= 599, kind
        assert row.blame in {"connect", "timeout", "reset", "client", "no_node", "no_upstream"}
    assert ANSWERS[FailureKind.CLIENT_GONE].status == 499  # (never sent: nobody to tell)


def test_every_failure_kind_is_driven_through_the_gateway() -> None:
    assert set(FailureKind) == DRIVEN


@pytest.mark.parametrize(
    ("error", "kind"),
    [
        (ConnectFailed("refused"), FailureKind.CONNECT_FAILED),
        (ConnectTimeout("slow"), FailureKind.CONNECT_TIMEOUT),
        (UpstreamTimeout("read"), FailureKind.UPSTREAM_TIMEOUT),
        (UpstreamReset("closed"), FailureKind.UPSTREAM_RESET),
        (StaleConnection("closed while idle"), FailureKind.UPSTREAM_RESET),
        (InvalidResponse("nonsense"), FailureKind.INVALID_RESPONSE),
        (UpstreamError("a body that lied"), FailureKind.UPSTREAM_RESET),
        (BadRequest("framing"), FailureKind.BAD_REQUEST),
        (ClientError("other"), FailureKind.BAD_REQUEST),
        (RequestTimeout("slow body"), FailureKind.REQUEST_TIMEOUT),
        (PayloadTooLarge("big"), FailureKind.PAYLOAD_TOO_LARGE),
        (ClientDisconnected("gone"), FailureKind.CLIENT_GONE),
    ],
)
def test_each_error_of_the_engine_is_a_kind(
    error: UpstreamError | ClientError, kind: object
) -> None:
    assert failure_of(error) is kind
    if isinstance(error, ClientError):
        assert ANSWERS[failure_of(error)].status == error.status


# -- backends and the gateway in front of them -----------------------------------------

#: what a backend does with a request it fails (the request head, reader, writer)
Fail = Callable[[bytes, asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]


class Backend:
    """A raw HTTP/1.1 backend on loopback: the first ``ok`` requests (over all connections)
    are answered OK, every later one goes to ``fail``."""

    def __init__(self, fail: Fail, ok: int) -> None:
        self.fail = fail
        self.ok = ok
        self.requests = 0
        self.connections = 0
        self.failing = asyncio.Event()  # a request went to ``fail``
        self._server: asyncio.Server | None = None
        self._writers: list[asyncio.StreamWriter] = []

    async def start(self) -> int:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        port: int = self._server.sockets[0].getsockname()[1]
        return port

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        self._writers.append(writer)
        with contextlib.suppress(ConnectionError, asyncio.IncompleteReadError):
            while not writer.is_closing():
                head = await reader.readuntil(b"\r\n\r\n")
                self.requests += 1
                if self.requests <= self.ok:
                    writer.write(OK)
                    await writer.drain()
                else:
                    self.failing.set()
                    await self.fail(head, reader, writer)

    async def stop(self) -> None:
        if self._server is not None:
            self._server.close()
        for writer in self._writers:
            writer.transport.abort()


class Outcomes:
    """The contexts the gateway's observers saw, one per request that reached a route."""

    def __init__(self) -> None:
        self.seen: list[RequestContext] = []

    def observe(self, env: EnvironmentRuntime, ctx: RequestContext) -> None:
        self.seen.append(ctx)

    async def last(self, n: int) -> RequestContext:
        """The ``n``-th request's context, once it was logged."""
        await eventually(lambda: len(self.seen) >= n, what=f"{n} requests logged")
        return self.seen[n - 1]


@dataclass
class Front:
    """The gateway serving one backend (``backend_port``), as ``portico serve`` runs it."""

    port: int
    gateway: Gateway
    backend_port: int
    outcomes: Outcomes = field(default_factory=Outcomes)


FrontFactory = Callable[..., Awaitable[Front]]


@pytest.fixture
async def front() -> AsyncIterator[FrontFactory]:
    """``await front(backend_port, limits=..., document=..., **upstream_specification)``."""
    started: list[tuple[asyncio.Server, Gateway]] = []

    async def start(
        backend_port: int,
        *,
        limits: Limits | None = None,
        document: dict[str, Any] | None = None,
        **specification: Any,
    ) -> Front:
        gw = Gateway()
        doc = document or snapshot(backend_port, [])
        doc["upstreams"]["up"]["specification"].update(specification)
        doc["content_hash"] = content_hash(doc)
        await gw.apply(doc)
        server = await serve(gw.handle, "127.0.0.1", 0, limits=limits or Limits())
        started.append((server, gw))
        made = Front(server.sockets[0].getsockname()[1], gw, backend_port)
        gw.observers.append(made.outcomes.observe)
        return made

    yield start
    for server, gw in started:
        await shutdown(server, grace=0.5)
        await gw.close()


@pytest.fixture
async def backend() -> AsyncIterator[Callable[[Fail, int], Awaitable[Backend]]]:
    """``await backend(fail, ok)``: a loopback backend that answers ``ok`` requests, then
    fails the rest with ``fail``."""
    made: list[Backend] = []

    async def start(fail: Fail, ok: int) -> Backend:
        made.append(Backend(fail, ok))
        return made[-1]

    yield start
    for each in made:
        await each.stop()


@pytest.fixture
def refusing_port() -> int:
    """A port nothing listens on (connecting is refused)."""
    return free_port()


@pytest.fixture
def blackhole_port() -> Iterator[int]:
    """A port whose accept queue is full: connecting to it hangs."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(0)
    port: int = listener.getsockname()[1]
    filler = socket.socket()
    filler.connect(("127.0.0.1", port))
    yield port
    filler.close()
    listener.close()


class Client:
    """One keep-alive client connection to the gateway, read by hand."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader, self.writer = reader, writer

    @classmethod
    async def open(cls, port: int) -> Client:
        return cls(*await asyncio.open_connection("127.0.0.1", port))

    def send(self, data: bytes) -> None:
        self.writer.write(data)

    async def head(self) -> tuple[int, dict[str, str]]:
        head = await asyncio.wait_for(self.reader.readuntil(b"\r\n\r\n"), 10)
        lines = head.decode("latin-1").split("\r\n")
        headers = dict(line.lower().split(": ", 1) for line in lines[1:] if line)
        return int(lines[0].split(" ")[1]), headers

    async def response(self) -> tuple[int, dict[str, str], bytes]:
        status, headers = await self.head()
        body = await self.reader.readexactly(int(headers.get("content-length", "0")))
        return status, headers, body

    async def rest(self) -> bytes:
        """Whatever comes until the gateway closes the connection."""
        return await asyncio.wait_for(self.reader.read(), 10)

    def close(self) -> None:
        self.writer.transport.abort()


def get(path: str = "/case") -> bytes:
    return f"GET {path} HTTP/1.1\r\nHost: {HOST}\r\n\r\n".encode()


async def client_on(path: str, front: Front) -> Client:
    """A client connection; on the callback path, its node's connection is in the pool after
    a first request, so that the next one is forwarded by callbacks."""
    client = await Client.open(front.port)
    if path == "callback":
        client.send(get("/first"))
        assert (await client.response())[0] == 200
        pool = front.gateway.pool
        await eventually(lambda: pool.idle_count("127.0.0.1", front.backend_port) == 1)
    return client


async def answered(
    front: Front, backend: Backend, path: str, kind: FailureKind
) -> tuple[RequestContext, dict[str, str]]:
    """Send the request under test on ``path``: it gets the answer of ``kind``'s row (status,
    JSON body); the context the gateway logged for it, and the answer's headers."""
    client = await client_on(path, front)
    try:
        client.send(get())
        status, headers, body = await client.response()
    finally:
        client.close()
    row = ANSWERS[kind]
    assert status == row.status
    assert body == error_body(row.status, row.message)
    assert headers["content-type"] == "application/json"
    ctx = await front.outcomes.last(2 if path == "callback" else 1)
    assert ctx.status == row.status
    assert not ctx.proxied
    assert ctx.path == "/case"
    assert backend.failing.is_set()
    return ctx, headers


def writes(answer: bytes, *, then_close: bool = False) -> Fail:
    """A node that answers every request with ``answer`` as written (and then closes)."""

    async def write(head: bytes, _: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.write(answer)
        await writer.drain()
        if then_close:
            writer.close()

    return write


def ok_before(path: str) -> int:
    """How many requests the backend answers before failing: the callback path's first."""
    return 1 if path == "callback" else 0


# -- connecting (the pool has no connection: the coroutine path) -----------------------


@drives(FailureKind.CONNECT_FAILED)
async def test_a_refused_connection_is_a_502(front: FrontFactory, refusing_port: int) -> None:
    gateway = await front(refusing_port)
    client = await Client.open(gateway.port)
    try:
        client.send(get())
        status, _, body = await client.response()
    finally:
        client.close()
    assert (status, body) == (502, error_body(502))
    ctx = await gateway.outcomes.last(1)
    assert ctx.status == 502 and not ctx.proxied
    assert ctx.upstream_addr == f"127.0.0.1:{refusing_port}"


@drives(FailureKind.CONNECT_TIMEOUT)
async def test_a_connection_that_is_not_accepted_in_time_is_a_504(
    front: FrontFactory, blackhole_port: int
) -> None:
    gateway = await front(blackhole_port, timeout={"connect": 0.2})
    client = await Client.open(gateway.port)
    try:
        client.send(get())
        status, _, body = await client.response()
    finally:
        client.close()
    assert (status, body) == (504, error_body(504))
    assert (await gateway.outcomes.last(1)).status == 504


@drives(FailureKind.NO_NODE)
async def test_an_upstream_without_a_node_to_pick_is_a_503(front: FrontFactory) -> None:
    gateway = await front(free_port(), nodes=[{"host": "127.0.0.1", "port": 1, "weight": 0}])
    client = await Client.open(gateway.port)
    try:
        client.send(get())
        status, _, body = await client.response()
    finally:
        client.close()
    assert (status, body) == (503, error_body(503))
    ctx = await gateway.outcomes.last(1)
    assert ctx.status == 503 and not ctx.proxied


@drives(FailureKind.NO_UPSTREAM)
async def test_a_route_without_its_upstream_is_a_502_saying_so(front: FrontFactory) -> None:
    document = snapshot(free_port(), [])
    document["routes"][0]["upstream_id"] = "gone"
    gateway = await front(0, document=document)
    client = await Client.open(gateway.port)
    try:
        client.send(get())
        status, headers, body = await client.response()
    finally:
        client.close()
    row = ANSWERS[FailureKind.NO_UPSTREAM]
    assert (status, body) == (502, error_body(502, row.message))
    assert body == b'{"error_msg":"502 Bad Gateway: no upstream"}'
    assert headers["content-type"] == "application/json" and "x-request-id" in headers
    assert (await gateway.outcomes.last(1)).status == 502


# -- the node's answer (both paths) ----------------------------------------------------


@pytest.mark.parametrize("path", PATHS)
@drives(FailureKind.UPSTREAM_TIMEOUT)
async def test_a_node_that_does_not_answer_in_time_is_a_504(
    front: FrontFactory, backend: Any, path: str
) -> None:
    async def never(head: bytes, reader: asyncio.StreamReader, _: asyncio.StreamWriter) -> None:
        await reader.read()  # until the gateway hangs up

    node = await backend(never, ok_before(path))
    gateway = await front(await node.start(), timeout={"read": 0.3})
    _, headers = await answered(gateway, node, path, FailureKind.UPSTREAM_TIMEOUT)
    assert "x-request-id" in headers


@pytest.mark.parametrize("path", PATHS)
@drives(FailureKind.UPSTREAM_RESET)
async def test_a_node_that_closes_before_answering_is_a_502(
    front: FrontFactory, backend: Any, path: str
) -> None:
    async def close(head: bytes, _: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.close()  # (on a pooled connection: stale, replayed on a fresh one, closed too)

    node = await backend(close, ok_before(path))
    gateway = await front(await node.start())
    await answered(gateway, node, path, FailureKind.UPSTREAM_RESET)
    assert node.connections == (2 if path == "callback" else 1)


@pytest.mark.parametrize("path", PATHS)
async def test_a_node_that_resets_before_answering_is_a_502(
    front: FrontFactory, backend: Any, path: str
) -> None:
    async def reset(head: bytes, _: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.transport.abort()  # RST

    node = await backend(reset, ok_before(path))
    gateway = await front(await node.start())
    await answered(gateway, node, path, FailureKind.UPSTREAM_RESET)


@pytest.mark.parametrize("path", PATHS)
async def test_a_node_that_closes_after_the_head_before_the_body_is_a_502(
    front: FrontFactory, backend: Any, path: str
) -> None:
    head_only = writes(b"HTTP/1.1 200 OK\r\ncontent-length: 10\r\n\r\n", then_close=True)
    node = await backend(head_only, ok_before(path))
    gateway = await front(await node.start())
    await answered(gateway, node, path, FailureKind.UPSTREAM_RESET)


@pytest.mark.parametrize("path", PATHS)
async def test_a_node_that_resets_mid_body_cuts_the_clients_answer(
    front: FrontFactory, backend: Any, path: str
) -> None:
    relayed = asyncio.Event()

    async def partly(head: bytes, _: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.write(b"HTTP/1.1 200 OK\r\ncontent-length: 10\r\n\r\nabcd")
        await writer.drain()
        await relayed.wait()  # the client has the head and the first bytes
        writer.transport.abort()  # RST

    node = await backend(partly, ok_before(path))
    gateway = await front(await node.start())
    client = await client_on(path, gateway)
    try:
        client.send(get())
        status, headers = await client.head()
        assert status == 200 and headers["content-length"] == "10"
        assert await client.reader.readexactly(4) == b"abcd"
        relayed.set()
        assert await client.rest() == b""  # closed: 6 bytes short of what was announced
    finally:
        client.close()
    ctx = await gateway.outcomes.last(2 if path == "callback" else 1)
    assert ctx.status == 200  # what the client got the head of
    assert not ctx.proxied


@pytest.mark.parametrize("path", PATHS)
@drives(FailureKind.INVALID_RESPONSE)
@pytest.mark.parametrize(
    "answer",
    [
        b"HTTP/1.1 abc nonsense\r\n\r\n",  # a malformed status line
        b"HTTP/1.1 200 OK\r\nx-no-colon\r\ncontent-length: 0\r\n\r\n",  # a malformed header
        b"HTTP/1.1 200 OK\r\ncontent-length: 1\r\ncontent-length: 2\r\n\r\nab",  # smuggling
        b"HTTP/1.1 200 OK\r\nx-big: " + b"a" * 70_000 + b"\r\n\r\n",  # a head too big
    ],
    ids=["status-line", "header", "two-lengths", "head-too-big"],
)
async def test_an_answer_that_is_not_http_is_a_502(
    front: FrontFactory, backend: Any, path: str, answer: bytes
) -> None:
    node = await backend(writes(answer), ok_before(path))
    gateway = await front(await node.start())
    await answered(gateway, node, path, FailureKind.INVALID_RESPONSE)


@pytest.mark.parametrize("path", PATHS)
@drives(FailureKind.UNEXPECTED_UPGRADE)
async def test_a_101_the_client_did_not_ask_for_is_a_502(
    front: FrontFactory, backend: Any, path: str
) -> None:
    answer = b"HTTP/1.1 101 Switching Protocols\r\nconnection: upgrade\r\nupgrade: x\r\n\r\n"
    node = await backend(writes(answer), ok_before(path))
    gateway = await front(await node.start())
    await answered(gateway, node, path, FailureKind.UNEXPECTED_UPGRADE)


@pytest.mark.parametrize("path", PATHS)
@drives(FailureKind.CLIENT_GONE)
async def test_a_client_that_leaves_before_the_answer_is_a_499_answered_to_nobody(
    front: FrontFactory, backend: Any, path: str
) -> None:
    dropped = asyncio.Event()

    async def wait(head: bytes, reader: asyncio.StreamReader, _: asyncio.StreamWriter) -> None:
        if await reader.read() == b"":  # the gateway hung up: the exchange was abandoned
            dropped.set()

    node = await backend(wait, ok_before(path))
    gateway = await front(await node.start())
    client = await client_on(path, gateway)
    client.send(get())
    await asyncio.wait_for(node.failing.wait(), 10)
    client.close()
    await asyncio.wait_for(dropped.wait(), 10)
    ctx = await gateway.outcomes.last(2 if path == "callback" else 1)
    assert ctx.status == ANSWERS[FailureKind.CLIENT_GONE].status
    assert not ctx.proxied


# -- the client's body (forwarded in a coroutine) ---------------------------------------


async def body_failure(
    front: FrontFactory, backend: Any, request: bytes, limits: Limits, kind: FailureKind
) -> None:
    """Send ``request`` (a head and a body that fails): the answer of ``kind``'s row."""

    async def read_on(head: bytes, reader: asyncio.StreamReader, _: asyncio.StreamWriter) -> None:
        await reader.read()  # the body, as long as it comes

    node = await backend(read_on, 0)
    gateway = await front(await node.start(), limits=limits)
    client = await Client.open(gateway.port)
    try:
        client.send(request)
        status, headers, body = await client.response()
    finally:
        client.close()
    row = ANSWERS[kind]
    assert (status, body) == (row.status, error_body(row.status))
    assert headers["content-type"] == "application/json"
    ctx = await gateway.outcomes.last(1)
    assert ctx.status == row.status and not ctx.proxied


def post(framing: str, body: bytes) -> bytes:
    return f"POST /case HTTP/1.1\r\nHost: {HOST}\r\n{framing}\r\n\r\n".encode() + body


@drives(FailureKind.BAD_REQUEST)
async def test_a_body_with_broken_chunks_is_a_400(front: FrontFactory, backend: Any) -> None:
    request = post("transfer-encoding: chunked", b"3\r\nabc\r\nzz\r\n")
    await body_failure(front, backend, request, Limits(), FailureKind.BAD_REQUEST)


@drives(FailureKind.REQUEST_TIMEOUT)
async def test_a_body_that_stalls_is_a_408(front: FrontFactory, backend: Any) -> None:
    request = post("content-length: 10", b"ab")  # and then nothing
    limits = Limits(body_timeout=0.3)
    await body_failure(front, backend, request, limits, FailureKind.REQUEST_TIMEOUT)


@drives(FailureKind.PAYLOAD_TOO_LARGE)
async def test_a_body_over_the_limit_is_a_413(front: FrontFactory, backend: Any) -> None:
    request = post("transfer-encoding: chunked", b"4\r\nabcd\r\n40\r\n" + b"x" * 64 + b"\r\n")
    limits = Limits(max_body_bytes=16)
    await body_failure(front, backend, request, limits, FailureKind.PAYLOAD_TOO_LARGE)
