"""The pooled upstream client against real backends."""

from __future__ import annotations

import asyncio
import json
import socket
import struct
from collections.abc import AsyncIterable, AsyncIterator
from typing import Any

import pytest

from portico.gateway.http import (
    ConnectFailed,
    ConnectTimeout,
    Timeouts,
    UpstreamPool,
    UpstreamReset,
    UpstreamResponse,
    UpstreamTimeout,
)
from portico.gateway.http.forwarding import framing, render_head
from tests.support.waiting import eventually

from .conftest import EchoBackend, RawBackend, TlsMaterial, dead_port, read_head

# generous: a loaded CI machine once stalled a loopback connect past 2 s (the tests of the
# timeouts themselves give their own)
T = Timeouts(connect=10, send=10, read=10)
HOST = [("host", "backend")]


@pytest.fixture
async def pool() -> AsyncIterator[UpstreamPool]:
    the_pool = UpstreamPool()
    yield the_pool
    await the_pool.close()


async def request(
    pool: UpstreamPool,
    host: str,
    port: int,
    method: str,
    target: str,
    headers: list[tuple[str, str]],
    body: AsyncIterable[bytes] | bytes | None,
    content_length: int | None,
    timeouts: Timeouts,
    *args: Any,
    **kw: Any,
) -> UpstreamResponse:
    """One exchange, its head rendered as the proxy renders its own (the framing line the
    body's)."""
    head = render_head(method, target, headers, framing(body, content_length))
    return await pool.request(host, port, method, head, body, content_length, timeouts, *args, **kw)


async def read(response: UpstreamResponse) -> bytes:
    return b"".join([chunk async for chunk in response.body])


async def get(pool: UpstreamPool, port: int, target: str, **kw: object) -> UpstreamResponse:
    return await request(pool, "127.0.0.1", port, "GET", target, HOST, None, None, T, **kw)


async def test_sequential_requests_share_one_connection(
    pool: UpstreamPool, echo: EchoBackend
) -> None:
    ports = set()
    for i in range(10):
        response = await get(pool, echo.port, f"/n/{i}")
        assert response.status == 200
        body = json.loads(await read(response))
        assert body["target"] == f"/n/{i}"
        ports.add(body["peer_port"])
    assert pool.connects == 1
    assert len(ports) == 1 and echo.connections == ports
    assert pool.idle_count("127.0.0.1", echo.port) == 1


async def test_response_fields(pool: UpstreamPool, echo: EchoBackend) -> None:
    response = await get(pool, echo.port, "/_status?code=201")
    assert (response.status, response.reason) == (201, "Created")
    assert response.content_length == 11 and not response.chunked and not response.upgraded
    assert ("content-length", "11") in response.headers
    assert all(name == name.lower() for name, _ in response.headers)
    assert await read(response) == b"status body"


async def test_chunked_response_is_streamed(pool: UpstreamPool, echo: EchoBackend) -> None:
    response = await get(pool, echo.port, "/_stream?chunks=4&size=3&delay=0.05")
    assert response.chunked and response.content_length is None
    loop = asyncio.get_running_loop()
    arrivals = []
    data = b""
    async for chunk in response.body:
        arrivals.append(loop.time())
        data += chunk
    assert data == b"000111222333"
    assert len(arrivals) >= 2  # delivered as it came, not at the end
    assert (await get(pool, echo.port, "/again")).status == 200
    assert pool.connects == 1  # chunked response read to the end: connection reused


async def test_bodies_sent_by_length_and_chunked(pool: UpstreamPool, echo: EchoBackend) -> None:
    async def stream() -> AsyncIterator[bytes]:
        for part in (b"abc", b"", b"defgh"):
            yield part

    cases: list[tuple[bytes | AsyncIterator[bytes], int | None, list[str]]] = [
        (b"abcdefgh", None, ["content-length", "8"]),
        (stream(), None, ["transfer-encoding", "chunked"]),
        (stream(), 8, ["content-length", "8"]),
    ]
    for body, length, expected in cases:
        response = await request(pool, "127.0.0.1", echo.port, "POST", "/", HOST, body, length, T)
        echoed = json.loads(await read(response))
        assert echoed["body"] == "abcdefgh"
        assert expected in echoed["headers"]
    assert pool.connects == 1


async def test_head_response_then_next_request(pool: UpstreamPool, echo: EchoBackend) -> None:
    response = await request(pool, "127.0.0.1", echo.port, "HEAD", "/", HOST, None, None, T)
    assert response.status == 200 and response.content_length
    assert await read(response) == b""
    after = await get(pool, echo.port, "/after")
    assert json.loads(await read(after))["target"] == "/after"
    assert pool.connects == 1


async def test_informational_responses_are_skipped(pool: UpstreamPool, echo: EchoBackend) -> None:
    response = await get(pool, echo.port, "/_hints")
    assert response.status == 200
    assert ("link", "</a.css>") not in response.headers
    assert await read(response) == b"after hints"


async def test_close_delimited_body(pool: UpstreamPool, echo: EchoBackend) -> None:
    response = await get(pool, echo.port, "/_eof")
    assert response.content_length is None and not response.chunked
    assert await read(response) == b"until the end"
    await get(pool, echo.port, "/next")
    assert pool.connects == 2  # not reusable


async def test_truncated_body_is_reset(pool: UpstreamPool, echo: EchoBackend) -> None:
    response = await get(pool, echo.port, "/_truncate")
    with pytest.raises(UpstreamReset, match="mid-body"):
        await read(response)


async def test_refused_is_connect_failed(pool: UpstreamPool) -> None:
    with pytest.raises(ConnectFailed) as caught:
        await get(pool, dead_port(), "/")
    assert not isinstance(caught.value, ConnectTimeout)


async def test_connect_timeout(pool: UpstreamPool, blackhole_port: int) -> None:
    with pytest.raises(ConnectTimeout):
        await request(
            pool, "127.0.0.1", blackhole_port, "GET", "/", HOST, None, None, Timeouts(connect=0.2)
        )


async def test_read_timeout(pool: UpstreamPool, echo: EchoBackend) -> None:
    with pytest.raises(UpstreamTimeout, match="read"):
        await request(
            pool,
            "127.0.0.1",
            echo.port,
            "GET",
            "/_slow?delay=1",
            HOST,
            None,
            None,
            Timeouts(read=0.2),
        )


async def test_read_timeout_between_body_chunks(pool: UpstreamPool, echo: EchoBackend) -> None:
    response = await request(
        pool,
        "127.0.0.1",
        echo.port,
        "GET",
        "/_stream?chunks=3&delay=0.6",
        HOST,
        None,
        None,
        Timeouts(read=0.3),
    )
    with pytest.raises(UpstreamTimeout):
        await read(response)


async def test_send_timeout(pool: UpstreamPool, raw_backend: RawBackend) -> None:
    async def never_reads(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await asyncio.sleep(10)  # (the behaviour: a backend that never reads)

    port = await raw_backend(never_reads)
    with pytest.raises(UpstreamTimeout, match="send"):
        await request(
            pool, "127.0.0.1", port, "POST", "/", HOST, b"x" * 64_000_000, None, Timeouts(send=0.3)
        )


async def test_reset_before_answer(pool: UpstreamPool, raw_backend: RawBackend) -> None:
    async def rst(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await read_head(reader)
        sock = writer.get_extra_info("socket")
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        writer.transport.abort()

    port = await raw_backend(rst)
    with pytest.raises(UpstreamReset):
        await get(pool, port, "/")


async def test_garbage_answer_is_reset(pool: UpstreamPool, raw_backend: RawBackend) -> None:
    async def garbage(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await read_head(reader)
        writer.write(b"SSH-2.0-OpenSSH\r\n\r\n")
        await asyncio.sleep(1)  # (the behaviour: the connection stays open after the garbage)

    port = await raw_backend(garbage)
    with pytest.raises(UpstreamReset, match="invalid"):
        await get(pool, port, "/")


async def test_early_answer_stops_the_upload(pool: UpstreamPool, echo: EchoBackend) -> None:
    async def endless() -> AsyncIterator[bytes]:
        for _ in range(2000):
            yield b"x" * 65536
            await asyncio.sleep(0)  # (the behaviour: an upload that lets the answer in between)

    response = await request(
        pool, "127.0.0.1", echo.port, "POST", "/_early", HOST, endless(), None, T
    )
    assert response.status == 413
    assert await read(response) == b"too big for me"


async def test_stale_keep_alive_connection_is_replayed(
    pool: UpstreamPool, raw_backend: RawBackend
) -> None:
    """A node that drops idle connections without saying so (the first request on each
    connection is answered, the second gets the connection closed)."""

    async def one_per_connection(
        reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        await read_head(reader)
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
        await writer.drain()
        await read_head(reader)
        writer.transport.abort()

    port = await raw_backend(one_per_connection)
    assert await read(await get(pool, port, "/1")) == b"ok"
    assert await read(await get(pool, port, "/2")) == b"ok"  # replayed on a new connection
    assert pool.connects == 2
    with pytest.raises(UpstreamReset):  # a POST is never replayed
        await request(pool, "127.0.0.1", port, "POST", "/", HOST, b"body", None, T)


async def test_max_requests_per_connection(echo: EchoBackend) -> None:
    pool = UpstreamPool(max_requests_per_connection=2)
    try:
        for _ in range(5):
            await read(await get(pool, echo.port, "/"))
        assert pool.connects == 3
    finally:
        await pool.close()


async def test_idle_connections_expire(echo: EchoBackend) -> None:
    pool = UpstreamPool(idle_timeout=0.1)
    try:
        await read(await get(pool, echo.port, "/"))
        assert pool.idle_count("127.0.0.1", echo.port) == 1
        await eventually(lambda: pool.idle_count("127.0.0.1", echo.port) == 0)
        await read(await get(pool, echo.port, "/"))
        assert pool.connects == 2
    finally:
        await pool.close()


async def test_unread_body_closes_the_connection(pool: UpstreamPool, echo: EchoBackend) -> None:
    response = await get(pool, echo.port, "/_big?size=1000000")
    response.close()
    await read(await get(pool, echo.port, "/"))
    assert pool.connects == 2


async def test_tls_upstream(
    pool: UpstreamPool, raw_backend: RawBackend, tls_material: TlsMaterial
) -> None:
    async def https(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while True:
            await read_head(reader)
            writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 6\r\n\r\nsecret")
            await writer.drain()

    port = await raw_backend(https, tls_material.server)
    tls_pool = UpstreamPool(ssl_context=tls_material.client)
    try:
        for _ in range(3):
            response = await request(
                tls_pool, "127.0.0.1", port, "GET", "/", HOST, None, None, T, True, "localhost"
            )
            assert await read(response) == b"secret"
        assert tls_pool.connects == 1
    finally:
        await tls_pool.close()
    # The default context verifies certificates: a self-signed one is a connect failure.
    with pytest.raises(ConnectFailed):
        await request(pool, "127.0.0.1", port, "GET", "/", HOST, None, None, T, True, "localhost")
