"""The request body: an async iterator of byte chunks fed by the connection's parser.

Back-pressure: when more than ``HIGH_WATER`` bytes wait unread, the connection stops reading
from the socket, so a slow consumer (an upstream that reads slowly) slows the client down
instead of filling memory; reading resumes once the consumer has taken the buffer.
"""

from __future__ import annotations

import asyncio
from typing import Final

from .channel import Channel
from .errors import ClientError, RequestTimeout

HIGH_WATER: Final = 256 * 1024


class RequestBody:
    """Async-iterable of the request body's chunks, streamed as the client sends them.

    ``async for chunk in request.body`` yields whatever has arrived since the last step (joined,
    so a fast client gives few large chunks) and consumes it. Errors of the client side
    (``BadRequest``, ``PayloadTooLarge``, ``RequestTimeout``, ``ClientDisconnected``) are raised
    from the iteration. ``read()`` collects the whole body (bounded by
    ``Limits.max_body_bytes``) and keeps it for the next reader.
    """

    __slots__ = (
        "_chunks",
        "_continue",
        "_error",
        "_proto",
        "_timer",
        "_waiter",
        "buffered",
        "chunked",
        "complete",
        "received",
    )

    def __init__(self, proto: Channel | None, *, chunked: bool, expect_continue: bool) -> None:
        self._proto = proto
        self._chunks: list[bytes] = []
        self._error: ClientError | None = None
        self._waiter: asyncio.Future[None] | None = None
        self._timer: asyncio.TimerHandle | None = None
        self._continue = expect_continue
        self.chunked = chunked
        self.buffered = 0  # bytes received and not yet handed out
        self.received = 0  # bytes received in all
        self.complete = proto is None  # the whole body has been received

    # -- consumer side -------------------------------------------------------------------

    def __aiter__(self) -> RequestBody:
        return self

    async def __anext__(self) -> bytes:
        while True:
            chunks = self._chunks
            if chunks:
                data = chunks[0] if len(chunks) == 1 else b"".join(chunks)
                chunks.clear()
                self.buffered = 0
                if self._proto is not None:
                    self._proto.body_drained()
                return data
            if self._error is not None:
                raise self._error
            if self.complete:
                raise StopAsyncIteration
            await self._wait()

    async def read(self) -> bytes:
        """The whole body (what is left of it), kept for whoever reads next: a plugin that
        inspects the body does not take it away from ``forward``. Iterating consumes."""
        parts = [chunk async for chunk in self]
        data = parts[0] if len(parts) == 1 else b"".join(parts)
        if data:
            self._chunks.append(data)
            self.buffered = len(data)
        return data

    def take_complete(self) -> bytes | None:
        """The whole body if it has already arrived (no waiting, no copy for one chunk)."""
        if not self.complete or self._error is not None:
            return None
        chunks = self._chunks
        data = b"" if not chunks else chunks[0] if len(chunks) == 1 else b"".join(chunks)
        chunks.clear()
        self.buffered = 0
        return data

    def peek_complete(self) -> bytes | None:
        """The whole body if it has already arrived (no waiting), left in place for the next
        reader as ``read`` leaves it: a plugin that inspects a body it need not wait for."""
        if not self.complete or self._error is not None:
            return None
        chunks = self._chunks
        if not chunks:
            return b""
        if len(chunks) > 1:
            chunks[:] = [b"".join(chunks)]
        return chunks[0]

    async def _wait(self) -> None:
        proto = self._proto
        assert proto is not None
        if self._continue:
            self._continue = False
            proto.send_continue()
        loop = proto.loop
        waiter = self._waiter = loop.create_future()
        self._timer = loop.call_later(proto.limits.body_timeout, self._timed_out)
        try:
            await waiter
        finally:
            self._waiter = None
            self._timer.cancel()
            self._timer = None

    def _timed_out(self) -> None:
        self.fail(RequestTimeout("request body timed out"))
        if self._proto is not None:
            self._proto.body_timed_out()

    def _wake(self) -> None:
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    # -- producer side (the connection) --------------------------------------------------

    def feed(self, data: bytes) -> None:
        self._chunks.append(data)
        n = len(data)
        self.buffered += n
        self.received += n
        self._wake()

    def feed_eof(self) -> None:
        self.complete = True
        self._wake()

    def fail(self, error: ClientError) -> None:
        if self._error is None and not self.complete:
            self._error = error
            self._wake()

    def discard(self) -> None:
        """Drop what is buffered (the handler is done and will never read it)."""
        self._chunks.clear()
        self.buffered = 0

    @property
    def waiting_for_continue(self) -> bool:
        """The client asked for ``100-continue`` and was never told to send the body."""
        return self._continue


EMPTY_BODY: Final = RequestBody(None, chunked=False, expect_continue=False)
