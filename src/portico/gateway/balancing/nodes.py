"""What balancing and health checking share: an upstream's :class:`Node`, the nodes a
specification lists (:func:`nodes_of`), and what a request offers the balancer
(:class:`PickContext`).

In a module of its own so that the balancer, its algorithms, the ``chash`` key and the health
checker all import it and none of them imports another for these types.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from portico.gateway.http.proxy import node_address

__all__ = ["Node", "PickContext", "nodes_of"]


@dataclass(frozen=True, slots=True)
class Node:
    host: str
    port: int
    weight: int = 1
    priority: int = 0
    # Nodes key the balancers' and health checkers' tables, several lookups per request: the
    # generated __hash__ would rebuild and hash a tuple each time (measured: 6 per request).
    _hash: int = field(init=False, repr=False, compare=False, default=0)
    # (every proxied request names its node: formatted once, not per request)
    _address: str = field(init=False, repr=False, compare=False, default="")

    def __post_init__(self) -> None:
        object.__setattr__(self, "_hash", hash((self.host, self.port, self.weight, self.priority)))
        object.__setattr__(self, "_address", node_address(self.host, self.port))

    def __hash__(self) -> int:
        return self._hash

    @property
    def address(self) -> str:
        """``host:port`` (IPv6 in brackets), as nginx's ``$upstream_addr`` writes it."""
        return self._address


@dataclass(slots=True)
class PickContext:
    """What a request offers the balancer: ``headers`` have lower-cased names, ``args`` are the
    query arguments, ``vars`` the other variables (``uri``, ``host``, ``request_uri``...)."""

    client_ip: str
    headers: Mapping[str, str] = field(default_factory=dict)
    args: Mapping[str, str] = field(default_factory=dict)
    consumer: str | None = None
    vars: Mapping[str, str] = field(default_factory=dict)


def nodes_of(specification: Mapping[str, Any]) -> list[Node]:
    """The nodes listed in ``specification`` (empty for a discovery upstream)."""
    return [
        Node(
            host=str(item["host"]),
            port=int(item["port"]),
            weight=int(item.get("weight", 1)),
            priority=int(item.get("priority", 0)),
        )
        for item in specification.get("nodes") or ()
    ]
