"""What a discovery source is: the interface every module of ``sources/`` implements.

A source module exports ``SOURCE = SourceSpec(type=..., description=..., check=...,
source=...)``:

- ``check(service_name)`` returns the name as stored, or raises ``ValueError`` whose message
  says what is wrong (it becomes the problem document's detail at
  ``/specification/discovery/serviceName``); the management service calls it when an upstream
  is written, so a gateway never sees a name its source cannot read;
- ``source(service_name, context)`` makes the :class:`Source` of one upstream. It is called
  when a snapshot is built (no I/O there): connections and clients are made on the first
  ``resolve()``, from the event loop, and what all the upstreams of a gateway share (one DNS
  channel) is kept in ``context.shared``.

``Source.resolve()`` runs off the request path, in one of the watcher's workers, but on the
event loop that serves requests. It returns the nodes found now (at most :data:`MAX_NODES`,
the preferred first) and for how long they may be used (the TTL; the watcher holds it within
the node's bounds), an empty answer when the source says there are none, or raises
:class:`DiscoveryFailed` when it could not get an answer. Either of the last two keeps the
last good nodes serving.

Work whose size an answer decides (reading its records, asking for more, building nodes)
is done in steps of bounded work, each after ``await context.pause()``: the gateway's
discovery then never holds the loop for more than ``pacing.TURN_SECONDS`` and one step at a
time, however large the answers or however many come at once (``pacing.py``).
"""

from __future__ import annotations

import abc
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Final, TypeVar

from portico.gateway.balancing.nodes import Node
from portico.gateway.discovery.pacing import Pacer

__all__ = [
    "MAX_NODES",
    "DiscoveryContext",
    "DiscoveryFailed",
    "Resolution",
    "SharedClients",
    "Source",
    "SourceSpec",
]

T = TypeVar("T")

#: nodes one discovered upstream uses at most (a source returns the preferred ones first;
#: the watcher cuts any beyond): what one step of rebuilding a balancer may cost is bounded
MAX_NODES: Final = 1000


class DiscoveryFailed(Exception):
    """The source could not answer (unreachable, timed out, refused, a server failure).

    The message says what failed, for ``/status``, the heartbeat and the management view; it
    never holds credentials."""


@dataclass(frozen=True, slots=True)
class Resolution:
    """One answer of a source: the nodes now, and how many seconds they may be used
    (``None``: the source gives no lifetime; the watcher then uses its bounds' maximum)."""

    nodes: tuple[Node, ...]
    ttl: float | None = None


class Source(abc.ABC):
    """The discovery of one upstream."""

    @abc.abstractmethod
    async def resolve(self) -> Resolution:
        """The upstream's nodes now; :class:`DiscoveryFailed` when no answer came."""


class SharedClients:
    """What the sources of one gateway share (a resolver channel, an HTTP client), made on
    first use and closed with the gateway. ``closer`` is what closes one of them."""

    def __init__(self) -> None:
        self._clients: dict[str, tuple[Any, Callable[[Any], Awaitable[None]]]] = {}

    def get(self, kind: str, factory: Callable[[], T], closer: Callable[[T], Awaitable[None]]) -> T:
        found = self._clients.get(kind)
        if found is None:
            client = factory()
            self._clients[kind] = (client, closer)
            return client
        value: T = found[0]
        return value

    async def aclose(self) -> None:
        clients, self._clients = self._clients, {}
        for client, closer in clients.values():
            await closer(client)


@dataclass(frozen=True)
class DiscoveryContext:
    """What the gateway node offers its sources: its settings (the node's, not a snapshot's),
    the clients they share, and the pace of their work on the event loop."""

    #: DNS servers as ``host:port`` (``PORTICO_GATEWAY_RESOLVERS``); empty: the system's
    resolvers: tuple[str, ...] = ()
    shared: SharedClients = field(default_factory=SharedClients)
    pacer: Pacer = field(default_factory=Pacer)

    async def pause(self) -> None:
        """Await before each step of work on an answer (see the module's docstring)."""
        await self.pacer.pause()


@dataclass(frozen=True)
class SourceSpec:
    """What a source module exports as ``SOURCE``."""

    #: the value of ``discovery.type`` that selects this source
    type: str
    #: one line for people: what ``serviceName`` names
    description: str
    #: ``serviceName`` → as stored; ``ValueError`` with the reason when it is not one
    check: Callable[[str], str]
    #: a source for one upstream's ``serviceName`` (already checked)
    source: Callable[[str, DiscoveryContext], Source]
