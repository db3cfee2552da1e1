"""An exchange on an upstream connection driven by a coroutine (``proxy.forward`` through
``upstream.UpstreamPool.request``): the request written, its body streamed with back-pressure,
then the wait for the answer's head, each wait bounded by its timeout. (A request without a
body on an idle pooled connection is driven by callbacks instead: ``Connection.send``.)
"""

from __future__ import annotations

from collections.abc import AsyncIterable

from .errors import UpstreamError
from .upstream_conn import Connection
from .upstream_contract import Timeouts


async def exchange(
    conn: Connection,
    method: str,
    head: bytes,
    body: AsyncIterable[bytes] | bytes | None,
    content_length: int | None,
    timeouts: Timeouts,
) -> None:
    """Send the request (``head`` rendered whole, its framing line the body's:
    ``forwarding.render_head``) and wait for the response head (``head_done``), each wait
    bounded by its timeout. Aborts the connection on any failure."""
    stream: AsyncIterable[bytes] | None = None
    payload: bytes | None = None
    if body is None:
        pass
    elif isinstance(body, bytes):
        payload = body
    else:
        stream = body
    try:
        conn.begin(method)
        if conn.closed:
            conn.raise_failure()
        if payload:
            conn.transport.writelines((head, payload))
        else:
            conn.transport.write(head)
        if conn.write_paused:
            await conn.drain(timeouts.send)
        if stream is not None:
            await _send_stream(conn, stream, content_length, timeouts.send)
        conn.body_sent = True
        while not conn.head_done:
            if conn.error is not None or conn.closed:
                conn.raise_failure()
            await conn.wait(timeouts.read)
    except BaseException:
        conn.abort()
        raise


async def _send_stream(
    conn: Connection, stream: AsyncIterable[bytes], content_length: int | None, send_timeout: float
) -> None:
    chunked = content_length is None
    sent = 0
    transport = conn.transport
    async for chunk in stream:
        if conn.closed or conn.head_done:
            break  # the node answered (or hung up) before the whole body: stop sending
        if not chunk:
            continue
        if chunked:
            transport.writelines((b"%x\r\n" % len(chunk), chunk, b"\r\n"))
        else:
            transport.write(chunk)
        sent += len(chunk)
        if conn.write_paused:
            await conn.drain(send_timeout)
    else:
        if content_length is not None and sent != content_length:
            raise UpstreamError("request body does not match its content-length")
        if chunked and not conn.closed:
            transport.write(b"0\r\n\r\n")
        return
    conn.keep_alive = False
    if conn.closed and not conn.head_done:
        conn.raise_failure()
