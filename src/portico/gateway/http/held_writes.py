"""Writes held until the end of the event loop's current iteration, then made together.

A proxy that writes each answer as soon as it has it spreads its writes out in time: the peer
(the upstream server, the client) handles each one and goes back to sleep before the next, so
every write pays for waking it up, and the kernel's wake-up path cost the gateway more than
its own Python code per request (measured: the nginx backend was woken once per one or two
requests; with the writes of an iteration made together, once per twenty). Envoy and Netty's
flush consolidation do the same.

Only complete answers and upstream requests without a body or with a small one already
received are held (nothing waits on them being written); a writer keeps its order by flushing
what it holds before any direct write, close or end of stream.
"""

from __future__ import annotations

import asyncio


class Holder:
    """A writer that holds data (a base class, not a ``Protocol``: ``flush`` is called twice
    per proxied request; see CONVENTIONS.md "Compiled modules")."""

    __slots__ = ()

    def flush(self) -> None:
        """Write what is held (unless the connection has closed since)."""
        raise NotImplementedError


class HeldWrites:
    """The writers holding data in this loop iteration; ``flush`` runs once it is over."""

    __slots__ = ("_holders",)

    def __init__(self) -> None:
        self._holders: list[Holder] = []

    def add(self, holder: Holder, loop: asyncio.AbstractEventLoop) -> None:
        """``holder`` holds data now (it is added once until flushed)."""
        holders = self._holders
        if not holders:
            loop.call_soon(self.flush)
        holders.append(holder)

    def flush(self) -> None:
        holders = self._holders
        self._holders = []
        for holder in holders:
            holder.flush()
