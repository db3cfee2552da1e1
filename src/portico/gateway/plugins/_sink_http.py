"""The HTTP loggers' client: one POST per batch, on a connection kept alive per sink.

Why not httpx (the plugins' shared client): a POST through it cost ~2.4 million instructions
(callgrind) whatever its size: ~2,200 Python calls through httpx, httpcore, h11 and anyio.
With batches of 1000 entries that was 2,400 instructions a request, a third of all a logger
may cost. A logger needs little of it: POST a body it holds whole, read a short answer, keep
the connection for the next batch. This does exactly that on asyncio's transports, with
httptools' parser (the gateway's own), for a few tens of thousands of instructions a batch.

What it keeps of ``guarded_request``: the SSRF guard's destination (the connection goes to
the address the guard checked; the URL's host name travels as ``Host`` and as the TLS server
name), TLS verified as httpx verifies (``httpx.create_ssl_context``) unless the sink is
configured not to, no redirect followed, one timeout over the whole exchange, at most
``limit`` bytes of answer read. A kept connection the server closed meanwhile (its idle
timeout) is not a failure: the POST goes again, once, on a new connection, when nothing of
an answer came on the old one.
"""

from __future__ import annotations

import asyncio
import ssl
from collections.abc import Mapping, Sequence
from typing import Final, cast
from urllib.parse import quote, urlencode, urlsplit

import httptools
import httpx

from portico.core.egress import BodyTooLarge, Destination, EgressGuard

#: idle connections kept per destination (a processor sends one batch at a time; a sink
#: posting to several addresses at once has one per address)
MAX_IDLE: Final = 2


class AnswerError(Exception):
    """The sink's answer was not HTTP, or stopped short: a failed send."""


class _Closed(Exception):
    """The connection closed before an answer; ``answered``: some of one had come."""

    def __init__(self, answered: bool) -> None:
        super().__init__("the connection closed before the answer")
        self.answered = answered


class _Connection(asyncio.Protocol):
    """One HTTP/1.1 connection to a sink: one exchange at a time."""

    def __init__(self) -> None:
        self.transport: asyncio.Transport | None = None
        self.parser = httptools.HttpResponseParser(self)
        self.closed = False
        self._waiter: asyncio.Future[None] | None = None
        self._chunks: list[bytes] = []
        self._size = 0
        self._limit = 0
        self._answered = False  # some of the current answer came
        self._head_done = False
        self._framed = False  # the answer says where it ends (length or chunks)
        self._keep_alive = False  # (read at the answer's end: the parser forgets it after)
        self.status = 0

    # -- asyncio.Protocol
    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        # a cast, not an isinstance check: uvloop's TCP transport (the gateway's loop) is
        # not a subclass of asyncio.Transport, though it is one in all but name
        self.transport = cast(asyncio.Transport, transport)

    def data_received(self, data: bytes) -> None:
        self._answered = True
        if self._waiter is None:  # nothing asked: a server talking out of turn
            self.close()
            return
        try:
            self.parser.feed_data(data)
        except httptools.HttpParserError:
            self._fail(AnswerError("the sink's answer is not HTTP"))

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        if self._head_done and not self._framed and self.status >= 200:
            self._finish()  # an answer that ends with its connection
            return
        self._fail(_Closed(self._answered))

    # -- httptools callbacks
    def on_header(self, name: bytes, value: bytes) -> None:
        lowered = name.lower()
        if lowered == b"content-length" or (
            lowered == b"transfer-encoding" and b"chunked" in value.lower()
        ):
            self._framed = True

    def on_headers_complete(self) -> None:
        self.status = self.parser.get_status_code()
        self._head_done = True

    def on_body(self, body: bytes) -> None:
        self._size += len(body)
        if self._size > self._limit:
            self._fail(BodyTooLarge(f"more than {self._limit} bytes"))
            return
        self._chunks.append(body)

    def on_message_complete(self) -> None:
        if 100 <= self.status < 200:  # an interim answer (100 Continue): the real one follows
            self._head_done = self._framed = False
            return
        self._keep_alive = self.parser.should_keep_alive()
        self._finish()

    # -- the exchange
    async def exchange(
        self, head: bytes, body: Sequence[bytes | memoryview], limit: int
    ) -> tuple[int, bytes]:
        """Send ``head`` and ``body`` (its parts, written as they are); the answer's status
        and body."""
        transport = self.transport
        assert transport is not None
        self._chunks, self._size, self._limit = [], 0, limit
        self._answered = self._head_done = self._framed = self._keep_alive = False
        self.status = 0
        waiter = self._waiter = asyncio.get_running_loop().create_future()
        transport.writelines((head, *body))
        try:
            await waiter
        finally:
            self._waiter = None
        return self.status, b"".join(self._chunks)

    def _finish(self) -> None:
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    def _fail(self, error: Exception) -> None:
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_exception(error)
        self.close()

    def reusable(self) -> bool:
        return not self.closed and self._keep_alive

    def close(self) -> None:
        self.closed = True
        if self.transport is not None:
            self.transport.close()


class SinkClient:
    """POSTs to sinks through the SSRF guard, keeping connections alive between batches.
    Connects lazily; :meth:`aclose` closes what it keeps (later posts still work, on
    connections closed after each)."""

    def __init__(self, guard: EgressGuard, *, verify: bool = True) -> None:
        self.guard = guard
        self.verify = verify
        self._tls: ssl.SSLContext | None = None
        self._idle: dict[tuple[str, str, int, str], list[_Connection]] = {}
        self._closed = False

    def _tls_context(self) -> ssl.SSLContext:
        if self._tls is None:
            self._tls = httpx.create_ssl_context(verify=self.verify, trust_env=False)
        return self._tls

    async def post(
        self,
        url: str,
        body: Sequence[bytes | memoryview],
        headers: Mapping[str, str],
        *,
        params: Mapping[str, str] | None = None,
        limit: int,
    ) -> tuple[int, bytes]:
        """POST ``body``, given in parts (sent one after the other: a batch's entries joined
        once, the brackets around them not copied with them). The answer's status and body
        (at most ``limit`` bytes, else
        :class:`BodyTooLarge`); :class:`EgressRefused` for a destination the guard refuses,
        :class:`AnswerError` for an answer that is not HTTP, ``OSError`` and the like for
        the transport's failures. The caller bounds the time (``asyncio.timeout``)."""
        destination = await self.guard.destination(url)
        head = _head(url, destination, headers, params, sum(map(len, body)))
        key = (destination.scheme, destination.address, destination.port, destination.hostname)
        for _ in range(2):
            connection = self._take(key)
            reused = connection is not None
            if connection is None:
                connection = await self._connect(destination)
            try:
                status, answer = await connection.exchange(head, body, limit)
            except _Closed as closed:
                if reused and not closed.answered:  # the server let it go while idle
                    continue
                raise AnswerError("the sink closed the connection before answering") from None
            except BaseException:
                connection.close()  # (a timeout, a cancellation: the answer is unknown)
                raise
            self._give_back(key, connection)
            return status, answer
        raise AnswerError("the sink closed the connection before answering")

    def _take(self, key: tuple[str, str, int, str]) -> _Connection | None:
        idle = self._idle.get(key)
        while idle:
            connection = idle.pop()
            if not connection.closed:
                return connection
        return None

    def _give_back(self, key: tuple[str, str, int, str], connection: _Connection) -> None:
        if self._closed or not connection.reusable():
            connection.close()
            return
        idle = self._idle.setdefault(key, [])
        if len(idle) >= MAX_IDLE:
            connection.close()
        else:
            idle.append(connection)

    async def _connect(self, destination: Destination) -> _Connection:
        loop = asyncio.get_running_loop()
        tls = destination.scheme == "https"
        _, connection = await loop.create_connection(
            _Connection,
            destination.address,
            destination.port,
            ssl=self._tls_context() if tls else None,
            server_hostname=destination.hostname if tls else None,
        )
        return connection

    async def aclose(self) -> None:
        self._closed = True
        for idle in self._idle.values():
            for connection in idle:
                connection.close()
        self._idle.clear()


_PATH_SAFE: Final = "/%:@!$&'()*+,;=-._~"
_QUERY_SAFE: Final = _PATH_SAFE + "?"


def _head(
    url: str,
    destination: Destination,
    headers: Mapping[str, str],
    params: Mapping[str, str] | None,
    length: int,
) -> bytes:
    """The request's head. Header names and values come from the logger's configuration
    (validated there); a line break among them is refused all the same: it would end the
    head early."""
    parts = urlsplit(url)
    # as httpx sends them: what a URL may not hold as it is, percent-encoded
    target = quote(parts.path or "/", safe=_PATH_SAFE)
    query = quote(parts.query, safe=_QUERY_SAFE)
    if params:
        query = f"{query}&{urlencode(params)}" if query else urlencode(params)
    if query:
        target = f"{target}?{query}"
    default_port = 443 if destination.scheme == "https" else 80
    host = destination.hostname
    if ":" in host:
        host = f"[{host}]"
    if destination.port != default_port:
        host = f"{host}:{destination.port}"
    lines = [f"POST {target} HTTP/1.1", f"host: {host}", f"content-length: {length}"]
    for name, value in headers.items():
        if any(c in name or c in value for c in "\r\n\0") or ":" in name:
            raise ValueError(f"header {name!r} cannot be sent")
        lines.append(f"{name}: {value}")
    lines.append("\r\n")
    return "\r\n".join(lines).encode("latin-1")
