"""Byte relay between two transports after a protocol switch (WebSocket, any 101 upgrade).

Each side gets a ``_Pipe`` protocol that writes what it receives to the other side. When one
side's outgoing buffer fills, the other side stops being read (end-to-end back-pressure). A
half-close is passed on where the transport can (plain TCP); the tunnel ends when both sides
are closed or when no byte moved for ``idle_timeout`` (nginx closes idle WebSockets after
``proxy_read_timeout`` the same way).
"""

from __future__ import annotations

import asyncio

from .timer import Deadline


class _Pipe(asyncio.Protocol):
    __slots__ = ("_tunnel", "bytes", "closed", "eof", "peer", "transport")

    def __init__(self, tunnel: _Tunnel, transport: asyncio.Transport) -> None:
        self._tunnel = tunnel
        self.transport = transport
        self.peer: _Pipe = self
        self.bytes = 0
        self.closed = False
        self.eof = False

    def data_received(self, data: bytes) -> None:
        self.bytes += len(data)
        peer = self.peer
        if not peer.closed:
            peer.transport.write(data)
        self._tunnel.touch()

    def eof_received(self) -> bool:
        self.eof = True
        peer = self.peer
        if peer.eof or peer.closed or not peer.transport.can_write_eof():
            self._tunnel.shut()
            return False
        peer.transport.write_eof()
        return True

    def pause_writing(self) -> None:
        if not self.peer.closed:
            self.peer.transport.pause_reading()

    def resume_writing(self) -> None:
        if not self.peer.closed:
            self.peer.transport.resume_reading()

    def connection_lost(self, exc: Exception | None) -> None:
        self.lost()

    def lost(self) -> None:
        if not self.closed:
            self.closed = True
            if not self.peer.closed:
                self.peer.transport.close()  # flushes what was already relayed
            self._tunnel.check()


class _Tunnel:
    __slots__ = ("_idle", "_timer", "a", "b", "done")
    a: _Pipe
    b: _Pipe

    def __init__(self, loop: asyncio.AbstractEventLoop, idle_timeout: float) -> None:
        self.done: asyncio.Future[None] = loop.create_future()
        self._idle = idle_timeout
        self._timer = Deadline(loop, self.shut)
        self._timer.after(idle_timeout)

    def touch(self) -> None:
        self._timer.after(self._idle)

    def shut(self) -> None:
        for pipe in (self.a, self.b):
            if not pipe.closed:
                pipe.transport.close()

    def check(self) -> None:
        if self.a.closed and self.b.closed:
            self._timer.cancel()
            if not self.done.done():
                self.done.set_result(None)


async def relay(
    client: asyncio.Transport,
    client_pending: bytes,
    upstream: asyncio.Transport,
    upstream_pending: bytes,
    *,
    idle_timeout: float = 60.0,
) -> tuple[int, int]:
    """Pipe bytes both ways until both sides are closed. ``*_pending``: bytes each side sent
    before the relay took over. Returns (bytes client→upstream, bytes upstream→client)."""
    loop = asyncio.get_running_loop()
    tunnel = _Tunnel(loop, idle_timeout)
    a = tunnel.a = _Pipe(tunnel, client)
    b = tunnel.b = _Pipe(tunnel, upstream)
    a.peer, b.peer = b, a
    client.set_protocol(a)
    upstream.set_protocol(b)
    if client_pending:
        a.data_received(client_pending)
    if upstream_pending:
        b.data_received(upstream_pending)
    for pipe in (a, b):
        if pipe.transport.is_closing():
            pipe.lost()  # it closed before the relay began
        else:
            pipe.transport.resume_reading()
    try:
        await tunnel.done
    finally:
        tunnel.shut()
    return a.bytes, b.bytes
