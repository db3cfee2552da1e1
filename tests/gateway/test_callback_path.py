"""A request without a body that finds an idle pooled connection to its node is forwarded by
callbacks (``proxy.forward_now``), not in a coroutine: its failure modes, each through real
sockets. Every backend here answers the first request of a connection normally (that one is
forwarded in a coroutine: the pool was empty) and treats the second one, which arrives on the
pooled connection, as the case under test."""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import pytest

from portico.gateway.context import RequestContext
from portico.gateway.environment_runtime import EnvironmentRuntime
from portico.gateway.gateway import Gateway
from portico.gateway.http.proxy import AddedHeaders
from portico.gateway.http.server import serve, shutdown
from tests.gateway.test_pipeline import HOST, plugin, snapshot
from tests.support.http_head import names, parse_head, values

OK = b"HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\ncontent-length: 5\r\n\r\nfirst"

#: (the number of the request on its connection, the request head, reader, writer)
Answer = Callable[[int, bytes, asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]


class Backend:
    """A raw HTTP/1.1 backend on loopback: ``answer`` writes each response by hand."""

    def __init__(self, answer: Answer) -> None:
        self.answer = answer
        self.heads: list[bytes] = []
        self.connections = 0
        self._server: asyncio.Server | None = None
        self._writers: list[asyncio.StreamWriter] = []

    async def start(self) -> int:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        port: int = self._server.sockets[0].getsockname()[1]
        return port

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        self._writers.append(writer)
        number = 0
        with contextlib.suppress(ConnectionError, asyncio.IncompleteReadError):
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                number += 1
                self.heads.append(head)
                await self.answer(number, head, reader, writer)
                if writer.is_closing():
                    return

    async def stop(self) -> None:
        if self._server is not None:
            self._server.close()
        for writer in self._writers:
            writer.transport.abort()
        # until each aborted connection is closed (its connection_lost has run)
        await asyncio.wait_for(
            asyncio.gather(*(w.wait_closed() for w in self._writers), return_exceptions=True), 10
        )


class Outcomes:
    """What the gateway's observers saw, one context per request that reached a route."""

    def __init__(self) -> None:
        self.seen: list[RequestContext] = []
        self._more = asyncio.Event()

    def observe(self, env: EnvironmentRuntime, ctx: RequestContext) -> None:
        self.seen.append(ctx)
        self._more.set()

    async def count(self, n: int) -> None:
        """Until ``n`` requests were seen (5 s at most)."""
        async with asyncio.timeout(5):
            while len(self.seen) < n:
                self._more.clear()
                await self._more.wait()


#: the wall clock the gateways here read (``Gateway(now=...)``): a fixed moment at the start of
#: a minute, so that limit-count's fixed windows never end in the middle of a test
FROZEN_NOW = 1_800_000_000.0


@contextlib.asynccontextmanager
async def gateway_to(
    answer: Answer, plugins: list[dict[str, Any]] | None = None, **upstream: Any
) -> AsyncIterator[tuple[int, Backend, Outcomes, Gateway]]:
    backend = Backend(answer)
    backend_port = await backend.start()
    gw = Gateway(now=lambda: FROZEN_NOW)
    outcomes = Outcomes()
    gw.observers.append(outcomes.observe)
    document = snapshot(backend_port, plugins or [])
    document["upstreams"]["up"]["specification"].update(upstream)
    await gw.apply(document)
    server = await serve(gw.handle, "127.0.0.1", 0)
    try:
        yield server.sockets[0].getsockname()[1], backend, outcomes, gw
    finally:
        await shutdown(server, grace=0.5)
        await gw.close()
        await backend.stop()


class Client:
    """One keep-alive client connection to the gateway, read by hand."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader, self.writer = reader, writer

    @classmethod
    async def open(cls, port: int) -> Client:
        return cls(*await asyncio.open_connection("127.0.0.1", port))

    async def get(self, path: str) -> tuple[int, dict[str, str], bytes]:
        self.writer.write(f"GET {path} HTTP/1.1\r\nHost: {HOST}\r\n\r\n".encode())
        return await self.response()

    async def response(self) -> tuple[int, dict[str, str], bytes]:
        head = await asyncio.wait_for(self.reader.readuntil(b"\r\n\r\n"), 10)
        lines = head.decode("latin-1").split("\r\n")
        headers = dict(line.lower().split(": ", 1) for line in lines[1:] if line)
        body = await self.reader.readexactly(int(headers.get("content-length", "0")))
        return int(lines[0].split(" ")[1]), headers, body

    def close(self) -> None:
        self.writer.transport.abort()


async def after_a_first(port: int, *then: str) -> list[tuple[int, dict[str, str], bytes]]:
    """GET /one on a client connection (answered OK: it leaves an idle pooled connection),
    then each of ``then`` on the same client connection, each forwarded by callbacks on the
    pooled one when it is there: their answers."""
    client = await Client.open(port)
    try:
        assert (await client.get("/one"))[0] == 200
        return [await client.get(path) for path in then]
    finally:
        client.close()


async def ok_first(number: int, writer: asyncio.StreamWriter) -> bool:
    """Answer the connection's first request with OK; whether it was the first."""
    if number == 1:
        writer.write(OK)
        await writer.drain()
        return True
    return False


async def test_pooled_requests_get_the_same_answer_and_reuse_one_connection() -> None:
    async def answer(number: int, head: bytes, _: Any, writer: asyncio.StreamWriter) -> None:
        body = b"answer %d" % number
        writer.write(
            b"HTTP/1.1 200 OK\r\nx-n: %d\r\ncontent-length: %d\r\n\r\n" % (number, len(body))
        )
        writer.write(body)
        await writer.drain()

    async with gateway_to(answer) as (port, backend, outcomes, _):
        client = await Client.open(port)
        try:
            answers = [await client.get(f"/items/{i}?q={i}") for i in range(4)]
        finally:
            client.close()
    assert backend.connections == 1
    assert [(status, headers["x-n"], body) for status, headers, body in answers] == [
        (200, str(i + 1), b"answer %d" % (i + 1)) for i in range(4)
    ]
    ids = {headers["x-request-id"] for _, headers, _ in answers}
    assert len(ids) == 4
    for i, head in enumerate(backend.heads):
        assert head.startswith(f"GET /items/{i}?q={i} HTTP/1.1\r\n".encode())
        assert b"x-forwarded-for: 127.0.0.1\r\n" in head
        assert f"x-forwarded-host: {HOST}\r\n".encode() in head
    assert [ctx.status for ctx in outcomes.seen] == [200] * 4
    assert all(ctx.proxied and ctx.upstream_addr for ctx in outcomes.seen)
    assert [ctx.response_bytes for ctx in outcomes.seen] == [len(b"answer 1")] * 4


async def test_a_stale_pooled_connection_is_replayed_on_a_fresh_one() -> None:
    async def answer(number: int, head: bytes, _: Any, writer: asyncio.StreamWriter) -> None:
        if not await ok_first(number, writer):
            writer.transport.abort()  # closed by the node as the request arrived: nothing read

    async with gateway_to(answer) as (port, backend, outcomes, _):
        [(status, _, body)] = await after_a_first(port, "/two")
    assert (status, body) == (200, b"first")
    assert backend.connections == 2
    assert [head.split(b" ")[1] for head in backend.heads] == [b"/one", b"/two", b"/two"]
    assert [ctx.status for ctx in outcomes.seen] == [200, 200]


async def test_an_invalid_answer_on_a_pooled_connection_is_a_502() -> None:
    async def answer(number: int, head: bytes, _: Any, writer: asyncio.StreamWriter) -> None:
        if not await ok_first(number, writer):
            writer.write(b"HTTP/1.1 abc nonsense\r\n\r\n")

    async with gateway_to(answer) as (port, backend, outcomes, _):
        (status, _, body), then = await after_a_first(port, "/two", "/three")
    assert then[0] == 200  # on a fresh connection
    assert status == 502 and b"502" in body
    assert outcomes.seen[1].status == 502 and not outcomes.seen[1].proxied
    assert backend.connections == 2


async def test_a_pooled_connection_that_does_not_answer_in_time_is_a_504() -> None:
    async def answer(number: int, head: bytes, _: Any, writer: asyncio.StreamWriter) -> None:
        if not await ok_first(number, writer):
            await asyncio.sleep(30)  # (the behaviour: a backend that never answers in time)

    async with gateway_to(answer, timeout={"read": 0.3}) as (port, _, outcomes, gw):
        [(status, headers, _)] = await after_a_first(port, "/two")
        assert (
            gw.pool.idle_count("127.0.0.1", int(outcomes.seen[0].upstream_addr.split(":")[1])) == 0
        )
    assert status == 504 and "x-request-id" in headers
    assert outcomes.seen[1].status == 504
    assert outcomes.seen[1].upstream_seconds >= 0.3


async def test_a_client_that_leaves_before_the_answer_drops_the_upstream_exchange() -> None:
    waiting = asyncio.Event()
    dropped = asyncio.Event()

    async def answer(
        number: int, head: bytes, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        if not await ok_first(number, writer):
            waiting.set()
            with contextlib.suppress(ConnectionError):
                if await reader.read(1) == b"":  # the gateway hung up: never answered
                    dropped.set()

    async with gateway_to(answer) as (port, _, outcomes, _gw):
        client = await Client.open(port)
        await client.get("/one")
        client.writer.write(f"GET /two HTTP/1.1\r\nHost: {HOST}\r\n\r\n".encode())
        await asyncio.wait_for(waiting.wait(), 5)
        client.close()
        await asyncio.wait_for(dropped.wait(), 5)
        await outcomes.count(2)
    assert outcomes.seen[1].status == 499
    assert not outcomes.seen[1].proxied


async def test_a_large_answer_on_a_pooled_connection_is_streamed_whole() -> None:
    payload = bytes(range(256)) * 8192  # 2 MiB, written in pieces with pauses

    async def answer(number: int, head: bytes, _: Any, writer: asyncio.StreamWriter) -> None:
        if not await ok_first(number, writer):
            writer.write(b"HTTP/1.1 200 OK\r\ncontent-length: %d\r\n\r\n" % len(payload))
            for at in range(0, len(payload), 256 * 1024):
                writer.write(payload[at : at + 256 * 1024])
                await writer.drain()
                await asyncio.sleep(0.01)  # (the behaviour: the answer comes in pieces)

    async with gateway_to(answer) as (port, backend, outcomes, _):
        (status, _, body), then = await after_a_first(port, "/two", "/three")
    assert then[0] == 200  # still in order after the stream
    assert status == 200
    assert hashlib.sha256(body).digest() == hashlib.sha256(payload).digest()
    assert outcomes.seen[1].response_bytes == len(payload)
    assert backend.connections == 1


async def test_pipelined_requests_answered_at_once_and_by_callbacks_keep_their_order() -> None:
    async def answer(number: int, head: bytes, _: Any, writer: asyncio.StreamWriter) -> None:
        path = head.split(b" ")[1]
        writer.write(b"HTTP/1.1 200 OK\r\ncontent-length: %d\r\n\r\n%s" % (len(path), path))
        await writer.drain()

    async with gateway_to(answer) as (port, _, _outcomes, _gw):
        client = await Client.open(port)
        try:
            await client.get("/warm")  # the pool now holds a connection
            client.writer.write(
                f"GET /a HTTP/1.1\r\nHost: {HOST}\r\n\r\n"
                "GET /b HTTP/1.1\r\nHost: elsewhere.example.com\r\n\r\n"
                f"GET /c HTTP/1.1\r\nHost: {HOST}\r\n\r\n"
                "GET /%zz HTTP/1.1\r\nHost: elsewhere.example.com\r\n\r\n"
                f"GET /d HTTP/1.1\r\nHost: {HOST}\r\n\r\n".encode()
            )
            answers = [await client.response() for _ in range(5)]
        finally:
            client.close()
    assert [(status, body) for status, _, body in answers] == [
        (200, b"/a"),
        (404, b'{"error_msg":"404 Route Not Found"}'),
        (200, b"/c"),
        (404, b'{"error_msg":"404 Route Not Found"}'),
        (200, b"/d"),
    ]


@pytest.mark.parametrize("close_header", ["Connection: close\r\n", ""])
async def test_an_answer_given_at_once_is_written_before_the_connection_closes(
    close_header: str,
) -> None:
    async def answer(number: int, head: bytes, _: Any, writer: asyncio.StreamWriter) -> None:
        await ok_first(number, writer)

    async with gateway_to(answer) as (port, _, _outcomes, _gw):
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        try:
            writer.write(f"GET /x HTTP/1.0\r\nHost: nowhere.example\r\n{close_header}\r\n".encode())
            data = await asyncio.wait_for(reader.read(), 5)  # until the gateway closes
        finally:
            writer.transport.abort()
    assert data.startswith(b"HTTP/1.1 404 ")
    assert data.endswith(b'{"error_msg":"404 Route Not Found"}')


@pytest.mark.parametrize(
    "header",
    [b"x-a: one\r\n x-injected: yes", b"x-a: one\nx-injected: yes", b"x-a: one\rx-injected: yes"],
    ids=["folded", "bare-lf", "bare-cr"],
)
async def test_an_upstream_header_with_a_line_break_is_never_relayed(header: bytes) -> None:
    # The upstream's headers are relayed without a scan for line breaks (Responder.start's
    # ``parsed``) because llhttp refuses them: this holds it to that.
    async def answer(number: int, head: bytes, _: Any, writer: asyncio.StreamWriter) -> None:
        if not await ok_first(number, writer):
            writer.write(b"HTTP/1.1 200 OK\r\n" + header + b"\r\ncontent-length: 2\r\n\r\nhi")

    async with gateway_to(answer) as (port, _, outcomes, _gw):
        [(status, headers, _)] = await after_a_first(port, "/two")
    assert status == 502 and "x-injected" not in headers
    assert outcomes.seen[1].status == 502


async def _raw_heads(
    answer_head: bytes, requests: int = 2, plugins: list[dict[str, Any]] | None = None
) -> list[bytes]:
    """The response heads the client reads, raw, for ``requests`` GETs on one connection to
    a gateway whose backend answers each with ``answer_head`` and a 2-byte body (the first
    forwarded in a coroutine, the others by callbacks)."""

    async def answer(number: int, head: bytes, _: Any, writer: asyncio.StreamWriter) -> None:
        writer.write(answer_head + b"hi")

    heads = []
    async with gateway_to(answer, plugins) as (port, _, _outcomes, _gw):
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        try:
            for n in range(requests):
                writer.write(f"GET /h{n} HTTP/1.1\r\nHost: {HOST}\r\n\r\n".encode())
                heads.append(await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 5))
                assert await asyncio.wait_for(reader.readexactly(2), 5) == b"hi"
        finally:
            writer.transport.abort()
    return heads


async def test_header_lines_are_relayed_as_the_node_wrote_them() -> None:
    # The usual answer's header lines are relayed without being taken apart
    # (Responder.start_lines): names keep their case, values their bytes, repeated headers
    # their order; the hop-by-hop ones are still left out and the framing redone.
    heads = await _raw_heads(
        b"HTTP/1.1 200 OK\r\n"
        b"X-Mixed-Case: Some Value \t\r\n"
        b"Set-Cookie: a=1\r\n"
        b"Keep-Alive: timeout=5\r\n"
        b"set-cookie: b=2\r\n"
        b"Connection: keep-alive\r\n"
        b"Proxy-Authenticate: Basic\r\n"
        b"Trailer: X-Sum\r\n"
        b"CONTENT-LENGTH: 2\r\n\r\n"
    )
    for head in heads:
        lines = head.split(b"\r\n")
        assert lines[0] == b"HTTP/1.1 200 OK"
        assert lines[1:5] == [
            b"X-Mixed-Case: Some Value \t",
            b"Set-Cookie: a=1",
            b"set-cookie: b=2",
            b"CONTENT-LENGTH: 2",
        ]
        _, headers = parse_head(head)
        for dropped in ("keep-alive", "connection", "proxy-authenticate", "trailer"):
            assert dropped not in names(headers)
        assert len(values(headers, "x-request-id")) == 1


async def test_the_nodes_request_id_is_replaced_by_the_gateways() -> None:
    heads = await _raw_heads(
        b"HTTP/1.1 200 OK\r\nX-Request-ID: the-nodes\r\ncontent-length: 2\r\n\r\n"
    )
    for head in heads:
        _, headers = parse_head(head)
        [request_id] = values(headers, "x-request-id")
        assert request_id != "the-nodes" and len(request_id) == 32


async def test_headers_named_by_the_nodes_connection_header_are_dropped() -> None:
    heads = await _raw_heads(
        b"HTTP/1.1 200 OK\r\nConnection: keep-alive, X-Hop\r\nX-Hop: secret\r\n"
        b"X-End: kept\r\ncontent-length: 2\r\n\r\n"
    )
    for head in heads:
        _, headers = parse_head(head)
        assert values(headers, "x-hop") == [] and values(headers, "x-end") == ["kept"]


async def test_an_answer_without_a_length_to_an_http11_client_is_chunked() -> None:
    # A close-delimited answer (no Content-Length): its lines relayed, the framing redone.
    async def answer(number: int, head: bytes, _: Any, writer: asyncio.StreamWriter) -> None:
        writer.write(b"HTTP/1.1 200 OK\r\nX-A: 1\r\nConnection: close\r\n\r\nbody")
        writer.close()

    async with gateway_to(answer) as (port, _, _outcomes, _gw):
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        try:
            writer.write(f"GET /c HTTP/1.1\r\nHost: {HOST}\r\n\r\n".encode())
            head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 5)
            body = await asyncio.wait_for(reader.readuntil(b"0\r\n\r\n"), 5)
        finally:
            writer.transport.abort()
    assert b"X-A: 1\r\n" in head and b"transfer-encoding: chunked\r\n" in head
    assert body == b"4\r\nbody\r\n0\r\n\r\n"


LIMIT = plugin("limit-count", 210, count=100, time_window=60)


async def test_headers_a_plugin_sets_follow_the_nodes_lines() -> None:
    # limit-count only sets headers (proxy.AddedHeaders): the node's lines are relayed as
    # they came, the plugin's added after them; a node's header whose name is as long as one
    # of them but another is kept.
    heads = await _raw_heads(
        b"HTTP/1.1 200 OK\r\nX-Ratelimit-Lymit: theirs\r\ncontent-length: 2\r\n\r\n",
        plugins=[LIMIT],
    )
    for n, head in enumerate(heads):
        lines = head.split(b"\r\n")
        assert lines[1:3] == [b"X-Ratelimit-Lymit: theirs", b"content-length: 2"]
        _, headers = parse_head(head)
        assert values(headers, "x-ratelimit-limit") == ["100"]
        # one window (the gateway's clock stands still): each request counts in it
        assert values(headers, "x-ratelimit-remaining") == [str(99 - n)]


async def test_a_header_a_plugin_sets_replaces_the_nodes() -> None:
    heads = await _raw_heads(
        b"HTTP/1.1 200 OK\r\nX-RateLimit-Limit: 999\r\nX-A: 1\r\ncontent-length: 2\r\n\r\n",
        plugins=[LIMIT],
    )
    for head in heads:
        # the plugin's value, and only it: the node's line is gone (asserted on the header's
        # lines, not on the head's text, where a random request id may hold "999")
        _, headers = parse_head(head)
        assert values(headers, "x-ratelimit-limit") == ["100"]
        assert values(headers, "x-a") == ["1"]


def test_headers_set_with_a_line_break_take_the_checked_path() -> None:
    assert AddedHeaders.of({"x-a": "1"}) is not None
    assert AddedHeaders.of({"x-a": "1\r\nx-injected: yes"}) is None
    assert AddedHeaders.of({"x-a\nx-b": "1"}) is None


async def test_a_pooled_request_head_is_rendered_whole() -> None:
    # forward_now renders the upstream request in one piece (forwarding.request_head with a
    # target): the same head as the coroutine path's, an empty body's length said on.
    async def answer(number: int, head: bytes, _: Any, writer: asyncio.StreamWriter) -> None:
        writer.write(OK)

    async with gateway_to(answer) as (port, backend, _outcomes, _gw):
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        try:
            for extra in ("", "Content-Length: 0\r\n"):
                for path in ("/a?x=1", "/b"):
                    head = f"GET {path} HTTP/1.1\r\nHost: {HOST}\r\nX-Custom: v\r\n{extra}\r\n"
                    writer.write(head.encode())
                    await asyncio.wait_for(reader.readuntil(b"first"), 5)
        finally:
            writer.transport.abort()
    assert backend.connections == 1  # all but the first forwarded by callbacks
    heads = [head.decode("latin-1").split("\r\n") for head in backend.heads]
    assert [lines[0] for lines in heads] == ["GET /a?x=1 HTTP/1.1", "GET /b HTTP/1.1"] * 2
    for n, lines in enumerate(heads):
        fields = dict(line.split(": ", 1) for line in lines[1:] if line)
        assert fields["host"] == HOST and fields["x-custom"] == "v"
        assert fields["x-forwarded-for"] == "127.0.0.1" and fields["x-forwarded-proto"] == "http"
        assert len(fields["x-request-id"]) == 32
        assert fields.get("content-length") == (None if n < 2 else "0")
        assert lines[-2:] == ["", ""]
