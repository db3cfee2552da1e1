"""The writing side of a client connection (``connection.HttpProtocol`` is the rest): writes made
after what is held, held writes (answers nothing waits on, made together at the end of the
loop iteration: ``held_writes``), the client's back-pressure (``drain``, bounded by the send
timeout) and pausing the reads.
"""

from __future__ import annotations

import asyncio

from .channel import Channel, Limits
from .errors import ClientDisconnected
from .held_writes import HeldWrites


class ClientWrites(Channel):  # (an asyncio.Protocol by the methods of its subclass)
    __slots__ = ("_drain_waiter", "_held", "_held_writes", "_reading_paused", "transport")

    def __init__(self, limits: Limits, held_writes: HeldWrites | None) -> None:
        super().__init__(limits)  # limits, loop, client address, closed, must_close, write_paused
        self.transport: asyncio.Transport = None  # type: ignore[assignment]
        self._held_writes = held_writes or HeldWrites()
        self._held: list[bytes] | None = None  # written at the end of this loop iteration
        self._drain_waiter: asyncio.Future[None] | None = None
        self._reading_paused = False

    # -- asyncio.Protocol: the client's back-pressure ------------------------------------

    def pause_writing(self) -> None:
        self.write_paused = True

    def resume_writing(self) -> None:
        self.write_paused = False
        waiter = self._drain_waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    async def drain(self) -> None:
        if self.closed:
            raise ClientDisconnected("client disconnected")
        waiter = self._drain_waiter = self.loop.create_future()
        handle = self.loop.call_later(self.limits.send_timeout, self._send_timed_out)
        try:
            await waiter
        finally:
            handle.cancel()
            self._drain_waiter = None

    def _send_timed_out(self) -> None:
        if not self.closed:
            self._held = None
            self.transport.abort()

    # -- writing (see held_writes) -------------------------------------------------------

    def write(self, data: bytes) -> None:
        """Write now, after what is held."""
        if self._held is not None:
            self.flush()
        self.transport.write(data)

    def writelines(self, parts: tuple[bytes, ...]) -> None:
        if self._held is not None:
            self.flush()
        self.transport.writelines(parts)

    def hold(self, data: bytes) -> None:
        """Write at the end of this loop iteration, with whatever else is written then."""
        held = self._held
        if held is None:
            self._held = [data]
            self._held_writes.add(self, self.loop)
        else:
            held.append(data)

    def flush(self) -> None:
        held = self._held
        if held is not None:
            self._held = None
            if not self.closed:
                if len(held) == 1:
                    self.transport.write(held[0])
                else:
                    self.transport.writelines(held)

    def _set_reading(self, *, paused: bool) -> None:
        if paused != self._reading_paused and not self.closed:
            self._reading_paused = paused
            if paused:
                self.transport.pause_reading()
            else:
                self.transport.resume_reading()
