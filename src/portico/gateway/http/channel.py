"""The client connection as the parts of a request see it, and the limits it enforces.

A request's body (``body``), its head (``request``) and its responder (``responder``) call back
into the connection that carries them (``connection.HttpProtocol``), which builds all three.
:class:`Channel` declares what they use of it, so that they import this module rather than
the connection. (A base class, not a ``Protocol``, as ``held_writes.Holder`` is: see
CONVENTIONS.md "Compiled modules".)
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from dataclasses import dataclass

from .held_writes import Holder


@dataclass(frozen=True)
class Limits:
    max_header_bytes: int = 32 * 1024  # request line + headers → 431
    max_headers: int = 100  # → 431
    max_body_bytes: int = 8 * 1024 * 1024  # → 413
    header_timeout: float = 10.0  # complete request head → 408 and close
    keepalive_timeout: float = 60.0  # idle keep-alive connection closed after this
    body_timeout: float = 60.0  # between two body chunks → 408
    send_timeout: float = 60.0  # a client that reads nothing for this long is dropped


class Channel(Holder):
    """One client connection, as its requests' bodies, heads and responders use it
    (``connection.HttpProtocol`` is the implementation)."""

    __slots__ = (
        "client_ip",
        "client_port",
        "closed",
        "limits",
        "loop",
        "must_close",
        "write_paused",
    )

    def __init__(self, limits: Limits) -> None:
        self.limits = limits
        self.loop = asyncio.get_running_loop()
        self.client_ip = ""
        self.client_port = 0
        self.closed = False
        self.must_close = False  # close after the current response
        self.write_paused = False  # the transport's buffer is full: ``drain()`` before more

    # -- the request body's side ---------------------------------------------------------

    def body_drained(self) -> None:
        """The body's consumer took what was buffered (reading may resume)."""
        raise NotImplementedError

    def body_timed_out(self) -> None:
        """No body chunk came within ``limits.body_timeout``."""
        raise NotImplementedError

    def send_continue(self) -> None:
        """The body is wanted: answer ``Expect: 100-continue``."""
        raise NotImplementedError

    # -- the responder's side ------------------------------------------------------------

    def write(self, data: bytes) -> None:
        """Write now, after what is held."""
        raise NotImplementedError

    def writelines(self, parts: tuple[bytes, ...]) -> None:
        raise NotImplementedError

    def hold(self, data: bytes) -> None:
        """Write at the end of this loop iteration, with whatever else is written then."""
        raise NotImplementedError

    async def drain(self) -> None:
        """Wait until the client has read enough (``write_paused`` is over)."""
        raise NotImplementedError

    def close(self) -> None:
        raise NotImplementedError

    def detach(self) -> tuple[asyncio.Transport, bytes]:
        """Hand the connection over: its transport and the bytes read past the request head."""
        raise NotImplementedError

    def taken_finished(self, responder: object, error: BaseException | None) -> None:
        """``responder`` (of a request its handler took over) is done; ``error``: it failed."""
        raise NotImplementedError

    def taken_deferred(self, responder: object, job: Awaitable[None]) -> None:
        """The rest of ``responder``'s request is ``job``, run in the connection's task."""
        raise NotImplementedError
