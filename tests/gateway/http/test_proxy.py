"""forward(): the gateway between real clients and real backends."""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import socket
import struct
import tracemalloc
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest

from portico.gateway.http import BodyTransform, Forwarding, Target, Timeouts, UpstreamResponse
from tests.support.waiting import eventually

from .conftest import (
    EchoBackend,
    GatewayFactory,
    RawBackend,
    ServerFactory,
    dead_port,
    raw_exchange,
    read_all,
    read_head,
)


def echoed(response: httpx.Response) -> dict[str, Any]:
    body: dict[str, Any] = response.json()
    return body


def headers_of(body: dict[str, Any]) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for name, value in body["headers"]:
        out.setdefault(name, []).append(value)
    return out


async def test_request_is_forwarded_with_forwarding_headers(
    gateway: GatewayFactory, echo: EchoBackend
) -> None:
    gw = await gateway([echo.target], extra_headers=[("X-Request-Id", "rid-1")])
    async with httpx.AsyncClient(base_url=gw.url) as client:
        response = await client.post(
            "/a/b%20c?x=1&y=2",
            content=b"payload",
            headers={
                "Host": "api.example.com",
                "X-Forwarded-For": "203.0.113.7",
                "X-Forwarded-Proto": "https",
                "X-Request-Id": "from-client",
                "User-Agent": "test/1",
            },
        )
    body = echoed(response)
    assert response.status_code == 200
    assert body["method"] == "POST" and body["target"] == "/a/b%20c?x=1&y=2"
    assert body["version"] == "HTTP/1.1" and body["body"] == "payload"
    h = headers_of(body)
    assert h["host"] == ["api.example.com"]
    assert h["x-forwarded-for"] == ["203.0.113.7, 127.0.0.1"]
    assert h["x-forwarded-proto"] == ["http"]
    assert h["x-forwarded-host"] == ["api.example.com"]
    assert h["x-request-id"] == ["rid-1"]
    assert h["user-agent"] == ["test/1"]
    assert h["content-length"] == ["7"]
    result = gw.results[-1]
    assert result.status == 200 and result.error is None
    assert result.upstream_addr == f"127.0.0.1:{echo.port}"
    assert result.request_bytes == 7 and result.response_bytes == len(response.content)
    assert result.upstream_seconds >= 0


async def test_hop_by_hop_request_headers_are_removed(
    gateway: GatewayFactory, echo: EchoBackend
) -> None:
    gw = await gateway([echo.target])
    raw = (
        b"GET /hop HTTP/1.1\r\nHost: h\r\nConnection: keep-alive, X-Private, close\r\n"
        b"X-Private: secret\r\nKeep-Alive: timeout=5\r\nProxy-Connection: keep-alive\r\n"
        b"TE: trailers\r\nTrailer: X-Sum\r\nUpgrade: h2c\r\nProxy-Authorization: Basic eA==\r\n"
        b"X-Kept: yes\r\n\r\n"
    )
    result = await raw_exchange(gw.port, raw)
    body = json.loads(result.data.split(b"\r\n\r\n", 1)[1])
    names = {name for name, _ in body["headers"]}
    for gone in (
        "connection",
        "x-private",
        "keep-alive",
        "proxy-connection",
        "te",
        "trailer",
        "upgrade",
        "proxy-authorization",
    ):
        assert gone not in names, gone
    assert ["x-kept", "yes"] in body["headers"]
    assert result.closed  # the client asked for close


async def test_hop_by_hop_response_headers_are_removed(
    gateway: GatewayFactory, echo: EchoBackend
) -> None:
    gw = await gateway([echo.target])
    async with httpx.AsyncClient(base_url=gw.url) as client:
        response = await client.get("/_hop")
    assert response.text == "hop"
    names = [name.lower() for name, _ in response.headers.multi_items()]
    for gone in ("x-private", "keep-alive", "proxy-connection", "trailer", "upgrade"):
        assert gone not in names, gone
    assert "proxy-authenticate" not in names
    assert response.headers.get_list("set-cookie") == ["a=1", "b=2"]
    assert response.headers["x-kept"] == "yes"
    assert "connection" not in names  # keep-alive is the HTTP/1.1 default


async def test_path_rewrite_keeps_the_query(gateway: GatewayFactory, echo: EchoBackend) -> None:
    from portico.gateway.http import Request, Responder, UpstreamPool, forward, serve, shutdown

    pool = UpstreamPool()

    async def handler(request: Request, responder: Responder) -> None:
        path = "/v2/items" if request.path == "/a" else "/v2?fixed=1"
        await forward(
            request,
            responder,
            Forwarding(path, "backend.internal", [], Timeouts()),
            pool=pool,
            targets=iter([echo.target, None]).__next__,
        )

    server = await serve(handler, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    try:
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}") as client:
            first = echoed(await client.get("/a?q=1"))
            second = echoed(await client.get("/b?q=2"))
    finally:
        await shutdown(server, grace=0.5)
        await pool.close()
    assert first["target"] == "/v2/items?q=1"
    assert second["target"] == "/v2?fixed=1&q=2"
    assert ["host", "backend.internal"] in first["headers"]


async def test_sequential_requests_use_one_upstream_connection(
    gateway: GatewayFactory, echo: EchoBackend
) -> None:
    gw = await gateway([echo.target])
    async with httpx.AsyncClient(base_url=gw.url) as client:
        peers = {echoed(await client.get(f"/{i}"))["peer_port"] for i in range(20)}
        await client.post("/", content=b"x" * 100_000)
        await client.get("/_stream?chunks=3")
        await client.head("/")
    assert len(peers) == 1
    assert gw.pool.connects == 1 and len(echo.connections) == 1


async def test_separate_clients_share_pooled_connections(
    gateway: GatewayFactory, echo: EchoBackend
) -> None:
    gw = await gateway([echo.target])
    for _ in range(5):  # a new client connection each time
        async with httpx.AsyncClient(base_url=gw.url) as client:
            assert (await client.get("/")).status_code == 200
    assert gw.pool.connects == 1


async def test_http10_client(gateway: GatewayFactory, echo: EchoBackend) -> None:
    gw = await gateway([echo.target])
    result = await raw_exchange(gw.port, b"GET /_stream?chunks=2 HTTP/1.0\r\nHost: h\r\n\r\n")
    head, body = result.data.split(b"\r\n\r\n", 1)
    assert head.startswith(b"HTTP/1.1 200") and b"connection: close" in head
    assert b"transfer-encoding" not in head
    assert body == b"0" * 10 + b"1" * 10
    assert result.closed
    async with httpx.AsyncClient(base_url=gw.url) as client:
        await client.get("/")
    assert gw.pool.connects == 1  # the upstream side stayed keep-alive


async def test_chunked_request_body_is_streamed(gateway: GatewayFactory, echo: EchoBackend) -> None:
    gw = await gateway([echo.target])
    parts = [bytes([i]) * 50_000 for i in range(40)]

    async def chunks() -> AsyncIterator[bytes]:
        for part in parts:
            yield part
            await asyncio.sleep(0)  # (the behaviour: the body comes in pieces, not at once)

    async with httpx.AsyncClient(base_url=gw.url) as client:
        body = echoed(await client.post("/", content=chunks()))
    assert body["body_len"] == 2_000_000
    assert body["body_sha256"] == hashlib.sha256(b"".join(parts)).hexdigest()
    assert ["transfer-encoding", "chunked"] in body["headers"]
    assert gw.results[-1].request_bytes == 2_000_000


async def test_chunked_response_is_relayed_as_it_comes(
    gateway: GatewayFactory, raw_backend: RawBackend
) -> None:
    # The node writes its next chunk only once the client has the one before: a gateway that
    # held the answer back for more would never deliver it (no timing involved).
    received = asyncio.Queue[bytes]()

    async def lockstep(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await read_head(reader)
        writer.write(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n")
        for n in range(5):
            writer.write(b"4\r\n%s\r\n" % (b"%d" % n * 4))
            await writer.drain()
            got = b""
            while len(got) < 4:
                got += await received.get()
        writer.write(b"0\r\n\r\n")
        await writer.drain()

    port = await raw_backend(lockstep)
    gw = await gateway([Target("127.0.0.1", port)])
    chunks: list[bytes] = []
    async with (
        asyncio.timeout(10),
        httpx.AsyncClient(base_url=gw.url) as client,
        client.stream("GET", "/") as response,
    ):
        assert response.headers["transfer-encoding"] == "chunked"
        async for chunk in response.aiter_raw():
            chunks.append(chunk)
            received.put_nowait(chunk)
    assert b"".join(chunks) == b"0000111122223333" + b"4444"


async def test_big_response_is_streamed_not_buffered(
    gateway: GatewayFactory, echo: EchoBackend
) -> None:
    size = 20 * 1024 * 1024
    gw = await gateway([echo.target])
    reader, writer = await asyncio.open_connection("127.0.0.1", gw.port)
    digest = hashlib.sha256()
    tracemalloc.start()
    try:
        writer.write(b"GET /_big?size=%d HTTP/1.1\r\nHost: h\r\n\r\n" % size)
        head = await read_head(reader)
        # (names are relayed as the node wrote them)
        assert b"content-length: %d" % size in head.lower()
        received = 0
        while received < size:
            chunk = await reader.read(256 * 1024)
            assert chunk
            digest.update(chunk)
            received += len(chunk)
            await asyncio.sleep(0.002)  # (the behaviour: a slower client than the backend)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
        writer.close()
    expected = hashlib.sha256((bytes(range(256)) * 256) * (size // 65536)).hexdigest()
    assert digest.hexdigest() == expected
    assert peak < 8 * 1024 * 1024, peak  # far less than the 20 MiB that went through


async def test_big_upload_is_streamed_not_buffered(
    gateway: GatewayFactory, echo: EchoBackend
) -> None:
    from portico.gateway.http import Limits

    size = 20 * 1024 * 1024
    gw = await gateway([echo.target], limits=Limits(max_body_bytes=64 * 1024 * 1024))
    reader, writer = await asyncio.open_connection("127.0.0.1", gw.port)
    block = b"u" * (1024 * 1024)
    tracemalloc.start()
    try:
        writer.write(
            b"PUT /?read_delay=0.001 HTTP/1.1\r\nHost: h\r\nContent-Length: %d\r\n\r\n" % size
        )
        for _ in range(size // len(block)):
            writer.write(block)
            await writer.drain()
        head = await asyncio.wait_for(read_head(reader), 20)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    length = int(head.lower().split(b"content-length: ")[1].split(b"\r\n")[0])
    body = json.loads(await reader.readexactly(length))
    writer.close()
    assert body["body_len"] == size
    assert body["body_sha256"] == hashlib.sha256(block * 20).hexdigest()
    assert peak < 8 * 1024 * 1024, peak


async def test_expect_continue_is_answered_by_the_gateway(
    gateway: GatewayFactory, echo: EchoBackend
) -> None:
    gw = await gateway([echo.target])
    reader, writer = await asyncio.open_connection("127.0.0.1", gw.port)
    try:
        writer.write(
            b"POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 70000\r\nExpect: 100-continue\r\n\r\n"
        )
        assert await asyncio.wait_for(read_head(reader), 2) == b"HTTP/1.1 100 Continue\r\n\r\n"
        writer.write(b"e" * 70000)
        head = await asyncio.wait_for(read_head(reader), 5)
        length = int(head.lower().split(b"content-length: ")[1].split(b"\r\n")[0])
        body = json.loads(await reader.readexactly(length))
    finally:
        writer.close()
    assert body["body_len"] == 70000
    assert "expect" not in {name for name, _ in body["headers"]}


async def test_on_response_hook_sets_headers(gateway: GatewayFactory, echo: EchoBackend) -> None:
    seen: list[int] = []

    def hook(
        response: UpstreamResponse, headers: list[tuple[str, str]]
    ) -> tuple[list[tuple[str, str]], BodyTransform | None]:
        seen.append(response.status)
        kept = [h for h in headers if h[0] != "x-kept"]
        return [*kept, ("X-Kept", "replaced"), ("X-Gateway", "portico")], None

    gw = await gateway([echo.target], on_response=hook)
    async with httpx.AsyncClient(base_url=gw.url) as client:
        response = await client.get("/_hop")
    assert seen == [200]
    assert response.headers.get_list("x-kept") == ["replaced"]
    assert response.headers["x-gateway"] == "portico"


async def test_head_and_status_pass_through(gateway: GatewayFactory, echo: EchoBackend) -> None:
    gw = await gateway([echo.target])
    async with httpx.AsyncClient(base_url=gw.url) as client:
        head = await client.head("/")
        created = await client.get("/_status?code=201")
        no_content = await client.get("/_status?code=204")
    assert head.status_code == 200 and head.content == b"" and int(head.headers["content-length"])
    assert created.status_code == 201 and created.text == "status body"
    assert no_content.status_code == 204 and no_content.content == b""


# -- failures -------------------------------------------------------------------------------


async def error_of(gw_url: str, path: str = "/") -> httpx.Response:
    async with httpx.AsyncClient(base_url=gw_url) as client:
        return await client.get(path)


async def test_refused_is_502(gateway: GatewayFactory) -> None:
    gw = await gateway([Target("127.0.0.1", dead_port())])
    response = await error_of(gw.url)
    assert response.status_code == 502
    assert response.json() == {"error_msg": "502 Bad Gateway"}
    assert response.headers["content-type"] == "application/json"
    assert gw.results[-1].status == 502 and "failed" in (gw.results[-1].error or "")
    assert gw.results[-1].error_kind == "connect"


async def test_connect_failure_retries_next_target(
    gateway: GatewayFactory, echo: EchoBackend
) -> None:
    dead = dead_port()
    gw = await gateway([Target("127.0.0.1", dead), echo.target], retries=1)
    response = await error_of(gw.url)
    assert response.status_code == 200
    assert gw.results[-1].upstream_addr == f"127.0.0.1:{dead}, 127.0.0.1:{echo.port}"
    assert gw.results[-1].error_kind is None


async def test_retries_are_bounded(gateway: GatewayFactory, echo: EchoBackend) -> None:
    gw = await gateway(
        [Target("127.0.0.1", dead_port()), Target("127.0.0.1", dead_port()), echo.target],
        retries=1,
    )
    assert (await error_of(gw.url)).status_code == 502
    assert echo.connections == set()


async def test_no_target_is_503(gateway: GatewayFactory) -> None:
    gw = await gateway([])
    response = await error_of(gw.url)
    assert response.status_code == 503
    assert gw.results[-1].upstream_addr is None
    assert gw.results[-1].error_kind == "no_node"


async def test_nodes_running_out_during_retries_is_the_last_failure(
    gateway: GatewayFactory,
) -> None:
    gw = await gateway([Target("127.0.0.1", dead_port())], retries=3)
    assert (await error_of(gw.url)).status_code == 502
    assert gw.results[-1].error_kind == "connect"


async def test_connect_timeout_is_504(gateway: GatewayFactory, blackhole_port: int) -> None:
    gw = await gateway([Target("127.0.0.1", blackhole_port)], timeouts=Timeouts(connect=0.2))
    response = await error_of(gw.url)
    assert response.status_code == 504
    assert response.json() == {"error_msg": "504 Gateway Timeout"}
    assert gw.results[-1].error_kind == "timeout"
    assert "timeout" in (gw.results[-1].error or "")


async def test_read_timeout_is_504(gateway: GatewayFactory, echo: EchoBackend) -> None:
    gw = await gateway([echo.target], timeouts=Timeouts(read=0.2))
    assert (await error_of(gw.url, "/_slow?delay=1")).status_code == 504
    assert gw.results[-1].error_kind == "timeout"
    assert gw.results[-1].error == "upstream read timeout"


async def test_send_timeout_is_504(gateway: GatewayFactory, raw_backend: RawBackend) -> None:
    from portico.gateway.http import Limits

    async def never_reads(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await asyncio.sleep(10)  # (the behaviour: a backend that never reads)

    port = await raw_backend(never_reads)
    gw = await gateway(
        [Target("127.0.0.1", port)],
        timeouts=Timeouts(send=0.3),
        limits=Limits(max_body_bytes=128 * 1024 * 1024),
    )
    async with httpx.AsyncClient(base_url=gw.url) as client:
        response = await client.post("/", content=b"x" * 64_000_000)
    assert response.status_code == 504


async def test_reset_is_502(gateway: GatewayFactory, raw_backend: RawBackend) -> None:
    async def rst(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await read_head(reader)
        writer.get_extra_info("socket").setsockopt(
            socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0)
        )
        writer.transport.abort()

    port = await raw_backend(rst)
    gw = await gateway([Target("127.0.0.1", port)], retries=3)
    assert (await error_of(gw.url)).status_code == 502
    assert gw.results[-1].upstream_addr == f"127.0.0.1:{port}"  # not retried
    assert gw.results[-1].error_kind == "reset"


async def test_no_retry_after_the_body_was_partly_sent(
    gateway: GatewayFactory, raw_backend: RawBackend, echo: EchoBackend
) -> None:
    async def reads_some_then_resets(
        reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        await read_head(reader)
        await reader.readexactly(10_000)
        writer.get_extra_info("socket").setsockopt(
            socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0)
        )
        writer.transport.abort()

    port = await raw_backend(reads_some_then_resets)
    gw = await gateway([Target("127.0.0.1", port), echo.target], retries=1)
    async with httpx.AsyncClient(base_url=gw.url) as client:
        response = await client.post("/", content=b"b" * 1_000_000)
    assert response.status_code == 502
    assert echo.connections == set()


async def test_truncated_upstream_body_truncates_the_client(
    gateway: GatewayFactory, echo: EchoBackend
) -> None:
    gw = await gateway([echo.target])
    result = await raw_exchange(gw.port, b"GET /_truncate HTTP/1.1\r\nHost: h\r\n\r\n")
    head, body = result.data.split(b"\r\n\r\n", 1)
    assert head.startswith(b"HTTP/1.1 200") and b"content-length: 100" in head.lower()
    assert body == b"0123456789"
    assert result.closed
    assert gw.results[-1].error and "mid-body" in gw.results[-1].error


async def test_client_gone_while_waiting_abandons_the_upstream(
    gateway: GatewayFactory, raw_backend: RawBackend, caplog: pytest.LogCaptureFixture
) -> None:
    forwarded = asyncio.Event()
    upstream_closed = asyncio.Event()

    async def silent(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await read_head(reader)
        forwarded.set()
        await reader.read()  # until the gateway hangs up
        upstream_closed.set()

    port = await raw_backend(silent)
    gw = await gateway([Target("127.0.0.1", port)], timeouts=Timeouts(read=30))
    _, writer = await asyncio.open_connection("127.0.0.1", gw.port)
    writer.write(b"GET / HTTP/1.1\r\nHost: h\r\n\r\n")
    await asyncio.wait_for(forwarded.wait(), 5)  # the gateway now waits for the answer
    writer.close()
    await asyncio.wait_for(upstream_closed.wait(), 3)
    await eventually(lambda: gw.results)
    assert gw.results[-1].status == 499
    assert gw.results[-1].error_kind == "client"
    # the handler's end, after the result: every task but this test's has finished
    await eventually(lambda: asyncio.all_tasks() == {asyncio.current_task()})
    # nobody is left to answer: not an error of the handler's
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR], caplog.text


async def test_early_upstream_answer_to_a_large_upload(
    gateway: GatewayFactory, echo: EchoBackend
) -> None:
    gw = await gateway([echo.target])
    async with httpx.AsyncClient(base_url=gw.url) as client:
        response = await client.post("/_early", content=b"z" * 4_000_000)
    assert response.status_code == 413 and response.text == "too big for me"


# -- WebSocket ------------------------------------------------------------------------------


async def test_websocket_upgrade_is_tunnelled(
    gateway: GatewayFactory, raw_backend: RawBackend
) -> None:
    seen_heads: list[bytes] = []

    async def ws_echo(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = await read_head(reader)
        seen_heads.append(head)
        writer.write(
            b"HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n"
            b"Sec-WebSocket-Accept: abc=\r\n\r\nserver-hello|"
        )
        while data := await reader.read(65536):
            writer.write(data)
        writer.close()

    port = await raw_backend(ws_echo)
    gw = await gateway([Target("127.0.0.1", port)])
    reader, writer = await asyncio.open_connection("127.0.0.1", gw.port)
    writer.write(
        b"GET /ws HTTP/1.1\r\nHost: h\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n"
        b"Sec-WebSocket-Key: x3JJHMbDL1EzLkh9GBhXDw==\r\nSec-WebSocket-Version: 13\r\n\r\n"
        b"early|"
    )
    head = await asyncio.wait_for(read_head(reader), 3)
    assert head.startswith(b"HTTP/1.1 101 ")
    assert b"upgrade: websocket" in head.lower() and b"connection: upgrade" in head.lower()
    assert b"sec-websocket-accept: abc=" in head.lower()
    assert await asyncio.wait_for(reader.readexactly(19), 3) == b"server-hello|early|"
    big = bytes(range(256)) * 4096
    writer.write(big)
    assert await asyncio.wait_for(reader.readexactly(len(big)), 5) == big
    writer.close()
    await eventually(lambda: gw.results)
    result = gw.results[-1]
    assert result.status == 101
    assert result.request_bytes == len(b"early|") + len(big)
    upstream_head = seen_heads[0].lower()
    assert b"upgrade: websocket" in upstream_head and b"connection: upgrade" in upstream_head


async def test_upgrade_refused_by_upstream_is_a_normal_response(
    gateway: GatewayFactory, echo: EchoBackend
) -> None:
    gw = await gateway([echo.target])
    result = await raw_exchange(
        gw.port,
        b"GET / HTTP/1.1\r\nHost: h\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n",
    )
    assert result.status == 200
    assert result.closed  # after a refused upgrade the connection is not reused
    body = json.loads(result.data.split(b"\r\n\r\n", 1)[1])
    assert ["upgrade", "websocket"] in body["headers"]


async def test_idle_tunnel_is_closed(gateway: GatewayFactory, raw_backend: RawBackend) -> None:
    async def ws(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await read_head(reader)
        writer.write(
            b"HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: x\r\n\r\n"
        )
        await reader.read()

    port = await raw_backend(ws)
    gw = await gateway([Target("127.0.0.1", port)], timeouts=Timeouts(read=0.3))
    reader, writer = await asyncio.open_connection("127.0.0.1", gw.port)
    writer.write(b"GET / HTTP/1.1\r\nHost: h\r\nConnection: upgrade\r\nUpgrade: x\r\n\r\n")
    result = await read_all(reader, 3)
    writer.close()
    assert result.data.startswith(b"HTTP/1.1 101") and result.closed


@pytest.mark.parametrize("method", ["GET", "DELETE", "OPTIONS", "PATCH"])
async def test_methods_pass_through(
    gateway: GatewayFactory, echo: EchoBackend, method: str
) -> None:
    gw = await gateway([echo.target])
    async with httpx.AsyncClient(base_url=gw.url) as client:
        response = await client.request(method, "/m")
    assert echoed(response)["method"] == method


async def test_upstream_failing_before_the_first_body_byte_is_504(
    gateway: GatewayFactory, echo: EchoBackend
) -> None:
    """The response head is held back until the first body byte, so a node that stalls right
    after its head still gets a clean error instead of a truncated response."""
    gw = await gateway([echo.target], timeouts=Timeouts(read=0.3))
    response = await error_of(gw.url, "/_stream?first_delay=1")
    assert response.status_code == 504
    assert response.json() == {"error_msg": "504 Gateway Timeout"}
    assert gw.results[-1].status == 504


async def test_upstream_header_too_big_is_502(
    gateway: GatewayFactory, raw_backend: RawBackend
) -> None:
    async def huge(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await read_head(reader)
        writer.write(b"HTTP/1.1 200 OK\r\nX-Big: " + b"b" * 100_000 + b"\r\n\r\n")
        await asyncio.sleep(1)  # (the behaviour: the connection stays open after the head)

    port = await raw_backend(huge)
    gw = await gateway([Target("127.0.0.1", port)])
    response = await error_of(gw.url)
    assert response.status_code == 502
    assert "too big" in (gw.results[-1].error or "")


async def test_upstream_response_smuggling_is_502(
    gateway: GatewayFactory, raw_backend: RawBackend
) -> None:
    async def ambiguous(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await read_head(reader)
        writer.write(
            b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n"
            b"0\r\n\r\nHTTP/1.1 200 OK\r\n"
        )
        await asyncio.sleep(1)  # (the behaviour: the connection stays open after the answer)

    port = await raw_backend(ambiguous)
    gw = await gateway([Target("127.0.0.1", port)])
    assert (await error_of(gw.url)).status_code == 502


async def test_http10_request_without_host(gateway: GatewayFactory, echo: EchoBackend) -> None:
    gw = await gateway([echo.target])
    result = await raw_exchange(gw.port, b"GET /x HTTP/1.0\r\n\r\n")
    body = json.loads(result.data.split(b"\r\n\r\n", 1)[1])
    names = [name for name, _ in body["headers"]]
    assert "x-forwarded-host" not in names
    assert ["x-forwarded-for", "127.0.0.1"] in body["headers"]


async def test_body_read_before_forwarding_still_reaches_the_upstream(
    echo: EchoBackend, http_server: ServerFactory
) -> None:
    from portico.gateway.http import Request, Responder, UpstreamPool, forward

    pool = UpstreamPool()
    inspected: list[bytes] = []

    async def inspect_then_forward(request: Request, responder: Responder) -> None:
        inspected.append(await request.body.read())  # a WAF-like plugin looks at the body
        await forward(
            request,
            responder,
            Forwarding(request.path, "h", [], Timeouts()),
            pool=pool,
            targets=iter([echo.target, None]).__next__,
        )

    port = await http_server(inspect_then_forward)
    try:
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}") as client:
            body = echoed(await client.post("/", content=b"inspected payload"))
    finally:
        await pool.close()
    assert inspected == [b"inspected payload"]
    assert body["body"] == "inspected payload"
