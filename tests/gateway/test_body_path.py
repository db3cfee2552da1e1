"""Requests with a body through the gateway, by the path each one takes: a body that came whole
with its head (Content-Length or chunked) is handed to the handler complete and, with an idle
pooled connection, forwarded by callbacks (``Gateway.handle`` returns ``TAKEN``); one still
arriving when its head's read is over streams in a coroutine. Either way the node gets exactly
the client's body, the plugins that read it decide the same, and the size limit holds. Each
through real sockets; a body sent "slowly" is written in two parts with a pause between them,
so that its head's read ends before the rest comes."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator, Coroutine, Iterator
from typing import Any

import pytest

from portico.gateway.gateway import Gateway
from portico.gateway.http import TAKEN, Limits, Request, Responder, Taken
from portico.gateway.http.server import serve, shutdown
from portico.gateway.node_options import GatewayOptions
from tests.gateway.test_callback_path import FROZEN_NOW, OK, Answer, Backend, Outcomes
from tests.gateway.test_pipeline import HOST, plugin, snapshot
from tests.support.openai_server import OpenAIServer

CHAT = json.dumps(
    {"model": "client-model", "messages": [{"role": "user", "content": "the weather in Lisbon?"}]}
).encode()


class Paths:
    """The gateway's handler, recording how it went on with each request: ``at once``,
    ``callbacks`` (``TAKEN``) or ``coroutine``."""

    def __init__(self, gw: Gateway) -> None:
        self.gw = gw
        self.taken: list[str] = []

    def __call__(
        self, request: Request, responder: Responder
    ) -> Coroutine[Any, Any, None] | Taken | None:
        result = self.gw.handle(request, responder)
        self.taken.append(
            "at once" if result is None else "callbacks" if result is TAKEN else "coroutine"
        )
        return result


@contextlib.asynccontextmanager
async def gateway_with_paths(
    answer: Answer,
    plugins: list[dict[str, Any]] | None = None,
    limits: Limits = Limits(),
    egress_allow: tuple[str, ...] = (),
    backend_port: int | None = None,
) -> AsyncIterator[tuple[int, Backend, Outcomes, Paths]]:
    backend = Backend(answer)
    port_of_backend = await backend.start()
    gw = Gateway(options=GatewayOptions(egress_allow=egress_allow), now=lambda: FROZEN_NOW)
    outcomes = Outcomes()
    gw.observers.append(outcomes.observe)
    await gw.apply(snapshot(backend_port or port_of_backend, plugins or []))
    paths = Paths(gw)
    server = await serve(paths, "127.0.0.1", 0, limits=limits)
    try:
        yield server.sockets[0].getsockname()[1], backend, outcomes, paths
    finally:
        await shutdown(server, grace=0.5)
        await gw.close()
        await backend.stop()


async def read_request_body(head: bytes, reader: asyncio.StreamReader) -> bytes:
    """The body of the request whose ``head`` was just read (by its Content-Length, or its
    chunks)."""
    lines = head.decode("latin-1").lower().split("\r\n")
    fields = dict(line.split(": ", 1) for line in lines[1:] if ": " in line)
    if fields.get("transfer-encoding") == "chunked":
        parts = []
        while size := int((await reader.readuntil(b"\r\n")).split(b";")[0], 16):
            parts.append(await reader.readexactly(size))
            await reader.readexactly(2)
        await reader.readuntil(b"\r\n")
        return b"".join(parts)
    return await reader.readexactly(int(fields.get("content-length", "0")))


class Recorded:
    """A backend answer that records each request's body and echoes its length."""

    def __init__(self) -> None:
        self.bodies: list[bytes] = []

    async def __call__(
        self, number: int, head: bytes, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        body = await read_request_body(head, reader)
        self.bodies.append(body)
        answer = b"got %d" % len(body)
        writer.write(b"HTTP/1.1 200 OK\r\ncontent-length: %d\r\n\r\n%s" % (len(answer), answer))
        await writer.drain()


def post(path: str, body: bytes, *, chunked: bool = False, method: str = "POST") -> bytes:
    if chunked:
        framed = b"%x\r\n%s\r\n0\r\n\r\n" % (len(body), body)
        return (
            f"{method} {path} HTTP/1.1\r\nHost: {HOST}\r\nTransfer-Encoding: chunked\r\n\r\n"
        ).encode() + framed
    head = f"{method} {path} HTTP/1.1\r\nHost: {HOST}\r\nContent-Length: {len(body)}\r\n\r\n"
    return head.encode() + body


async def exchange(
    port: int, *requests: bytes, slowly: bool = False
) -> list[tuple[int, dict[str, str], bytes]]:
    """Each request on one client connection, after the answer to the one before; ``slowly``:
    each written in two parts (the head with half of its body, then the rest) with a pause."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    answers = []
    try:
        for raw in requests:
            if slowly:
                cut = raw.index(b"\r\n\r\n") + 4 + (len(raw) - raw.index(b"\r\n\r\n") - 4) // 2
                writer.write(raw[:cut])
                await writer.drain()
                await asyncio.sleep(0.05)  # (the behaviour: the rest of the body comes later)
                writer.write(raw[cut:])
            else:
                writer.write(raw)
            head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 10)
            lines = head.decode("latin-1").split("\r\n")
            headers = dict(line.lower().split(": ", 1) for line in lines[1:] if line)
            body = await reader.readexactly(int(headers.get("content-length", "0")))
            answers.append((int(lines[0].split(" ")[1]), headers, body))
    finally:
        writer.transport.abort()
    return answers


async def test_a_body_that_came_with_its_head_is_forwarded_by_callbacks() -> None:
    recorded = Recorded()
    async with gateway_with_paths(recorded) as (port, backend, outcomes, paths):
        answers = await exchange(port, post("/a", CHAT), post("/b", CHAT), post("/c", b"x"))
    assert [(status, body) for status, _, body in answers] == [
        (200, b"got %d" % len(CHAT)),
        (200, b"got %d" % len(CHAT)),
        (200, b"got 1"),
    ]
    # the first finds no pooled connection: it connects in a coroutine; the others reuse it
    assert paths.taken == ["coroutine", "callbacks", "callbacks"]
    assert recorded.bodies == [CHAT, CHAT, b"x"] and backend.connections == 1
    assert b"content-length: %d\r\n" % len(CHAT) in backend.heads[1]
    assert [ctx.request_bytes for ctx in outcomes.seen] == [len(CHAT), len(CHAT), 1]


async def test_a_chunked_body_that_came_with_its_head_is_forwarded_whole() -> None:
    recorded = Recorded()
    async with gateway_with_paths(recorded) as (port, backend, _outcomes, paths):
        answers = await exchange(port, post("/a", CHAT), post("/b", CHAT, chunked=True))
    assert [status for status, _, _ in answers] == [200, 200]
    assert paths.taken == ["coroutine", "callbacks"]
    assert recorded.bodies == [CHAT, CHAT]
    # a whole body goes with its length, as the coroutine path sends one
    assert b"content-length: %d\r\n" % len(CHAT) in backend.heads[1]
    assert b"transfer-encoding" not in backend.heads[1].lower()


@pytest.mark.parametrize("chunked", [False, True], ids=["content-length", "chunked"])
async def test_a_body_still_arriving_streams_in_a_coroutine(chunked: bool) -> None:
    recorded = Recorded()
    payload = bytes(range(256)) * 64
    async with gateway_with_paths(recorded) as (port, _backend, _outcomes, paths):
        warm = await exchange(port, post("/warm", b"w"))
        answers = await exchange(port, post("/slow", payload, chunked=chunked), slowly=True)
    assert warm[0][0] == 200
    assert answers[0][0] == 200 and answers[0][2] == b"got %d" % len(payload)
    assert paths.taken == ["coroutine", "coroutine"]
    assert recorded.bodies == [b"w", payload]


async def test_a_body_larger_than_a_small_one_goes_in_a_coroutine_even_when_complete() -> None:
    recorded = Recorded()
    payload = b"y" * (64 * 1024 + 1)  # (callback_forward.SMALL_BODY + 1)
    async with gateway_with_paths(recorded) as (port, _backend, _outcomes, paths):
        answers = await exchange(port, post("/a", b"w"), post("/b", payload))
    assert [status for status, _, _ in answers] == [200, 200]
    assert paths.taken[1] == "coroutine" and recorded.bodies[1] == payload


@pytest.mark.parametrize("slowly", [False, True], ids=["whole", "slowly"])
@pytest.mark.parametrize("chunked", [False, True], ids=["content-length", "chunked"])
async def test_a_body_over_the_size_limit_is_a_413_and_never_forwarded(
    chunked: bool, slowly: bool
) -> None:
    recorded = Recorded()
    limits = Limits(max_body_bytes=1000)
    # (a Content-Length over the limit is refused with the head; a chunked body once its
    # chunks pass it, the node having maybe seen the head and part of it: never the whole)
    big = post("/big", b"z" * 1500, chunked=True) if chunked else post("/big", b"z" * 1001)
    async with gateway_with_paths(recorded, limits=limits) as (port, _backend, _outcomes, _):
        warm = await exchange(port, post("/warm", b"w"))
        over = await exchange(port, big, slowly=slowly)
    assert warm[0][0] == 200 and over[0][0] == 413
    assert recorded.bodies == [b"w"]


@pytest.mark.parametrize("slowly", [False, True], ids=["whole", "slowly"])
async def test_a_plugin_that_reads_the_body_decides_the_same_on_both_paths(slowly: bool) -> None:
    guard = plugin("ai-prompt-guard", 400, deny_patterns=["(?i)forbidden"])
    denied = json.dumps({"messages": [{"role": "user", "content": "a FORBIDDEN ask"}]}).encode()
    not_json = b"[1, 2"
    recorded = Recorded()
    async with gateway_with_paths(recorded, [guard]) as (port, _backend, _outcomes, paths):
        answers = await exchange(
            port,
            post("/a", CHAT),
            post("/b", denied),
            post("/c", CHAT),
            post("/d", not_json),
            post("/e", CHAT, chunked=True),
            slowly=slowly,
        )
    assert [status for status, _, _ in answers] == [200, 400, 200, 400, 200]
    assert json.loads(answers[1][2]) == {"message": "Request contains prohibited content"}
    assert json.loads(answers[3][2]) == {"message": "request body is not valid JSON"}
    assert recorded.bodies == [CHAT, CHAT, CHAT]  # exactly what the client sent
    if slowly:
        assert paths.taken == ["coroutine"] * 5
    else:
        assert paths.taken == ["coroutine", "at once", "callbacks", "at once", "callbacks"]


async def test_pipelined_requests_with_bodies_keep_their_order() -> None:
    recorded = Recorded()
    async with gateway_with_paths(recorded) as (port, _backend, _outcomes, _paths):
        await exchange(port, post("/warm", b"w"))
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        try:
            writer.write(
                post("/1", b"one")
                + f"GET /2 HTTP/1.1\r\nHost: {HOST}\r\n\r\n".encode()
                + post("/3", b"three", chunked=True)
                + post("/4", b"four")
            )
            bodies = []
            for _ in range(4):
                head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 10)
                length = int(head.lower().split(b"content-length: ")[1].split(b"\r\n")[0])
                bodies.append(await reader.readexactly(length))
        finally:
            writer.transport.abort()
    assert bodies == [b"got 3", b"got 0", b"got 5", b"got 4"]
    assert recorded.bodies == [b"w", b"one", b"", b"three", b"four"]


@pytest.mark.parametrize(("method", "replayed"), [("POST", False), ("PUT", True)])
async def test_a_body_on_a_stale_pooled_connection_is_sent_again_only_when_it_may_be(
    method: str, replayed: bool
) -> None:
    async def answer(
        number: int, head: bytes, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        await read_request_body(head, reader)
        if number == 1:
            writer.write(OK)
            await writer.drain()
        else:
            writer.transport.abort()  # closed by the node as the request arrived: nothing read

    async with gateway_with_paths(answer) as (port, backend, outcomes, paths):
        answers = await exchange(port, post("/one", b"1"), post("/two", b"2", method=method))
    assert answers[0][0] == 200
    assert paths.taken == ["coroutine", "callbacks"]
    if replayed:  # on a fresh connection, whose first request it is
        assert answers[1][0] == 200 and backend.connections == 2
        assert [head.split(b" ")[1] for head in backend.heads] == [b"/one", b"/two", b"/two"]
    else:  # nginx's rule: a POST that may have reached the node is never sent twice
        assert answers[1][0] == 502 and backend.connections == 1
        assert [head.split(b" ")[1] for head in backend.heads] == [b"/one", b"/two"]
    assert outcomes.seen[1].request_bytes == 1


@pytest.fixture(scope="module")
def openai_server() -> Iterator[OpenAIServer]:
    with OpenAIServer() as server:
        yield server


async def test_ai_proxy_sends_to_its_provider_by_callbacks(openai_server: OpenAIServer) -> None:
    openai_server.received.clear()
    ai_proxy = plugin(
        "ai-proxy",
        430,
        provider="openai-compatible",
        override={"endpoint": openai_server.url},
        auth={"header": {"Authorization": "Bearer sk-provider"}},
        model={"source": "config", "name": "gpt-test"},
    )
    plugins = [ai_proxy]
    async with gateway_with_paths(Recorded(), plugins, egress_allow=("127.0.0.0/8",)) as (
        port,
        backend,
        outcomes,
        paths,
    ):
        answers = await exchange(port, post("/chat", CHAT), post("/chat", CHAT))
    assert [status for status, _, _ in answers] == [200, 200]
    assert paths.taken == ["coroutine", "callbacks"]
    assert backend.heads == []  # the provider, not the route's upstream
    sent = json.loads(CHAT)
    assert [got.body for got in openai_server.received] == [{**sent, "model": "gpt-test"}] * 2
    assert [got.headers["authorization"] for got in openai_server.received] == [
        "Bearer sk-provider"
    ] * 2
    assert all(ctx.proxied and ctx.status == 200 for ctx in outcomes.seen)
    assert outcomes.seen[1].upstream_addr == f"127.0.0.1:{openai_server.port}"
