"""Request smuggling and resource limits, sent as raw bytes: every refusal is an answer with
the right status followed by the server closing the connection (nothing after it is read)."""

from __future__ import annotations

import asyncio
import json

import pytest

from portico.gateway.http import Limits, Request, Responder

from .conftest import ServerFactory, raw_exchange

H = b"POST / HTTP/1.1\r\nHost: x\r\n"
# A second request pipelined behind each attack: it must never be answered.
SMUGGLED = b"GET /smuggled HTTP/1.1\r\nHost: x\r\n\r\n"

served: list[str] = []


async def consume(request: Request, responder: Responder) -> None:
    served.append(request.path)
    body = await request.body.read()
    responder.send(200, [], b"read %d" % len(body))


ATTACKS = {
    "cl-and-te": H + b"Content-Length: 6\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\nX",
    "te-and-cl": H + b"Transfer-Encoding: chunked\r\nContent-Length: 6\r\n\r\n0\r\n\r\nX",
    "duplicate-cl-equal": H + b"Content-Length: 5\r\nContent-Length: 5\r\n\r\nhello",
    "duplicate-cl-different": H + b"Content-Length: 5\r\nContent-Length: 6\r\n\r\nhello!",
    "cl-list": H + b"Content-Length: 5, 5\r\n\r\nhello",
    "cl-non-digits": H + b"Content-Length: 5a\r\n\r\nhello",
    "cl-plus-sign": H + b"Content-Length: +5\r\n\r\nhello",
    "cl-minus-sign": H + b"Content-Length: -5\r\n\r\nhello",
    "cl-space-inside": H + b"Content-Length: 5 5\r\n\r\nhello",
    "cl-hex": H + b"Content-Length: 0x5\r\n\r\nhello",
    "cl-overflow": H + b"Content-Length: 99999999999999999999999\r\n\r\nhello",
    "cl-empty": H + b"Content-Length: \r\n\r\nhello",
    "te-xchunked": H + b"Transfer-Encoding: xchunked\r\n\r\n0\r\n\r\n",
    "te-chunked-identity": H + b"Transfer-Encoding: chunked, identity\r\n\r\n0\r\n\r\n",
    "te-identity-chunked": H + b"Transfer-Encoding: identity, chunked\r\n\r\n0\r\n\r\n",
    "te-gzip-chunked": H + b"Transfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n",
    "te-duplicate": H
    + b"Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
    "te-duplicate-identity": H
    + b"Transfer-Encoding: chunked\r\nTransfer-Encoding: identity\r\n\r\n0\r\n\r\n",
    "te-trailing-space": H + b"Transfer-Encoding: chunked \r\n\r\n0\r\n\r\n",
    "te-vertical-tab": H + b"Transfer-Encoding: \x0bchunked\r\n\r\n0\r\n\r\n",
    "te-form-feed": H + b"Transfer-Encoding: \x0cchunked\r\n\r\n0\r\n\r\n",
    "te-space-before-colon": H + b"Transfer-Encoding : chunked\r\n\r\n0\r\n\r\n",
    "te-obs-fold": H + b"Transfer-Encoding:\r\n chunked\r\n\r\n0\r\n\r\n",
    "te-quoted": H + b'Transfer-Encoding: "chunked"\r\n\r\n0\r\n\r\n',
    "te-http10": b"POST / HTTP/1.0\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
    "bare-lf-request-line": b"GET / HTTP/1.1\nHost: x\r\n\r\n",
    "bare-lf-headers": b"GET / HTTP/1.1\r\nHost: x\nX-A: 1\r\n\r\n",
    "bare-lf-end": b"GET / HTTP/1.1\r\nHost: x\r\n\n",
    "bare-cr-in-header": b"GET / HTTP/1.1\r\nHost: x\rX-A: 1\r\n\r\n",
    "cr-in-value": b"GET / HTTP/1.1\r\nHost: x\r\nX-A: a\rb\r\n\r\n",
    "nul-in-value": b"GET / HTTP/1.1\r\nHost: x\r\nX-A: a\x00b\r\n\r\n",
    "space-in-name": b"GET / HTTP/1.1\r\nHost: x\r\nX A: 1\r\n\r\n",
    "obs-fold": b"GET / HTTP/1.1\r\nHost: x\r\nX-A: 1\r\n 2\r\n\r\n",
    "no-host": b"GET / HTTP/1.1\r\n\r\n",
    "two-hosts": b"GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n",
    "bad-chunk-size": H + b"Transfer-Encoding: chunked\r\n\r\nzz\r\nhello\r\n0\r\n\r\n",
    "chunk-size-lf-only": H + b"Transfer-Encoding: chunked\r\n\r\n5\nhello\n0\n\n",
    "chunk-missing-crlf": H + b"Transfer-Encoding: chunked\r\n\r\n5\r\nhelloXX0\r\n\r\n",
    "space-in-target": b"GET /a b HTTP/1.1\r\nHost: x\r\n\r\n",
    "relative-target": b"GET a/b HTTP/1.1\r\nHost: x\r\n\r\n",
    "http09": b"GET /\r\n\r\n",
    "bad-method": b"G@T / HTTP/1.1\r\nHost: x\r\n\r\n",
    "upgrade-with-body": b"POST / HTTP/1.1\r\nHost: x\r\nConnection: upgrade\r\n"
    b"Upgrade: websocket\r\nContent-Length: 3\r\n\r\nabc",
}


@pytest.mark.parametrize("raw", list(ATTACKS.values()), ids=list(ATTACKS))
async def test_smuggling_attempt_is_400_and_closed(http_server: ServerFactory, raw: bytes) -> None:
    served.clear()
    port = await http_server(consume)
    result = await raw_exchange(port, raw + SMUGGLED)
    assert result.status == 400, result.data
    assert result.closed
    assert len(result.responses()) == 1
    assert "/smuggled" not in served
    body = result.data.split(b"\r\n\r\n", 1)[1]
    assert json.loads(body)["error_msg"].startswith("400 ") or b"error_msg" in body


@pytest.mark.parametrize(
    "raw",
    [
        H + b"Transfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n",
        H + b"Transfer-Encoding: Chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n",
        H + b"Transfer-Encoding:\tchunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n",
        H + b"Content-Length: 005\r\n\r\nhello",
        b"\r\nPOST / HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello",
    ],
    ids=["chunked", "chunked-case", "tab-before-value", "cl-leading-zeros", "leading-crlf"],
)
async def test_legitimate_framing_is_accepted(http_server: ServerFactory, raw: bytes) -> None:
    port = await http_server(consume)
    last = b"GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
    result = await raw_exchange(port, raw + last)
    assert [r.split(b"\r\n", 1)[0] for r in result.responses()] == [b"HTTP/1.1 200 OK"] * 2
    assert result.responses()[0].endswith(b"read 5")


async def test_http2_version_is_505(http_server: ServerFactory) -> None:
    port = await http_server(consume)
    result = await raw_exchange(port, b"GET / HTTP/2.0\r\nHost: x\r\n\r\n")
    assert result.status == 505 and result.closed


@pytest.mark.parametrize("version", [b"1.2", b"1.9", b"2.1", b"3.1"])
async def test_other_versions_are_refused(http_server: ServerFactory, version: bytes) -> None:
    # The engine takes a request kept alive without a Connection header for HTTP/1.1 without
    # asking llhttp for the version: that holds only while llhttp refuses every other x.y
    # with y > 0, as these check.
    port = await http_server(consume)
    result = await raw_exchange(port, b"GET / HTTP/" + version + b"\r\nHost: x\r\n\r\n")
    assert result.status == 400 and result.closed


async def test_http10_without_connection_header_is_closed(http_server: ServerFactory) -> None:
    port = await http_server(consume)
    result = await raw_exchange(port, b"GET / HTTP/1.0\r\nHost: x\r\n\r\n")
    assert result.status == 200 and result.closed


async def test_connect_is_refused(http_server: ServerFactory) -> None:
    port = await http_server(consume)
    result = await raw_exchange(port, b"CONNECT example.com:443 HTTP/1.1\r\nHost: x\r\n\r\n")
    assert result.status == 405 and result.closed


# -- limits -----------------------------------------------------------------------------


async def test_header_section_too_big_is_431(http_server: ServerFactory) -> None:
    port = await http_server(consume, Limits(max_header_bytes=1024))
    raw = b"GET / HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * 2000 + b"\r\n\r\n"
    result = await raw_exchange(port, raw)
    assert result.status == 431 and result.closed


async def test_header_sent_in_pieces_past_the_limit_is_431(http_server: ServerFactory) -> None:
    port = await http_server(consume, Limits(max_header_bytes=1024))
    pieces = [b"GET / HTTP/1.1\r\nHost: x\r\nX-Big: "] + [b"a" * 300] * 10
    result = await raw_exchange(port, pieces)
    assert result.status == 431 and result.closed


async def test_long_target_counts_against_the_head_limit(http_server: ServerFactory) -> None:
    port = await http_server(consume, Limits(max_header_bytes=1024))
    result = await raw_exchange(port, b"GET /" + b"a" * 2000 + b" HTTP/1.1\r\nHost: x\r\n\r\n")
    assert result.status == 431 and result.closed


async def test_too_many_headers_is_431(http_server: ServerFactory) -> None:
    port = await http_server(consume, Limits(max_headers=10))
    raw = b"GET / HTTP/1.1\r\nHost: x\r\n" + b"".join(b"X-%d: v\r\n" % i for i in range(12))
    result = await raw_exchange(port, raw + b"\r\n")
    assert result.status == 431 and result.closed


async def test_declared_body_over_limit_is_413_before_reading(http_server: ServerFactory) -> None:
    served.clear()
    port = await http_server(consume, Limits(max_body_bytes=1000))
    result = await raw_exchange(port, H + b"Content-Length: 1001\r\n\r\n")  # no body sent
    assert result.status == 413 and result.closed
    assert served == []


async def test_chunked_body_over_limit_is_413(http_server: ServerFactory) -> None:
    port = await http_server(consume, Limits(max_body_bytes=1000))
    chunk = b"190\r\n" + b"a" * 400 + b"\r\n"
    raw = H + b"Transfer-Encoding: chunked\r\n\r\n" + chunk * 3 + b"0\r\n\r\n"
    result = await raw_exchange(port, raw)
    assert result.status == 413 and result.closed
    assert json.loads(result.data.split(b"\r\n\r\n", 1)[1]) == {
        "error_msg": "413 Request Entity Too Large"
    }


async def test_body_at_the_limit_is_accepted(http_server: ServerFactory) -> None:
    port = await http_server(consume, Limits(max_body_bytes=1000))
    raw = H + b"Content-Length: 1000\r\nConnection: close\r\n\r\n" + b"a" * 1000
    result = await raw_exchange(port, raw)
    assert result.status == 200 and result.data.endswith(b"read 1000")


async def test_slow_request_head_gets_408(http_server: ServerFactory) -> None:
    """Trickling header lines does not extend the deadline: the whole head must arrive in time."""
    port = await http_server(consume, Limits(header_timeout=0.3))
    reader, writer = await asyncio.open_connection("127.0.0.1", port)

    async def trickle() -> None:
        writer.write(b"GET / HTTP/1.1\r\nHost: x\r\n")
        for i in range(10):  # a slow-loris: a header line every 0.1 s, never the end
            await asyncio.sleep(0.1)  # (the behaviour: the client trickles)
            if writer.is_closing() or reader.at_eof():
                return
            writer.write(b"X-%d: 1\r\n" % i)

    sender = asyncio.create_task(trickle())
    try:
        data = await asyncio.wait_for(reader.read(), 3)
    finally:
        sender.cancel()
        writer.transport.abort()
    assert data.startswith(b"HTTP/1.1 408 ")
    assert b"connection: close" in data


async def test_connection_that_sends_nothing_is_closed(http_server: ServerFactory) -> None:
    port = await http_server(consume, Limits(header_timeout=0.2))
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        assert await asyncio.wait_for(reader.read(), 3) == b""
    finally:
        writer.close()


async def test_stalled_body_gets_408(http_server: ServerFactory) -> None:
    port = await http_server(consume, Limits(body_timeout=0.3))
    result = await raw_exchange(port, H + b"Content-Length: 10\r\n\r\nabc")
    assert result.status == 408 and result.closed


@pytest.mark.parametrize(
    "pieces",
    [
        [H + b"Transfer-Encoding: chunked\r\n\r\n5;ext="] + [b"e" * 8000] * 6,
        [H + b"Transfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\nX-T: "] + [b"t" * 8000] * 6,
    ],
    ids=["chunk-extension", "trailer"],
)
async def test_endless_chunk_metadata_is_refused(
    http_server: ServerFactory, pieces: list[bytes]
) -> None:
    """Chunk extensions and trailers carry no body bytes; they are bounded like a head."""
    port = await http_server(consume, Limits(max_header_bytes=16 * 1024))
    result = await raw_exchange(port, pieces, gap=0.02)
    assert result.status == 400 and result.closed
