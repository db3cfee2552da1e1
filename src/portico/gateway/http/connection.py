"""One client connection of the HTTP/1.1 server: a raw ``asyncio.Protocol`` over ``httptools``'
llhttp parser.

One ``HttpProtocol`` per connection parses requests and hands each one, as soon as its head is
in, to the request cycle of its base class (``request_cycle.RequestCycle``: the handler called
once per request, one request at a time, at once, from callbacks or in the connection's one
task). A request with a body is handed over once the read that brought its head has been
parsed (or its body ended, if sooner): most bodies come whole with their head, and a handler
that finds its body complete goes on without waiting for it. Pipelined requests wait their
turn with reading paused, and a handler that leaves its body unread gets it discarded so the
connection can go on. Refused heads (smuggling shapes, limits, slow heads; see
``request.RequestHead.build``) are answered with a JSON error and the connection is closed.
What is written to the client (held writes, back-pressure) is ``client_writes.ClientWrites``',
the base of both.

Timers: one lazily re-armed ``Deadline`` per connection covers the head (``header_timeout``),
the idle keep-alive wait and discarding an unread body; body and send waits arm their own.
"""

from __future__ import annotations

import asyncio
from collections import deque
from typing import Final, cast

import httptools

from .body import EMPTY_BODY, HIGH_WATER, RequestBody
from .channel import Limits
from .errors import BadRequest, ClientDisconnected, ClientError, PayloadTooLarge, raw_error_response
from .held_writes import HeldWrites
from .request import HeadError, Request, RequestHead
from .request_cycle import RequestCycle
from .responder import Handler, Responder
from .timer import Deadline

_CONTINUE: Final = b"HTTP/1.1 100 Continue\r\n\r\n"
# After an answer that leaves client bytes unread (an error, an unread body), our side is shut
# and theirs drained this long before closing: closing with unread data sends a RST, which can
# destroy the answer before the client reads it (nginx's lingering_close).
LINGER_SECONDS: Final = 2.0


class _Callbacks:
    """What the parser calls: the head's own methods for target and headers (no extra hop on
    the hottest callback), the protocol's for the rest."""

    __slots__ = (
        "on_body",
        "on_header",
        "on_headers_complete",
        "on_message_begin",
        "on_message_complete",
        "on_url",
    )

    def __init__(self, proto: HttpProtocol, head: RequestHead) -> None:
        self.on_message_begin = proto.on_message_begin
        self.on_url = head.on_url
        self.on_header = head.on_header
        self.on_headers_complete = proto.on_headers_complete
        self.on_body = proto.on_body
        self.on_message_complete = proto.on_message_complete


class HttpProtocol(RequestCycle):  # an asyncio.Protocol by its methods (see server.serve)
    __slots__ = (
        "_body_awaited",
        "_deferred",
        "_discarding",
        "_head",
        "_head_bytes",
        "_head_timed",
        "_lingering",
        "_live",
        "_parser",
        "_parsing_body",
        "_pipeline",
        "_tail_bytes",
        "_timer",
        "_upgrade_buf",
        "halted",
    )

    def __init__(
        self,
        handler: Handler,
        limits: Limits,
        live: set[HttpProtocol],
        held_writes: HeldWrites | None = None,
    ) -> None:
        # limits, loop, client address, closed, must_close, write_paused; the transport and
        # what is written to it; the handler and the request it runs
        super().__init__(handler, limits, held_writes)
        self._live = live
        self._timer = Deadline(self.loop, self._timed_out)
        self._head = RequestHead(limits.max_headers)
        self._parser = httptools.HttpRequestParser(_Callbacks(self, self._head))
        self.halted = False  # parse nothing more; close once the current response is out
        self._pipeline: deque[tuple[Request, Responder]] | None = None
        self._parsing_body: RequestBody | None = None
        # the request being started has a body: it begins once the read that brought its
        # head is parsed, or its body is complete (see on_headers_complete)
        self._body_awaited = False
        self._discarding = False
        self._lingering = False
        self._deferred: HeadError | None = None
        self._upgrade_buf: bytearray | None = None
        self._head_timed = False
        self._head_bytes = 0
        self._tail_bytes = 0

    # -- asyncio.Protocol ----------------------------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        # uvloop's transports implement the interface without subclassing asyncio.Transport
        self.transport = cast(asyncio.Transport, transport)
        self._live.add(self)
        peer = transport.get_extra_info("peername")
        if peer:
            self.client_ip, self.client_port = peer[0], peer[1]
        self._head_timed = True
        self._timer.after(self.limits.header_timeout)

    def data_received(self, data: bytes) -> None:
        if self.halted:
            return
        if self._upgrade_buf is not None:
            self._upgrade_buf += data
            if len(self._upgrade_buf) > HIGH_WATER:
                self._set_reading(paused=True)
            return
        head = self._head
        was_in_head = head.open
        body = self._parsing_body
        received = body.received if body is not None else 0  # (a new body starts at 0)
        try:
            self._parser.feed_data(data)
        except httptools.HttpParserUpgrade as upgrade:
            self._upgrade_buf = bytearray(data[upgrade.args[0] :])
            self._begin_awaited()  # (none: an upgrade request has no body, and comes last)
            return
        except httptools.HttpParserError as error:
            self._begin_awaited()  # (its handler hears of the failure from its body)
            self._parse_failed(error)
            return
        if self._body_awaited:
            self._begin_awaited()  # the rest of its body is still to come: it streams
        limits = self.limits
        if head.open:
            # httptools buffers a header until its end: bound what a never-ending head costs.
            self._head_bytes = self._head_bytes + len(data) if was_in_head else len(data)
            if self._head_bytes > limits.max_header_bytes:
                self._head_error(HeadError(431))
            elif not self._head_timed and self._active is None:
                self._head_timed = True
                self._timer.after(limits.header_timeout)
        elif self._parsing_body is not None and self._parsing_body.chunked:
            # Chunk sizes, extensions and trailers carry no body bytes, and llhttp reads them
            # without limit: bound them like a head (counting whole reads, head included when
            # the body starts in the same read — an over-estimate, never an under-estimate).
            if self._parsing_body.received == received:
                self._tail_bytes += len(data)
                if self._tail_bytes > limits.max_header_bytes:
                    self._body_failed(BadRequest("chunk framing too long"))
            else:
                self._tail_bytes = 0

    def eof_received(self) -> bool:
        # A client that shuts its side down has gone away for all practical purposes (nginx
        # answers it with 499 too): let the transport close, which cancels what is in flight.
        return False

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = self.halted = True
        self._held = None
        self._live.discard(self)
        self._timer.cancel()
        lost = ClientDisconnected("client disconnected")
        if self._parsing_body is not None:
            self._parsing_body.fail(lost)
        if self._active is not None:
            self._active.lost()
        self._pipeline = None
        waiter = self._drain_waiter
        if waiter is not None and not waiter.done():
            waiter.set_exception(lost)
        self._wake_idle()  # its task ends

    # -- parser callbacks ----------------------------------------------------------------

    def on_message_begin(self) -> None:
        self._head.open = True

    def on_headers_complete(self) -> None:
        head = self._head
        head.open = False
        if self.halted:
            # An answer given at once closed the connection; pipelined requests after it in
            # the same read are not served (they would have waited and been dropped).
            head.reset()
            return
        self._head_timed = False
        self._timer.clear()
        parser = self._parser
        keep_alive = parser.should_keep_alive()
        if keep_alive and not head.has_connection_header:
            # Of the versions llhttp accepts (0.9, 1.0, 1.1, 2.0; a test holds it to that),
            # only 1.1 keeps a connection without a Connection header: no need to ask for the
            # version, which httptools formats into a string (measured: 2,300 instructions).
            version = "1.1"
        else:
            version = parser.get_http_version()
        try:
            request, http10 = head.build(
                self,
                parser.get_method(),
                version,
                head.upgrade_offered and parser.should_upgrade(),
                keep_alive and not self.must_close,
            )
        except HeadError as refused:
            raise head.refuse(refused) from None
        responder = Responder(
            self,
            request,
            head_only=request.method == "HEAD",
            http10=http10,
            keep_alive=request.keep_alive,
        )
        body = request.body
        if body is not EMPTY_BODY:
            self._parsing_body = body
            self._tail_bytes = 0
        if self._active is None:
            if body is EMPTY_BODY:
                self._start(request, responder)
            else:
                # Begun once the body is in (on_message_complete) or this read is parsed
                # (data_received), whichever is first: a body that came with its head is
                # then complete when the handler runs, which need not wait for it.
                self._active = responder
                self._request = request
                self._body_awaited = True
        else:
            if self._pipeline is None:
                self._pipeline = deque()
            self._pipeline.append((request, responder))
            self._set_reading(paused=True)

    def on_body(self, data: bytes) -> None:
        body = self._parsing_body
        if body is None:
            return
        if body.received + len(data) > self.limits.max_body_bytes:
            body.fail(PayloadTooLarge("request body too large"))
            # stops the parser; _parse_failed sees the body's own error
            raise self._head.refuse(HeadError(413))
        body.feed(data)
        if self._discarding:
            body.discard()
        elif body.buffered > HIGH_WATER:
            self._set_reading(paused=True)

    def on_message_complete(self) -> None:
        body = self._parsing_body
        if body is not None:
            self._parsing_body = None
            body.feed_eof()
            if self._body_awaited:
                self._begin_awaited()
            elif self._discarding:
                self._discarding = False
                self._next()

    def _begin_awaited(self) -> None:
        """Begin the request whose start waited for its body (see on_headers_complete)."""
        if self._body_awaited:
            self._body_awaited = False
            active = self._active
            request = self._request
            if active is not None and request is not None:
                self._start(request, active)

    # -- after a request (see request_cycle) ---------------------------------------------

    def _finish(self, request: Request, responder: Responder) -> None:
        self._active = None
        if self.closed or self._detached:
            return
        body = request.body
        if not responder.keep_alive or self.must_close or request.upgrade:
            if self.halted or not body.complete:
                self.linger()
            else:
                self.close()
            return
        if not body.complete:
            if body.waiting_for_continue:
                self.linger()  # the client may never send the body it was not asked for
                return
            self._discarding = True  # read and drop the rest, then serve the next request
            body.discard()
            self._timer.after(self.limits.body_timeout)
            self._set_reading(paused=False)
            return
        self._next()

    def _next(self) -> None:
        pipeline = self._pipeline
        if pipeline:
            request, responder = pipeline.popleft()
            if not pipeline:
                self._pipeline = None
            self._start(request, responder)
        elif self._deferred is not None:
            self._respond_and_close(self._deferred)
            return
        else:
            in_head = self._head.open
            limits = self.limits
            self._timer.after(limits.header_timeout if in_head else limits.keepalive_timeout)
            self._head_timed = in_head
        if self._pipeline is None and not self.halted:
            self._set_reading(paused=False)

    # -- errors and timers ---------------------------------------------------------------

    def _parse_failed(self, exc: httptools.HttpParserError) -> None:
        # what a callback refused (not exc.__context__: see RequestHead.refused)
        refused = self._head.refused
        self._head.refused = None
        body = self._parsing_body
        if refused is not None and (body is None or refused.status != 413):
            self._head_error(refused)
        elif body is None:
            self._head_error(HeadError(400))
        else:
            # Broken framing or a passed limit in the middle of a body (the body may already
            # hold a more precise error): the handler reading it answers.
            self._body_failed(BadRequest("invalid request body framing"))

    def _body_failed(self, error: ClientError) -> None:
        body = self._parsing_body
        if body is not None:
            body.fail(error)
        self.must_close = self.halted = True
        if self._active is None:
            self.linger()  # it was being discarded
        else:
            self._set_reading(paused=True)

    def _head_error(self, error: HeadError) -> None:
        if self._active is None:
            self._respond_and_close(error)
        else:
            # A pipelined request is broken: answer it after the current response.
            self._deferred = error
            self.halted = True
            self._set_reading(paused=True)

    def _respond_and_close(self, error: HeadError) -> None:
        self.halted = True
        if not self.closed:
            self.write(raw_error_response(error.status, error.message))
            self.linger()

    def linger(self) -> None:
        """Close once the client has had the chance to read what was sent (see LINGER_SECONDS)."""
        self.halted = True
        if self.closed or self._lingering:
            return
        transport = self.transport
        if not transport.can_write_eof():
            self.close()
            return
        self._lingering = True
        self._discarding = False
        self.flush()
        transport.write_eof()  # FIN after what is buffered; what the client sends is dropped
        self._set_reading(paused=False)
        self._timer.after(LINGER_SECONDS)

    def _timed_out(self) -> None:
        if self.closed or self._detached:
            return
        if self._discarding or self._lingering:
            self.close()
        elif self._active is None:
            if self._head.open:
                self._respond_and_close(HeadError(408))
            else:
                self.close()  # idle keep-alive (or a connection that never sent anything)

    # -- used by RequestBody and Responder (see channel.Channel) ------------------------

    def body_timed_out(self) -> None:
        self.must_close = self.halted = True

    def body_drained(self) -> None:
        if self._reading_paused and self._pipeline is None and not self.halted:
            self._set_reading(paused=False)

    def send_continue(self) -> None:
        active = self._active
        if active is not None and not active.started and not self.closed:
            self.write(_CONTINUE)

    def close(self) -> None:
        self.halted = True
        if not self.closed:
            self.flush()
            self.closed = True
            self._timer.cancel()
            self.transport.close()

    def detach(self) -> tuple[asyncio.Transport, bytes]:
        self.flush()
        self._detached = self.halted = True
        self._timer.cancel()
        self._live.discard(self)
        buf = self._upgrade_buf
        self._upgrade_buf = None
        return self.transport, bytes(buf) if buf else b""

    @property
    def idle(self) -> bool:
        return self._active is None and not self._head.open and not self._discarding
