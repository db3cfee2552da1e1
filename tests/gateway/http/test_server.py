"""The HTTP server on its own: framing, keep-alive, pipelining, 100-continue, limits, errors."""

from __future__ import annotations

import asyncio
import hashlib
import json
from collections.abc import AsyncIterator, Awaitable

import httpx
import pytest

from portico.gateway.http import (
    TAKEN,
    Handler,
    Limits,
    Request,
    RequestBody,
    Responder,
    Taken,
)
from portico.gateway.http.body import HIGH_WATER
from tests.support.waiting import eventually

from .conftest import ServerFactory, raw_exchange, read_all


async def hello(request: Request, responder: Responder) -> None:
    responder.send(200, [("content-type", "text/plain")], b"hello")


async def echo_body(request: Request, responder: Responder) -> None:
    body = await request.body.read()
    payload = {
        "method": request.method,
        "target": request.target,
        "path": request.path,
        "query": request.query,
        "headers": request.headers,
        "len": len(body),
        "sha": hashlib.sha256(body).hexdigest(),
        "client": [request.client_ip, request.client_port],
        "content_length": request.content_length,
        "keep_alive": request.keep_alive,
    }
    responder.send(200, [("content-type", "application/json")], json.dumps(payload).encode())


async def streamed(request: Request, responder: Responder) -> None:
    responder.start(200, [("content-type", "text/plain")])
    for part in (b"one,", b"two,", b"three"):
        await responder.write(part)
    responder.end()


async def test_keep_alive_reuses_the_connection(http_server: ServerFactory) -> None:
    port = await http_server(echo_body)
    async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}") as client:
        first = (await client.get("/a/b?x=1&y=%20")).json()
        second = (await client.post("/c", content=b"payload")).json()
    assert first["client"] == second["client"]
    assert first["method"] == "GET" and first["target"] == "/a/b?x=1&y=%20"
    assert first["path"] == "/a/b" and first["query"] == "x=1&y=%20"
    assert first["keep_alive"] is True and first["content_length"] is None
    assert second["len"] == 7 and second["content_length"] == 7
    assert ["host", f"127.0.0.1:{port}"] in first["headers"]


async def test_header_names_are_lower_cased_and_kept_in_order(http_server: ServerFactory) -> None:
    port = await http_server(echo_body)
    raw = (
        b"GET / HTTP/1.1\r\nHost: x\r\nX-One: 1\r\nX-CUSTOM-Thing: a\r\nx-one: 2\r\n"
        b"Connection: close\r\n\r\n"
    )
    result = await raw_exchange(port, raw)
    body = json.loads(result.data.split(b"\r\n\r\n", 1)[1])
    assert body["headers"] == [
        ["host", "x"],
        ["x-one", "1"],
        ["x-custom-thing", "a"],
        ["x-one", "2"],
        ["connection", "close"],
    ]
    assert result.closed
    assert b"connection: close\r\n" in result.data


async def test_request_header_lookup_is_case_insensitive() -> None:
    from portico.gateway.http.body import EMPTY_BODY

    request = Request(
        "GET", "/", "/", "", [("x-a", "1"), ("x-a", "2")], "1.2.3.4", 1, "http", True, False,
        None, EMPTY_BODY,
    )  # fmt: skip
    assert request.header("X-A") == "1"
    assert request.header("x-b") is None


async def test_chunked_response_without_content_length(http_server: ServerFactory) -> None:
    port = await http_server(streamed)
    result = await raw_exchange(
        port, b"GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", wait=2
    )
    head, body = result.data.split(b"\r\n\r\n", 1)
    assert b"transfer-encoding: chunked" in head
    assert body == b"4\r\none,\r\n4\r\ntwo,\r\n5\r\nthree\r\n0\r\n\r\n"
    async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}") as client:
        assert (await client.get("/")).text == "one,two,three"


async def test_http10_client_gets_close_semantics(http_server: ServerFactory) -> None:
    port = await http_server(streamed)
    result = await raw_exchange(port, b"GET / HTTP/1.0\r\n\r\n")
    head, body = result.data.split(b"\r\n\r\n", 1)
    assert head.startswith(b"HTTP/1.1 200 OK")
    assert b"transfer-encoding" not in head and b"connection: close" in head
    assert body == b"one,two,three"  # delimited by the close
    assert result.closed


async def test_http10_keep_alive_when_asked_and_length_known(http_server: ServerFactory) -> None:
    port = await http_server(hello)
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        for _ in range(2):
            writer.write(b"GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n")
            head = await reader.readuntil(b"\r\n\r\n")
            assert b"connection: keep-alive" in head.lower()
            assert await reader.readexactly(5) == b"hello"
    finally:
        writer.close()


async def test_request_bodies_content_length_and_chunked(http_server: ServerFactory) -> None:
    port = await http_server(echo_body)
    payload = bytes(range(256)) * 4096  # 1 MiB

    async def chunks() -> AsyncIterator[bytes]:
        for i in range(0, len(payload), 100_000):
            yield payload[i : i + 100_000]

    async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}") as client:
        fixed = (await client.post("/", content=payload)).json()
        chunked = (await client.post("/", content=chunks())).json()
    digest = hashlib.sha256(payload).hexdigest()
    assert fixed["len"] == chunked["len"] == len(payload)
    assert fixed["sha"] == chunked["sha"] == digest
    assert ["transfer-encoding", "chunked"] in chunked["headers"]
    assert chunked["content_length"] is None


async def test_chunk_extensions_and_trailers_are_accepted(http_server: ServerFactory) -> None:
    port = await http_server(echo_body)
    raw = (
        b"POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n"
        b"5;ext=1\r\nhello\r\n6\r\n world\r\n0\r\nX-Trailer: t\r\n\r\n"
    )
    result = await raw_exchange(port, raw)
    body = json.loads(result.data.split(b"\r\n\r\n", 1)[1])
    assert body["len"] == 11
    assert ["x-trailer", "t"] not in body["headers"]


async def test_pipelined_requests_answered_in_order(http_server: ServerFactory) -> None:
    async def slow_first(request: Request, responder: Responder) -> None:
        if request.path == "/1":
            await asyncio.sleep(0.05)  # (the behaviour: the first answer is the slowest)
        responder.send(200, [], request.path.encode())

    port = await http_server(slow_first)
    raw = b"".join(
        b"GET /%d HTTP/1.1\r\nHost: x\r\n%s\r\n" % (i, b"Connection: close\r\n" if i == 3 else b"")
        for i in (1, 2, 3)
    )
    result = await raw_exchange(port, raw)
    responses = result.responses()
    assert [r.rsplit(b"\r\n\r\n", 1)[1] for r in responses] == [b"/1", b"/2", b"/3"]
    assert result.closed


async def test_head_response_has_no_body(http_server: ServerFactory) -> None:
    port = await http_server(streamed)
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        writer.write(b"HEAD / HTTP/1.1\r\nHost: x\r\n\r\nGET / HTTP/1.1\r\nHost: x\r\n\r\n")
        head = await reader.readuntil(b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 200") and b"transfer-encoding" not in head
        second = await reader.readuntil(b"\r\n\r\n")  # nothing between the two heads
        assert second.startswith(b"HTTP/1.1 200") and b"transfer-encoding: chunked" in second
    finally:
        writer.close()


async def test_handler_exception_is_500_json_without_details(http_server: ServerFactory) -> None:
    async def broken(request: Request, responder: Responder) -> None:
        raise RuntimeError("secret internals /etc/passwd")

    port = await http_server(broken)
    async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}") as client:
        response = await client.get("/")
    assert response.status_code == 500
    assert response.headers["content-type"] == "application/json"
    assert response.json() == {"error_msg": "500 Internal Server Error"}
    assert "secret" not in response.text


async def test_handler_exception_after_start_closes_connection(http_server: ServerFactory) -> None:
    async def half(request: Request, responder: Responder) -> None:
        responder.start(200, [])
        await responder.write(b"partial")
        raise RuntimeError("boom")

    port = await http_server(half)
    result = await raw_exchange(port, b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
    assert result.closed
    assert result.data.startswith(b"HTTP/1.1 200")
    assert not result.data.endswith(b"0\r\n\r\n")  # no terminating chunk: visibly truncated
    assert b"boom" not in result.data


async def test_handler_without_response_is_500(http_server: ServerFactory) -> None:
    async def silent(request: Request, responder: Responder) -> None:
        return None

    port = await http_server(silent)
    result = await raw_exchange(port, b"GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
    assert result.status == 500


async def test_send_error_is_apisix_shaped(http_server: ServerFactory) -> None:
    async def not_found(request: Request, responder: Responder) -> None:
        responder.send_error(404, "404 Route Not Found")

    port = await http_server(not_found)
    async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}") as client:
        response = await client.get("/nowhere")
    assert response.status_code == 404
    assert response.content == b'{"error_msg":"404 Route Not Found"}'
    assert response.headers["content-length"] == str(len(response.content))


async def test_response_header_injection_is_refused(http_server: ServerFactory) -> None:
    async def inject(request: Request, responder: Responder) -> None:
        responder.send(200, [("x-a", "1\r\nSet-Cookie: evil=1")], b"")

    port = await http_server(inject)
    result = await raw_exchange(port, b"GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
    assert result.status == 500
    assert b"evil" not in result.data


async def test_expect_100_continue(http_server: ServerFactory) -> None:
    port = await http_server(echo_body)
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        writer.write(
            b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nExpect: 100-continue\r\n\r\n"
        )
        interim = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 2)
        assert interim == b"HTTP/1.1 100 Continue\r\n\r\n"
        writer.write(b"hello")
        head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 2)
        assert head.startswith(b"HTTP/1.1 200")
    finally:
        writer.close()


async def test_unsupported_expectation_is_417(http_server: ServerFactory) -> None:
    port = await http_server(echo_body)
    result = await raw_exchange(
        port, b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\nExpect: magic\r\n\r\nx"
    )
    assert result.status == 417 and result.closed


def test_refusals_keep_their_status_in_a_thread_handling_an_exception() -> None:
    """A server whose loop runs inside an ``except`` block (an embedding application's error
    path, or a test runner's) still answers 417, 413 and 431: Python gives the parser's error
    the exception being handled as its context, in place of the callback's refusal."""
    from portico.gateway.http.server import serve, shutdown

    async def scenario() -> list[int]:
        server = await serve(echo_body, "127.0.0.1", 0, limits=Limits(max_body_bytes=1024))
        port = server.sockets[0].getsockname()[1]
        heads = [
            b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\nExpect: magic\r\n\r\nx",
            b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 4096\r\n\r\n",
            b"GET / HTTP/1.1\r\nHost: x\r\n" + b"X-A: b\r\n" * 200 + b"\r\n",
        ]
        try:
            return [(await raw_exchange(port, head)).status for head in heads]
        finally:
            await shutdown(server, grace=0.5)

    try:
        raise ConnectionError("an error being handled when the server runs")
    except ConnectionError:
        statuses = asyncio.run(scenario())
    assert statuses == [417, 413, 431]


async def test_unread_body_is_discarded_and_connection_reused(http_server: ServerFactory) -> None:
    port = await http_server(hello)
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        writer.write(b"POST /a HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\n01234")
        head = await reader.readuntil(b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 200") and b"connection: close" not in head
        assert await reader.readexactly(5) == b"hello"
        writer.write(b"56789GET /b HTTP/1.1\r\nHost: x\r\n\r\n")
        head = await reader.readuntil(b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 200")
    finally:
        writer.close()


async def test_request_body_back_pressure(http_server: ServerFactory) -> None:
    """A handler that does not read its body stops the server from reading the socket."""
    go = asyncio.Event()
    seen: dict[str, int] = {}
    bodies: list[RequestBody] = []

    async def late_reader(request: Request, responder: Responder) -> None:
        bodies.append(request.body)
        await go.wait()
        seen["buffered_before_reading"] = request.body.buffered
        total = 0
        async for chunk in request.body:
            total += len(chunk)
        responder.send(200, [], str(total).encode())

    port = await http_server(late_reader, Limits(max_body_bytes=64 * 1024 * 1024))
    size = 32 * 1024 * 1024
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        writer.write(b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n" % size)
        block = b"x" * (1024 * 1024)
        sent = 0

        async def send_all() -> None:
            nonlocal sent
            for _ in range(size // len(block)):
                writer.write(block)
                await writer.drain()
                sent += len(block)

        sender = asyncio.create_task(send_all())
        # the server stops reading past its high-water mark, then the client's own buffer
        # fills past its own: the client is blocked, nobody reads
        await eventually(lambda: bodies and bodies[0].buffered > HIGH_WATER)
        transport = writer.transport
        await eventually(
            lambda: transport.get_write_buffer_size() > transport.get_write_buffer_limits()[1]
        )
        assert sent < size
        go.set()
        await asyncio.wait_for(sender, 20)
        head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 20)
        assert head.startswith(b"HTTP/1.1 200")
        assert await reader.readexactly(len(str(size))) == str(size).encode()
    finally:
        writer.close()
    assert seen["buffered_before_reading"] <= 2 * 1024 * 1024


async def test_idle_keep_alive_connection_is_closed(http_server: ServerFactory) -> None:
    port = await http_server(hello, Limits(keepalive_timeout=0.2))
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        writer.write(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
        result = await read_all(reader, 3)
        assert result.data.startswith(b"HTTP/1.1 200") and result.closed
    finally:
        writer.close()


async def test_absolute_form_target(http_server: ServerFactory) -> None:
    port = await http_server(echo_body)
    result = await raw_exchange(
        port, b"GET http://example.com/p?q=1 HTTP/1.1\r\nHost: other\r\nConnection: close\r\n\r\n"
    )
    body = json.loads(result.data.split(b"\r\n\r\n", 1)[1])
    assert body["path"] == "/p" and body["query"] == "q=1"
    assert ["host", "example.com"] in body["headers"]


async def test_exception_after_start_but_before_any_byte_is_500(
    http_server: ServerFactory,
) -> None:
    async def late_failure(request: Request, responder: Responder) -> None:
        responder.start(200, [("content-type", "text/plain")])
        raise RuntimeError("before the first byte")

    port = await http_server(late_failure)
    result = await raw_exchange(port, b"GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
    assert result.status == 500
    assert result.data.endswith(b'{"error_msg":"500 Internal Server Error"}')


async def test_broken_pipelined_request_is_answered_after_the_good_one(
    http_server: ServerFactory,
) -> None:
    port = await http_server(hello)
    raw = (
        b"GET /1 HTTP/1.1\r\nHost: x\r\n\r\nGET /2 HTTP/1.1\r\nHost: x\r\nContent-Length: x\r\n\r\n"
    )
    result = await raw_exchange(port, raw)
    statuses = [int(r.split(b" ", 2)[1]) for r in result.responses()]
    assert statuses == [200, 400]
    assert result.closed


async def test_refusal_reaches_a_client_still_sending(http_server: ServerFactory) -> None:
    """413 for a declared length while the client keeps sending: the answer must not be lost
    to a reset (lingering close)."""
    port = await http_server(hello, Limits(max_body_bytes=1024 * 1024))
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    size = 16 * 1024 * 1024
    writer.write(b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n" % size)

    async def keep_sending() -> None:
        block = b"s" * 65536
        for _ in range(size // len(block)):
            if writer.is_closing():
                return
            writer.write(block)
            try:
                await writer.drain()
            except ConnectionError:
                return

    sender = asyncio.create_task(keep_sending())
    try:
        head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 5)
    finally:
        sender.cancel()
        writer.transport.abort()
    assert head.startswith(b"HTTP/1.1 413 ")


async def test_shutdown_finishes_requests_in_flight(http_server: ServerFactory) -> None:
    from portico.gateway.http import serve, shutdown

    started, release = asyncio.Event(), asyncio.Event()

    async def slow(request: Request, responder: Responder) -> None:
        started.set()
        await release.wait()
        responder.send(200, [], b"done")

    server = await serve(slow, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    busy_reader, busy_writer = await asyncio.open_connection("127.0.0.1", port)
    idle_reader, idle_writer = await asyncio.open_connection("127.0.0.1", port)
    busy_writer.write(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
    await asyncio.wait_for(started.wait(), 5)  # in flight
    closing = asyncio.create_task(shutdown(server, grace=3))
    assert await asyncio.wait_for(idle_reader.read(), 2) == b""  # idle: closed at once
    release.set()
    result = await read_all(busy_reader, 2)
    await closing
    busy_writer.close()
    idle_writer.close()
    assert result.data.startswith(b"HTTP/1.1 200") and result.data.endswith(b"done")
    assert b"connection: close" in result.data and result.closed
    try:
        _, writer = await asyncio.open_connection("127.0.0.1", port)
    except OSError:
        pass
    else:
        writer.close()
        raise AssertionError("still listening")


async def test_a_header_with_a_line_break_never_splits_the_response(
    http_server: ServerFactory,
) -> None:
    """A handler (a plugin's header) writing CR or LF into a header gets a 500, never a
    second, attacker-shaped header or response on the wire."""
    cases = [
        ("x-a", "one\r\nset-cookie: stolen=1"),
        ("x-b", "bare\nlf"),
        ("x-c", "bare\rcr"),
        ("x-d\r\nx-e", "in the name"),
    ]
    for name, value in cases:
        header = (name, value)

        async def handler(
            request: Request, responder: Responder, header: tuple[str, str] = header
        ) -> None:
            responder.send(200, [("content-type", "text/plain"), header], b"x")

        port = await http_server(handler)
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}") as client:
            response = await client.get("/")
        assert response.status_code == 500, (name, value)
        assert "stolen" not in str(response.headers)
        assert "x-e" not in response.headers


# -- handlers that answer without a coroutine (None) or take the request over (TAKEN) -------


PIPELINED = b"".join(
    f"GET /{n} HTTP/1.1\r\nHost: x\r\n{'Connection: close' if n == 3 else ''}\r\n\r\n".encode()
    for n in (1, 2, 3)
)


def bodies(data: bytes) -> list[bytes]:
    return [part.rsplit(b"\r\n\r\n", 1)[1] for part in data.split(b"HTTP/1.1 ")[1:]]


async def test_a_handler_that_answers_at_once_serves_pipelined_requests_in_order(
    http_server: ServerFactory,
) -> None:
    def at_once(request: Request, responder: Responder) -> None:
        responder.send(200, [("content-type", "text/plain")], request.path.encode())

    port = await http_server(at_once)
    result = await raw_exchange(port, PIPELINED)
    assert result.closed
    assert bodies(result.data) == [b"/1", b"/2", b"/3"]


async def test_a_taken_request_holds_the_next_one_until_finished(
    http_server: ServerFactory,
) -> None:
    loop = asyncio.get_running_loop()
    finished: list[str] = []

    def later(request: Request, responder: Responder) -> Taken:
        def finish() -> None:
            responder.send(200, [], request.path.encode())
            finished.append(request.path)
            responder.finish()

        loop.call_later(0.05 if request.path == "/1" else 0.0, finish)
        return TAKEN

    port = await http_server(later)
    result = await raw_exchange(port, PIPELINED)
    assert bodies(result.data) == [b"/1", b"/2", b"/3"]
    assert finished == ["/1", "/2", "/3"] and result.closed


async def test_a_taken_request_may_go_on_in_a_coroutine(http_server: ServerFactory) -> None:
    def deferred(request: Request, responder: Responder) -> Taken:
        async def rest() -> None:
            responder.start(200, [])
            for part in (request.path.encode(), b"!"):
                await asyncio.sleep(0.01)  # (the behaviour: the coroutine goes on later)
                await responder.write(part)

        asyncio.get_running_loop().call_soon(responder.defer, rest())
        return TAKEN

    port = await http_server(deferred)
    result = await raw_exchange(port, PIPELINED)
    chunked = [b"2\r\n/%d\r\n1\r\n!\r\n0\r\n\r\n" % n for n in (1, 2, 3)]
    at = [result.data.find(body) for body in chunked]
    assert -1 not in at and at == sorted(at) and result.closed


async def test_a_handler_failing_at_once_or_when_finishing_answers_500_and_serves_on(
    http_server: ServerFactory,
) -> None:
    def failing(request: Request, responder: Responder) -> Taken | None:
        if request.path == "/1":
            raise RuntimeError("broken at once")
        if request.path == "/2":
            asyncio.get_running_loop().call_soon(responder.finish, RuntimeError("broken later"))
            return TAKEN
        responder.send(200, [], b"fine")
        return None

    port = await http_server(failing)
    result = await raw_exchange(port, PIPELINED)
    statuses = [int(part.split(b" ", 1)[0]) for part in result.data.split(b"HTTP/1.1 ")[1:]]
    assert statuses == [500, 500, 200]
    assert bodies(result.data)[2] == b"fine"


async def test_a_taken_request_that_never_answers_gets_a_500_when_finished(
    http_server: ServerFactory,
) -> None:
    def silent(request: Request, responder: Responder) -> Taken:
        asyncio.get_running_loop().call_soon(responder.finish)
        return TAKEN

    port = await http_server(silent)
    result = await raw_exchange(port, b"GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
    assert result.status == 500 and result.closed


def body_reader(seen: list[tuple[str, bool]]) -> Handler:
    """A handler that answers at once with the body when it is complete as the handler starts
    (recording that), else reads it in a coroutine first."""

    def handler(request: Request, responder: Responder) -> Awaitable[None] | None:
        whole = request.body.peek_complete()
        seen.append((request.path, whole is not None))
        if whole is not None:
            responder.send(200, [], whole)
            return None

        async def later() -> None:
            responder.send(200, [], await request.body.read())

        return later()

    return handler


async def test_a_body_that_came_with_its_head_is_complete_when_the_handler_starts(
    http_server: ServerFactory,
) -> None:
    seen: list[tuple[str, bool]] = []
    port = await http_server(body_reader(seen))
    result = await raw_exchange(
        port,
        b"POST /length HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello"
        b"POST /chunked HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
        b"3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n"
        b"POST /last HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok",
    )
    assert bodies(result.data) == [b"hello", b"abcde", b"ok"] and result.closed
    assert seen == [("/length", True), ("/chunked", True), ("/last", True)]


@pytest.mark.parametrize(
    "head",
    [b"Content-Length: 10\r\n", b"Transfer-Encoding: chunked\r\n"],
    ids=["content-length", "chunked"],
)
async def test_a_body_in_several_reads_is_read_as_it_comes(
    http_server: ServerFactory, head: bytes
) -> None:
    seen: list[tuple[str, bool]] = []
    port = await http_server(body_reader(seen))
    chunked = head.startswith(b"Transfer")
    first, rest = (
        (b"5\r\n01234\r\n", b"5\r\n56789\r\n0\r\n\r\n") if chunked else (b"01234", b"56789")
    )
    request = b"POST /slow HTTP/1.1\r\nHost: x\r\nConnection: close\r\n" + head + b"\r\n"
    result = await raw_exchange(port, [request + first, rest], gap=0.05)
    assert bodies(result.data) == [b"0123456789"]
    assert seen == [("/slow", False)]


@pytest.mark.parametrize("gap", [0.0, 0.05], ids=["whole", "several-reads"])
async def test_a_chunked_body_over_the_limit_is_a_413(
    http_server: ServerFactory, gap: float
) -> None:
    async def reader(request: Request, responder: Responder) -> None:
        responder.send(200, [], await request.body.read())

    port = await http_server(reader, Limits(max_body_bytes=8))
    head = b"POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
    result = await raw_exchange(
        port, [head + b"5\r\n01234\r\n", b"5\r\n56789\r\n0\r\n\r\n"], gap=gap
    )
    assert result.status == 413 and result.closed
