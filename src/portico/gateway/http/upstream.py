"""Pooled HTTP/1.1 client for upstream nodes (raw protocol + ``httptools``, no aiohttp).

Connections are kept per (host, port, tls, server name), most recently used first, closed
after ``idle_timeout`` in the pool or ``max_requests_per_connection`` exchanges. A request on a
reused connection that fails before any byte of the response (the node closed it while it was
idle) is replayed once on a fresh connection when that is safe (see ``replayable``).

Errors are the ``UpstreamError`` tree of ``errors`` (ConnectFailed, ConnectTimeout,
UpstreamTimeout, UpstreamReset). Errors of the request body's own source (a client that goes
away while its body is being forwarded) propagate unchanged.

The caller renders the whole request head (``forwarding``), its framing line the body's. TLS
verifies the node's certificate with the default context unless the pool is given another one.
"""

from __future__ import annotations

import asyncio
import contextlib
import ssl
from collections.abc import AsyncIterable, AsyncIterator
from typing import Final, cast

from .errors import (
    ConnectFailed,
    ConnectTimeout,
    StaleConnection,
    UpstreamError,
    UpstreamReset,
    UpstreamTimeout,
)
from .errors import reason as default_reason
from .response_lines import header_pairs
from .upstream_conn import Connection, Pool
from .upstream_contract import Timeouts
from .upstream_exchange import exchange

__all__ = [
    "ConnectFailed",
    "ConnectTimeout",
    "Timeouts",
    "UpstreamError",
    "UpstreamPool",
    "UpstreamReset",
    "UpstreamResponse",
    "UpstreamTimeout",
    "response_of",
]

_Key = tuple[str, int, bool, str | None]


class ResponseBody:
    """The response body as an async iterator; the connection goes back to the pool as soon
    as the last byte has been handed out."""

    __slots__ = ("_conn", "_read_timeout")

    def __init__(self, conn: Connection | None, read_timeout: float) -> None:
        self._conn = conn
        self._read_timeout = read_timeout

    def __aiter__(self) -> AsyncIterator[bytes]:
        return self

    async def __anext__(self) -> bytes:
        conn = self._conn
        if conn is None:
            raise StopAsyncIteration
        while True:
            if conn.has_data:
                data = conn.take()
                if conn.done and not conn.has_data:
                    self._conn = None
                    conn.release()
                return data
            if conn.error is not None:
                self._conn = None
                conn.abort()
                raise conn.error
            if conn.done:
                self._conn = None
                conn.release()
                raise StopAsyncIteration
            if conn.closed:
                self._conn = None
                raise UpstreamReset("upstream closed the connection mid-body")
            try:
                await conn.wait(self._read_timeout)
            except BaseException:
                self._conn = None
                conn.abort()
                raise

    @property
    def finished(self) -> bool:
        return self._conn is None

    def close(self) -> None:
        """Stop reading: the connection is dropped (it is mid-response)."""
        conn = self._conn
        if conn is not None:
            self._conn = None
            conn.abort()


_NOT_REPLAYABLE_METHODS: Final = frozenset({"POST", "PATCH", "LOCK"})


def replayable(method: str, body: object) -> bool:
    """Whether a request that hit a stale connection may be sent again (nginx's rule: never a
    non-idempotent method, never a streamed body already consumed)."""
    return method not in _NOT_REPLAYABLE_METHODS and (body is None or isinstance(body, bytes))


class _EmptyBody:
    __slots__ = ()

    def __aiter__(self) -> AsyncIterator[bytes]:
        return self

    async def __anext__(self) -> bytes:
        raise StopAsyncIteration


_EMPTY: Final = _EmptyBody()


class _Complete:
    """A body that had wholly arrived, as an async iterator of one chunk."""

    __slots__ = ("_data",)

    def __init__(self, data: bytes) -> None:
        self._data: bytes | None = data

    def __aiter__(self) -> AsyncIterator[bytes]:
        return self

    async def __anext__(self) -> bytes:
        data = self._data
        if data is None:
            raise StopAsyncIteration
        self._data = None
        return data


class UpstreamResponse:
    """The upstream's answer, its head read. (A plain class, not a dataclass: one is made per
    request; see CONVENTIONS.md "Compiled modules".)"""

    __slots__ = (
        "_conn",
        "_headers",
        "body",
        "chunked",
        "complete",
        "connection",
        "content_length",
        "lines",
        "name_sizes",
        "named_request_id",
        "status",
        "upgrade",
        "upgraded",
    )

    def __init__(
        self,
        status: int,
        lines: list[bytes],
        body: AsyncIterator[bytes],
        content_length: int | None,
        chunked: bool,
        upgraded: bool,
        connection: str | None = None,
        upgrade: str | None = None,
        complete: bytes | None = None,
        conn: Connection | None = None,
        named_request_id: bool = False,
        name_sizes: int = 0,
    ) -> None:
        self.status = status
        #: the headers as their wire lines, without the hop-by-hop ones (``connection`` and
        #: ``upgrade`` keep what those said; see ``names.connection_tokens`` for the headers
        #: it names); ``headers`` has them taken apart
        self.lines = lines
        self.named_request_id = named_request_id  # one of them is X-Request-Id
        self.name_sizes = name_sizes  # the lengths of their names (``name_size_bit``)
        self._headers: list[tuple[str, str]] | None = None
        self.body = body  # the connection returns to the pool once fully read
        self.content_length = content_length
        self.chunked = chunked
        self.upgraded = upgraded
        self.connection = connection
        self.upgrade = upgrade
        #: the whole body, when it had arrived with the head (the connection is then back in
        #: the pool; ``body`` yields it too)
        self.complete = complete
        self._conn = conn  # kept only for a 101 answer, until detach()

    @property
    def reason(self) -> str:
        """The status's standard phrase (the node's own is not read: nothing relays it)."""
        return default_reason(self.status)

    @property
    def headers(self) -> list[tuple[str, str]]:
        """(name lower-cased, value) pairs, made on first use (a plain relay needs none)."""
        headers = self._headers
        if headers is None:
            headers = self._headers = header_pairs(self.lines)
        return headers

    def close(self) -> None:
        """Give up on the rest of the body: the connection is dropped, not pooled."""
        body = self.body
        if isinstance(body, ResponseBody):
            body.close()
        if self._conn is not None:
            self._conn.abort()
            self._conn = None

    def detach(self) -> tuple[asyncio.Transport, bytes]:
        """For a 101 answer: the raw transport and any bytes the node sent after the head.
        The caller must ``set_protocol()`` before yielding to the loop, then
        ``resume_reading()``."""
        conn = self._conn
        if conn is None or not self.upgraded:
            raise RuntimeError("detach() needs an upgraded response")
        self._conn = None
        return conn.detach()


def response_of(conn: Connection, read_timeout: float) -> UpstreamResponse:
    """The answer whose head ``conn`` has just read."""
    complete: bytes | None = None
    owner: Connection | None = None
    if conn.upgraded:
        body: AsyncIterator[bytes] = _EMPTY
        owner = conn
    elif conn.done:
        if conn.has_data:
            complete = conn.take()
            body = _Complete(complete)
        else:
            complete, body = b"", _EMPTY
        conn.release()
    else:
        body = ResponseBody(conn, read_timeout)
    return UpstreamResponse(
        conn.status,
        conn.lines,
        body,
        conn.content_length,
        conn.chunked,
        conn.upgraded,
        conn.connection,
        conn.upgrade,
        complete,
        owner,
        conn.named_request_id,
        conn.name_sizes,
    )


class UpstreamPool(Pool):
    def __init__(
        self,
        *,
        max_idle_per_host: int = 320,
        idle_timeout: float = 60.0,
        max_requests_per_connection: int = 1000,
        ssl_context: ssl.SSLContext | None = None,
    ) -> None:
        super().__init__()  # the held writes of bodiless request heads
        self.max_idle_per_host = max_idle_per_host
        self.idle_timeout = idle_timeout
        self.max_requests_per_connection = max_requests_per_connection
        self._ssl = ssl_context
        self._idle: dict[_Key, list[Connection]] = {}
        self._live: set[Connection] = set()
        self._drained: asyncio.Event | None = None
        self.closed = False
        self.connects = 0  # connections opened so far (for tests and metrics)

    async def request(
        self,
        host: str,
        port: int,
        method: str,
        head: bytes,
        body: AsyncIterable[bytes] | bytes | None,
        content_length: int | None,
        timeouts: Timeouts,
        tls: bool = False,
        server_hostname: str | None = None,
        keepalive: bool = True,
    ) -> UpstreamResponse:
        """One exchange with ``host:port``: ``head`` is the whole request head, its framing
        line the one ``body`` and ``content_length`` call for (``forwarding.render_head``,
        ``forwarding.request_head``). Without ``keepalive``, on a new connection that is
        closed after the answer, whatever the node says."""
        key: _Key = (host, port, tls, server_hostname)
        conn = self._take(key) if keepalive else None
        if conn is not None:
            try:
                await exchange(conn, method, head, body, content_length, timeouts)
                return response_of(conn, timeouts.read)
            except StaleConnection as exc:
                if not replayable(method, body):
                    raise UpstreamReset(str(exc)) from None
        conn = await self._connect(key, timeouts.connect)
        try:
            await exchange(conn, method, head, body, content_length, timeouts)
        except StaleConnection as exc:  # cannot be stale, but keep the public tree tidy
            raise UpstreamReset(str(exc)) from None
        if not keepalive:
            conn.keep_alive = False  # (read from the head just parsed: ``release`` closes it)
        return response_of(conn, timeouts.read)

    def take(
        self, host: str, port: int, tls: bool = False, server_name: str | None = None
    ) -> Connection | None:
        """An idle pooled connection to ``host:port`` (with TLS: to ``server_name``, as
        ``request``'s ``server_hostname``), claimed, or None."""
        return self._take((host, port, tls, server_name if tls else None))

    def _take(self, key: _Key) -> Connection | None:
        idle = self._idle.get(key)
        while idle:
            conn = idle.pop()
            if not conn.closed:
                conn.claim()
                return conn
        return None

    async def _connect(self, key: _Key, seconds: float) -> Connection:
        host, port, tls, server_hostname = key
        loop = asyncio.get_running_loop()
        context: ssl.SSLContext | None = None
        if tls:
            context = self._ssl
            if context is None:
                context = self._ssl = ssl.create_default_context()
        # (an asyncio protocol by its methods, not by inheritance: see CONVENTIONS.md
        # "Compiled modules")
        conn = Connection(self, key)
        try:
            async with asyncio.timeout(seconds):
                await loop.create_connection(
                    lambda: cast(asyncio.Protocol, conn),
                    host,
                    port,
                    ssl=context,
                    server_hostname=(server_hostname or host) if tls else None,
                )
        except TimeoutError:
            raise ConnectTimeout(f"connect to {host}:{port}: timeout") from None
        except OSError as exc:
            raise ConnectFailed(f"connect to {host}:{port} failed: {exc}") from None
        self.connects += 1
        self._live.add(conn)
        return conn

    def put(self, conn: Connection) -> None:
        if self.closed or conn.requests >= self.max_requests_per_connection:
            conn.close()
            return
        idle = conn.idle_list
        if idle is None:
            # (kept on the connection: the key is a tuple, hashed afresh on every lookup)
            idle = self._idle.get(conn.key)
            if idle is None:
                idle = self._idle[conn.key] = []
            conn.idle_list = idle
        if len(idle) >= self.max_idle_per_host:
            conn.close()
            return
        conn.idle(self.idle_timeout)
        idle.append(conn)

    def forget(self, conn: Connection) -> None:
        """The connection is closed (or was handed over to a tunnel)."""
        self._live.discard(conn)
        idle = self._idle.get(conn.key)
        if idle is not None and conn in idle:
            idle.remove(conn)
        if not self._live and self._drained is not None:
            self._drained.set()

    def idle_count(self, host: str, port: int, tls: bool = False) -> int:
        return sum(len(conns) for key, conns in self._idle.items() if key[:3] == (host, port, tls))

    async def close(self, *, grace: float = 1.0) -> None:
        """Close every connection (idle ones gently, busy ones abruptly) and wait for them."""
        self.closed = True
        self._idle = {}
        for conn in list(self._live):
            if conn.is_idle:
                conn.close()
            else:
                conn.abort()
        if self._live:
            self._drained = asyncio.Event()
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(grace):
                    await self._drained.wait()
