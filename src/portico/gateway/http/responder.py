"""Writing one response: status line and headers, then a body framed by Content-Length,
chunked encoding (HTTP/1.1 without a length) or the connection's close (HTTP/1.0).

The head is kept back until the first body write or ``end()`` so that head and first chunk
leave in one ``transport.write``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any, Final

from .channel import Channel
from .errors import ClientDisconnected, error_body, reason
from .request import Request

# (each one Final: see CONVENTIONS.md "Compiled modules")
_NONE: Final = 0
_LENGTH: Final = 1
_CHUNKED: Final = 2
_CLOSE: Final = 3
_FRESH: Final = 0
_STARTED: Final = 1
_DONE: Final = 2

_STATUS_LINES: Final[dict[int, str]] = {}
_STATUS_HEADS: Final[dict[int, bytes]] = {}


def _refuse_line_breaks(headers: list[tuple[str, str]]) -> None:
    for name, value in headers:
        if "\n" in value or "\r" in value or "\n" in name or "\r" in name:
            raise ValueError(f"line break in response header {name!r}")
    raise ValueError("line break in a response header")


def _status_head(status: int) -> bytes:
    line = _STATUS_HEADS.get(status)
    if line is None:
        line = _STATUS_HEADS[status] = _status_line(status).encode("latin-1")
    return line


def _status_line(status: int) -> str:
    line = _STATUS_LINES.get(status)
    if line is None:
        if not 100 <= status <= 999:
            raise ValueError(f"invalid status {status}")
        line = _STATUS_LINES[status] = f"HTTP/1.1 {status} {reason(status)}\r\n"
    return line


class Taken:
    """What a handler returns when it has taken the request over without a coroutine: it will
    call ``Responder.finish()`` when done, or ``Responder.defer()`` to go on in one."""

    __slots__ = ()


TAKEN: Final = Taken()


class Responder:
    """Writes the response to one request (see the module docstring for the framing rules).

    ``status`` and ``bytes_written`` (body bytes) are there for the access log.
    """

    __slots__ = (
        "_head",
        "_mode",
        "_on_disconnect",
        "_proto",
        "_remaining",
        "_state",
        "bytes_written",
        "disconnected",
        "head_only",
        "http10",
        "keep_alive",
        "request",
        "status",
        "tag",
    )

    def __init__(
        self,
        proto: Channel,
        request: Request,
        *,
        head_only: bool,
        http10: bool,
        keep_alive: bool,
    ):
        self._proto = proto
        self.request = request  # the request this answers
        self._head: bytes | None = None
        self._mode = _NONE
        self._remaining = 0
        self._state = _FRESH
        self._on_disconnect: Callable[[], object] | None = None
        self.head_only = head_only
        self.http10 = http10
        self.keep_alive = keep_alive
        self.disconnected = False
        self.status = 0
        self.bytes_written = 0
        #: a header every response to this request carries, replacing any of the same
        #: (lower-case) name among the headers given: the gateway's X-Request-Id
        self.tag: tuple[str, str] | None = None

    @property
    def started(self) -> bool:
        return self._state != _FRESH

    @property
    def ended(self) -> bool:
        return self._state == _DONE

    @property
    def committed(self) -> bool:
        """Whether any byte of the response has left (``start()`` alone keeps the head back)."""
        return self._state != _FRESH and self._head is None

    def reset(self) -> None:
        """Forget a started but uncommitted response, so that another one can be sent."""
        if self.committed:
            raise RuntimeError("the response is already on the wire")
        self._state = _FRESH
        self._head = None
        self.status = 0

    def start(self, status: int, headers: list[tuple[str, str]], *, parsed: bool = False) -> None:
        """Status line and headers. A ``content-length`` among them frames the body; without
        one the body is chunked (HTTP/1.1) or ends with the connection (HTTP/1.0).
        ``transfer-encoding`` is the engine's business and is dropped if given. ``parsed``:
        the headers are an upstream's, as the engine collected them from llhttp (names
        lower-cased; llhttp refuses CR and LF in names and values), so they need no check for
        line breaks nor lower-casing."""
        self._head = self._build(status, headers, None, parsed)

    def start_lines(self, status: int, lines: list[bytes], declared: int | None) -> None:
        """``start`` with an upstream's headers as they came: ``lines`` are the pieces of
        their wire lines, ``name: value\r\n`` each once joined (as llhttp read them: it
        refuses CR and LF in names and values), relayed without being taken apart. None of
        them is hop-by-hop nor the tag's name; ``declared`` is their Content-Length."""
        if self._state != _FRESH:
            raise RuntimeError("response already started")
        keep_alive = self.keep_alive and not self._proto.must_close
        parts = [_status_head(status)]
        parts += lines
        tag = self.tag
        if tag is not None:
            parts.append(f"{tag[0]}: {tag[1]}\r\n".encode("latin-1"))
        parts.append(self._frame(status, None, declared, False, keep_alive).encode("latin-1"))
        self._head = b"".join(parts)
        self.status = status
        self._state = _STARTED

    async def write(self, chunk: bytes) -> None:
        """Send a body chunk; waits while the client is not reading (back-pressure)."""
        if self._state != _STARTED:
            raise RuntimeError("write() outside start() … end()")
        if not chunk:
            return
        proto = self._proto
        if proto.closed:
            raise ClientDisconnected("client disconnected")
        head = self._head
        mode = self._mode
        n = len(chunk)
        if mode == _CHUNKED:
            size = b"%x\r\n" % n
            if head is None:
                proto.writelines((size, chunk, b"\r\n"))
            else:
                proto.writelines((head, size, chunk, b"\r\n"))
        elif mode == _NONE:  # HEAD, 204, 304: the body is not sent
            if head is not None:
                proto.write(head)
            n = 0
        else:
            if mode == _LENGTH:
                self._spend(n)
            if head is None:
                proto.write(chunk)
            else:
                proto.writelines((head, chunk))
        self._head = None
        self.bytes_written += n
        if proto.write_paused:
            await proto.drain()

    def end(self) -> None:
        """Finish the response (the terminating chunk when chunked)."""
        if self._state == _FRESH:
            raise RuntimeError("end() before start()")
        if self._state == _DONE:
            return
        self._state = _DONE
        proto = self._proto
        if proto.closed:
            return
        head = self._head
        self._head = None
        if self._mode == _CHUNKED:
            proto.write(b"0\r\n\r\n" if head is None else head + b"0\r\n\r\n")
        elif head is not None:
            proto.write(head)
        if self._mode == _LENGTH and self._remaining:
            # Fewer bytes than announced: only closing tells the client.
            proto.close()

    def write_last(self, chunk: bytes) -> None:
        """The last body chunk (may be empty) and the end of the response, in one write with
        the head when it is still held back, at the end of this loop iteration (see held_writes):
        a complete answer costs one system call. Does not wait for a client that is not
        reading (the connection drains before its next response)."""
        if self._state != _STARTED:
            raise RuntimeError("write_last() outside start() … end()")
        proto = self._proto
        if proto.closed:
            raise ClientDisconnected("client disconnected")
        head = self._head
        pieces: list[bytes] = [] if head is None else [head]
        mode = self._mode
        n = len(chunk)
        if mode == _CHUNKED:
            if n:
                pieces += (b"%x\r\n" % n, chunk, b"\r\n0\r\n\r\n")
            else:
                pieces.append(b"0\r\n\r\n")
        elif mode == _NONE:  # HEAD, 204, 304: the body is not sent
            n = 0
        else:
            if mode == _LENGTH:
                self._spend(n)
            if n:
                pieces.append(chunk)
        self._head = None
        self._state = _DONE
        self.bytes_written += n
        for piece in pieces:
            proto.hold(piece)
        if mode == _LENGTH and self._remaining:
            proto.close()  # fewer bytes than announced: only closing tells the client

    def send(self, status: int, headers: list[tuple[str, str]], body: bytes = b"") -> None:
        """The whole response in one write, with ``content-length``, at the end of this loop
        iteration (see held_writes)."""
        head = self._build(status, headers, len(body))
        self._state = _DONE
        proto = self._proto
        if proto.closed:
            return
        proto.hold(head)
        if self._mode != _NONE and body:
            self.bytes_written = len(body)
            proto.hold(body)

    def send_error(self, status: int, message: str | None = None) -> None:
        """``{"error_msg": ...}`` JSON, the shape of every answer the gateway makes itself."""
        self.send(status, [("content-type", "application/json")], error_body(status, message))

    def abort(self) -> None:
        """The response cannot be completed (the upstream failed mid-body): close the connection
        after what was written, so the client sees a truncated response, not a complete one."""
        self._state = _DONE
        self._head = None
        self._proto.close()

    def detach(self) -> tuple[asyncio.Transport, bytes]:
        """After ``start(101, ...)``: hand the connection over. Returns the transport and the
        bytes the client sent after the request head. The caller must ``set_protocol()`` on the
        transport before yielding to the loop, then ``resume_reading()`` (it may be paused)."""
        if self._state == _FRESH:
            raise RuntimeError("detach() before start()")
        self._state = _DONE
        proto = self._proto
        if self._head is not None and not proto.closed:
            proto.write(self._head)
        self._head = None
        return proto.detach()

    @property
    def loop(self) -> asyncio.AbstractEventLoop:
        """The connection's loop (``asyncio.get_running_loop()`` costs a getpid() system call
        on Python 3.11; the hot path asks the connection instead)."""
        return self._proto.loop

    def finish(self, error: BaseException | None = None) -> None:
        """For a handler that returned ``TAKEN``: it is done with this request (``error``: it
        failed, and is answered as a handler that raised it would be)."""
        self._proto.taken_finished(self, error)

    def defer(self, job: Coroutine[Any, Any, None]) -> None:
        """For a handler that returned ``TAKEN``: the rest of the request is ``job``, run in the
        connection's task (where a client that goes away cancels it, as for any handler)."""
        self._proto.taken_deferred(self, job)

    def on_disconnect(self, callback: Callable[[], object] | None) -> None:
        """Call ``callback`` (once) if the client goes away while it is set."""
        self._on_disconnect = callback
        if callback is not None and self.disconnected:
            self._on_disconnect = None
            callback()

    # -- engine side ---------------------------------------------------------------------

    def lost(self) -> None:
        self.disconnected = True
        callback = self._on_disconnect
        if callback is not None:
            self._on_disconnect = None
            callback()

    def _spend(self, n: int) -> None:
        """Count ``n`` body bytes against the declared content-length; more is refused (the
        connection closes: the client cannot tell where the response would end)."""
        if n > self._remaining:
            self._proto.close()
            raise RuntimeError("response body longer than its content-length")
        self._remaining -= n

    def _build(
        self,
        status: int,
        headers: list[tuple[str, str]],
        length: int | None,
        parsed: bool = False,
    ) -> bytes:
        if self._state != _FRESH:
            raise RuntimeError("response already started")
        keep_alive = self.keep_alive and not self._proto.must_close
        parts = [_status_line(status)]
        declared: int | None = None
        own_connection = False
        tag_name, tag_value = self.tag or ("", "")
        tag_size = len(tag_name) or -1
        for name, value in headers:
            size = len(name)
            if size == tag_size or size == 14 or size == 17 or size == 10:
                # the length of a name handled here: compared lower-cased (parsed: llhttp's
                # names came lower-cased through the parser callbacks)
                key = name if parsed else name.lower()
                if key == tag_name:
                    continue
                if key == "content-length":
                    if length is not None:
                        continue  # send() frames the body it was given
                    if not value.isdigit() or not value.isascii():
                        raise ValueError(f"invalid content-length {value!r}")
                    declared = int(value)
                elif key == "transfer-encoding":
                    continue
                elif key == "connection":
                    own_connection = True
                    if "close" in value.lower():
                        keep_alive = False
            parts.append(name)  # (four appends: no tuple per header)
            parts.append(": ")
            parts.append(value)
            parts.append("\r\n")
        if tag_name:
            parts += (tag_name, ": ", tag_value, "\r\n")
        after_headers = len(parts)
        framing = self._frame(status, length, declared, own_connection, keep_alive)
        parts.append(framing)
        text = "".join(parts)
        # Every line written above ends in its one CRLF: the status line, four parts per
        # header, the framing's own. Any other CR or LF came from a header name or value and
        # would split the response (two C-level counts, instead of four scans per header:
        # this runs for every response).
        if not parsed:
            lines = 1 + (after_headers - 1) // 4 + framing.count("\n")
            if text.count("\r") != lines or text.count("\n") != lines:
                _refuse_line_breaks(headers)
        self.status = status
        self._state = _STARTED
        return text.encode("latin-1")

    def _frame(
        self,
        status: int,
        length: int | None,
        declared: int | None,
        own_connection: bool,
        keep_alive: bool,
    ) -> str:
        """How the body is framed (``length``: given by ``send``; ``declared``: a
        Content-Length among the headers), and the lines that say it, the head's empty line
        included."""
        framing = ""
        if status < 200 or status == 204 or status == 304:
            self._mode = _NONE
        elif length is not None:
            self._mode = _NONE if self.head_only else _LENGTH
            framing = f"content-length: {length}\r\n"
        elif self.head_only:
            self._mode = _NONE
        elif declared is not None:
            self._mode = _LENGTH
            self._remaining = declared
        elif not self.http10:
            self._mode = _CHUNKED
            framing = "transfer-encoding: chunked\r\n"
        else:
            self._mode = _CLOSE
            keep_alive = False
        if not own_connection:
            if not keep_alive:
                framing += "connection: close\r\n"
            elif self.http10:
                framing += "connection: keep-alive\r\n"
        self.keep_alive = keep_alive
        return framing + "\r\n"


#: Called once per request. Returns a coroutine the connection's task runs (the usual
#: ``async def`` handler), None when it answered at once, or ``TAKEN``.
Handler = Callable[[Request, Responder], Awaitable[None] | Taken | None]
