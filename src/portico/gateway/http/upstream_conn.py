"""One pooled HTTP/1.1 connection to an upstream node: a raw ``asyncio.Protocol`` with
``httptools.HttpResponseParser``, one exchange at a time.

The connection's single ``Deadline`` is the read timeout while a response is awaited, the send
timeout while a request body waits for the socket to drain, and the idle timeout in the pool.

An exchange is driven either by a coroutine (``upstream_exchange.exchange``, then ``wait``)
or, for a request without a body or with a small one already received, by callbacks: ``send``
writes the request and the ``Listener`` is called once, when the response head is in (with
whatever of the body came with it) or the exchange failed. The answer's headers are kept as
their wire lines (``response_lines``).

The connection sees its pool (``upstream.UpstreamPool``, which imports this module) as a
:class:`Pool`.
"""

from __future__ import annotations

import asyncio
from typing import Final, cast

import httptools

from .errors import (
    InvalidResponse,
    StaleConnection,
    UpstreamError,
    UpstreamReset,
    UpstreamTimeout,
)
from .held_writes import HeldWrites, Holder
from .names import HEADER_NAMES, HOP_BY_HOP
from .response_lines import name_size_bit
from .timer import Deadline
from .upstream_contract import Listener

HIGH_WATER: Final = 256 * 1024
# nginx refuses response heads beyond proxy_buffer_size ("upstream sent too big header").
MAX_HEAD_BYTES: Final = 64 * 1024
# (each one Final: see CONVENTIONS.md "Compiled modules")
_IDLE: Final = 0
_SEND: Final = 1
_READ: Final = 2
_BUSY: Final = 3


#: response headers on_header looks at (the rest are only collected)
_NOTED: Final = HOP_BY_HOP | {"content-length"}
#: the lengths of their names, as bits (``name_size_bit``): a header of another length is kept
#: as its line without a look at its name (looking a name up hashes a fresh bytes object:
#: measured, 450 instructions)
_NOTED_SIZES: Final = sum({name_size_bit(len(name)) for name in _NOTED})
_REQUEST_ID: Final = b"x-request-id"


class Pool:
    """What a connection needs of the pool it belongs to (a base class, not a ``Protocol``:
    see CONVENTIONS.md "Compiled modules"; ``upstream.UpstreamPool`` is the pool)."""

    __slots__ = ("held_writes",)

    def __init__(self) -> None:
        # bodiless request heads, written together (see held_writes)
        self.held_writes = HeldWrites()

    def put(self, conn: Connection) -> None:
        """``conn`` is done with its exchange: keep it for the next one, or close it."""
        raise NotImplementedError

    def forget(self, conn: Connection) -> None:
        """``conn`` is closed (or was handed over to a tunnel)."""
        raise NotImplementedError


class Connection(Holder):  # an asyncio.Protocol by its methods (see UpstreamPool._connect)
    __slots__ = (
        "_chunks",
        "_drain_waiter",
        "_feeding",
        "_head_bytes",
        "_head_only",
        "_head_size",
        "_held",
        "_held_body",
        "_informational",
        "_parser",
        "_phase",
        "_reading_paused",
        "_waiter",
        "body_sent",
        "buffered",
        "chunked",
        "closed",
        "connection",
        "content_length",
        "detached",
        "done",
        "error",
        "got_bytes",
        "head_done",
        "idle_list",
        "keep_alive",
        "key",
        "lines",
        "listener",
        "loop",
        "name_sizes",
        "named_request_id",
        "pool",
        "requests",
        "status",
        "timer",
        "transport",
        "upgrade",
        "upgrade_buf",
        "upgraded",
        "write_paused",
    )

    def __init__(self, pool: Pool, key: tuple[str, int, bool, str | None]) -> None:
        self.pool = pool
        self.key = key
        #: the pool's idle list for ``key`` (set by the pool)
        self.idle_list: list[Connection] | None = None
        self.loop = asyncio.get_running_loop()
        self.timer = Deadline(self.loop, self._timed_out)
        self._parser = httptools.HttpResponseParser(self)
        self.transport: asyncio.Transport = None  # type: ignore[assignment]
        self.closed = False
        self.detached = False
        self.write_paused = False
        self._drain_waiter: asyncio.Future[None] | None = None
        self._waiter: asyncio.Future[None] | None = None
        self.listener: Listener | None = None
        self._held: bytes | None = None  # a request head written at the end of this iteration
        self._held_body: bytes | None = None  # and the small body that goes with it
        self._feeding = False
        self._reading_paused = False
        self._phase = _BUSY
        self.requests = 0
        self.error: UpstreamError | None = None
        self._reset()

    def _reset(self) -> None:
        self.status = 0
        self._forget_head()
        self.keep_alive = False
        self.head_done = False
        self.done = False
        self.upgraded = False
        self.got_bytes = False
        self.body_sent = False
        self.upgrade_buf: bytearray | None = None
        self._chunks: list[bytes] = []
        self.buffered = 0
        self._informational = False
        self._head_only = False
        self._head_bytes = 0
        self._head_size = 0

    def _forget_head(self) -> None:
        """What is known of a response head: nothing yet (a new exchange, or after an interim
        answer)."""
        #: the headers passed on, as the pieces of their wire lines: name, ``b": "``, value,
        #: ``b"\r\n"`` for each (llhttp checked them; hop-by-hop ones left out), relayed
        #: joined as they are (see ``header_pairs``)
        self.lines: list[bytes] = []
        self.named_request_id = False  # one of them is X-Request-Id
        #: the lengths of their names, as bits (``name_size_bit``): a header someone would
        #: set in their place can only be among them if its name's length is
        self.name_sizes = 0
        self.connection: str | None = None
        self.upgrade: str | None = None
        self.content_length: int | None = None
        self.chunked = False

    # -- asyncio.Protocol ----------------------------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        # uvloop's transports implement the interface without subclassing asyncio.Transport
        self.transport = cast(asyncio.Transport, transport)

    def data_received(self, data: bytes) -> None:
        if self._phase == _IDLE:
            self.abort()  # an idle connection has nothing to say; the node is confused
            return
        if self.upgrade_buf is not None:
            self.upgrade_buf += data
            return
        if self.done:
            self.keep_alive = False  # bytes after the response: the connection is not reusable
            return
        self.got_bytes = True
        self._feeding = True  # (a listener hears of the news once the whole read is parsed)
        try:
            self._parser.feed_data(data)
        except httptools.HttpParserUpgrade as exc:
            if self.status == 101:
                self.upgraded = self.done = True
                self.upgrade_buf = bytearray(data[exc.args[0] :])
            else:
                self._fail(InvalidResponse("invalid response from upstream"))
        except httptools.HttpParserError:
            self._fail(InvalidResponse("invalid response from upstream"))
        finally:
            self._feeding = False
        if self.error is not None:
            self._wake()
            return
        if self.upgraded:
            self._wake()
        if not self.head_done:
            # httptools holds a header until its end: bound what a never-ending head costs.
            self._head_bytes += len(data)
            if self._head_bytes > MAX_HEAD_BYTES:
                self._fail(InvalidResponse("upstream sent too big a header"))
        elif self._head_only:
            # llhttp cannot be told a response has no body (HEAD): start the next one afresh.
            self._parser = httptools.HttpResponseParser(self)
        if self.head_done and self.listener is not None:
            self._notify()

    def eof_received(self) -> bool:
        return False

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        self.timer.cancel()
        self.pool.forget(self)
        if self._phase == _IDLE:
            return
        if self.head_done and not self.done:
            if self.content_length is None and not self.chunked:
                self.done = True  # a body delimited by the connection's close ends here
                self.keep_alive = False
            else:
                self._fail(UpstreamReset("upstream closed the connection mid-body"))
        elif not self.head_done and self.error is None:
            self._fail(UpstreamReset("upstream closed the connection"))
        self._wake()
        waiter = self._drain_waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    def pause_writing(self) -> None:
        self.write_paused = True

    def resume_writing(self) -> None:
        self.write_paused = False
        waiter = self._drain_waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    # -- parser callbacks ----------------------------------------------------------------

    # (no on_status, no on_message_begin: the reason phrase is never relayed, an exchange
    # starts afresh in _begin and an interim answer's head is forgotten when complete; and
    # httptools calls back only for the callbacks there are, each call measured at about 500
    # instructions)

    def on_header(self, name: bytes, value: bytes) -> None:
        if self.head_done:
            return  # trailers are dropped
        size = len(name)
        self._head_size += size + len(value) + 4
        if _NOTED_SIZES & name_size_bit(size):
            key = HEADER_NAMES.get(name)
            if key is None:
                key = name.decode("latin-1").lower()
            if key == "content-length":
                self.content_length = int(value.decode("latin-1"))  # (llhttp: only digits)
            elif key in HOP_BY_HOP:  # noted, not passed on (the client's framing is redone)
                text = value.decode("latin-1")
                if key == "transfer-encoding":
                    self.chunked = text.rpartition(",")[2].strip().lower() == "chunked"
                elif key == "connection":
                    seen = self.connection
                    self.connection = text if seen is None else f"{seen},{text}"
                elif key == "upgrade":
                    self.upgrade = text
                return
        elif size == 12 and (name[0] | 0x20) == 0x78 and name.lower() == _REQUEST_ID:
            self.named_request_id = True
        self.name_sizes |= name_size_bit(size)
        lines = self.lines  # (four appends, no join per header: the head is joined once)
        lines.append(name)
        lines.append(b": ")
        lines.append(value)
        lines.append(b"\r\n")

    def on_headers_complete(self) -> None:
        parser = self._parser
        status = parser.get_status_code()
        if 100 <= status < 200 and status != 101:
            self._informational = True  # 100 Continue, 103 Early Hints: wait for the real one
            self._forget_head()
            return
        if self._head_size > MAX_HEAD_BYTES:
            self.error = InvalidResponse("upstream sent too big a header")
            raise self.error  # stops the parser
        self.status = status
        self.keep_alive = parser.should_keep_alive()
        self.head_done = True
        if self._head_only:
            self.done = True
        self._wake()

    def on_body(self, data: bytes) -> None:
        if self.done:
            return
        self._chunks.append(data)
        self.buffered += len(data)
        if self.buffered > HIGH_WATER and not self._reading_paused:
            self._reading_paused = True
            self.transport.pause_reading()
        self._wake()

    def on_message_complete(self) -> None:
        if self._informational:
            self._informational = False
            return
        self.done = True
        self._wake()

    # -- the exchange --------------------------------------------------------------------

    def send(
        self,
        method: str,
        head: bytes,
        read_deadline: float,
        listener: Listener,
        body: bytes | None = None,
    ) -> None:
        """Send a request, its ``head`` rendered whole by the caller (request line to empty
        line) and its ``body`` if it has a small one (``callback_forward.SMALL_BODY``);
        ``listener`` hears of the answer (see the module docstring). The answer is due by
        ``read_deadline`` (loop time: the read timeout runs from now, a request this small is
        not held back by the socket)."""
        self.begin(method)
        self._held = head
        self._held_body = body
        self.pool.held_writes.add(self, self.loop)  # (see held_writes)
        self.body_sent = True
        self.listener = listener
        self._phase = _READ
        self.timer.set(read_deadline)

    def begin(self, method: str) -> None:
        """Start an exchange: the state of the last one reset."""
        self._reset()
        self._phase = _BUSY
        self.requests += 1
        self._head_only = method == "HEAD"

    def flush(self) -> None:
        held = self._held
        if held is not None:
            self._held = None
            body = self._held_body
            if body is None:
                if not self.closed:
                    self.transport.write(held)
            else:
                self._held_body = None
                if not self.closed:
                    self.transport.writelines((held, body))

    def take(self) -> bytes:
        chunks = self._chunks
        data = chunks[0] if len(chunks) == 1 else b"".join(chunks)
        chunks.clear()
        self.buffered = 0
        if self._reading_paused and not self.closed:
            self._reading_paused = False
            self.transport.resume_reading()
        return data

    @property
    def has_data(self) -> bool:
        return bool(self._chunks)

    def raise_failure(self) -> None:
        raise self.failure()

    def failure(self) -> UpstreamError:
        """Why the exchange failed: ``StaleConnection`` when a reused connection was closed by
        the node before it answered anything (the request may be replayed elsewhere)."""
        error = self.error or UpstreamReset("upstream closed the connection")
        if self.requests > 1 and not self.got_bytes and type(error) is UpstreamReset:
            return StaleConnection(str(error))
        return error

    async def wait(self, seconds: float) -> None:
        """Until the parser has news (head, body bytes, end, error) or ``seconds`` pass."""
        waiter = self._waiter = self.loop.create_future()
        self._phase = _READ
        self.timer.after(seconds)
        try:
            await waiter
        finally:
            self._waiter = None
            self._phase = _BUSY
            self.timer.clear()

    async def drain(self, seconds: float) -> None:
        waiter = self._drain_waiter = self.loop.create_future()
        self._phase = _SEND
        self.timer.after(seconds)
        try:
            await waiter
        finally:
            self._drain_waiter = None
            self._phase = _BUSY
            self.timer.clear()
        if self.error is not None:
            raise self.error

    def _wake(self) -> None:
        waiter = self._waiter
        if waiter is not None:
            if not waiter.done():
                waiter.set_result(None)
        elif self.listener is not None and not self._feeding:
            self._notify()

    def _notify(self) -> None:
        listener = self.listener
        if listener is not None:
            self.listener = None
            self._phase = _BUSY
            self.timer.clear()
            listener.on_upstream()

    def _fail(self, error: UpstreamError) -> None:
        if self.error is None:
            self.error = error
        self.abort()
        self._wake()

    def _timed_out(self) -> None:
        phase = self._phase
        if phase == _IDLE:
            self.close()
        elif phase == _READ:
            self._fail(UpstreamTimeout("upstream read timeout"))
        elif phase == _SEND:
            self._fail(UpstreamTimeout("upstream send timeout"))

    # -- lifecycle -----------------------------------------------------------------------

    def release(self) -> None:
        """The response was read to its end: back to the pool, or closed if not reusable."""
        if (
            self.closed
            or not self.keep_alive
            or self.upgraded
            or self.error is not None
            or not self.body_sent
        ):
            self.close()
            return
        self.pool.put(self)

    def idle(self, timeout: float) -> None:
        self._phase = _IDLE
        if self._reading_paused:
            self._reading_paused = False
            self.transport.resume_reading()
        self.timer.after(timeout)

    @property
    def is_idle(self) -> bool:
        return self._phase == _IDLE

    def claim(self) -> None:
        self._phase = _BUSY
        self.timer.clear()

    def close(self) -> None:
        if not self.closed:
            # (only held while a response is awaited: nobody waits now)
            self._held = self._held_body = None
            self.closed = True
            self.timer.cancel()
            self.transport.close()

    def abort(self) -> None:
        if not self.closed:
            self._held = self._held_body = None
            self.closed = True
            self.timer.cancel()
            self.transport.abort()

    def detach(self) -> tuple[asyncio.Transport, bytes]:
        self.detached = True
        self.timer.cancel()
        self.pool.forget(self)
        buf = self.upgrade_buf
        self.upgrade_buf = None
        return self.transport, bytes(buf) if buf else b""
