"""Choosing the node of an upstream that a request goes to.

One :class:`Balancer` is built per upstream per config snapshot from the upstream's validated
``specification`` (see ``management/upstream/specification.py``) and a :class:`HealthView`
(normally the upstream's :class:`~portico.gateway.health.checker.HealthChecker`). The proxy calls
:meth:`Balancer.pick` for every attempt, :meth:`Balancer.started` when it sends the request
and :meth:`Balancer.finished` when the attempt completes; on a retry it passes the nodes
already tried as ``exclude``.

Which nodes are eligible, in order:

1. Nodes of weight 0 are never picked (they idle, as in APISIX).
2. Priorities: nodes of the highest priority are used first; a lower priority is used only
   when every node of each higher priority is unhealthy or excluded.
3. Unhealthy nodes get no traffic while any weighted node of the upstream is healthy — also
   not for retries: a retry whose only remaining nodes are unhealthy gets ``None`` ("all
   upstream servers tried"), as APISIX does.
4. **Panic mode — when every weighted node is unhealthy**, the balancer picks among all of
   them as if they were healthy (still honouring priorities and ``exclude``) instead of
   failing fast. A health checker that is wrong (a broken probe path, a network split between
   the gateway and the nodes only) must not take the whole service down; nginx and APISIX
   behave the same way, and Envoy's panic threshold is this at 100 %. :attr:`Balancer.panic`
   says whether the upstream is in panic mode now and :attr:`Balancer.panic_picks` counts
   the picks made in it, for metrics and alerts. Live traffic in panic mode also feeds the
   passive checks, so a node that serves well again is re-admitted by them.

Within the eligible nodes of one priority the algorithm of ``type`` chooses — see
:mod:`portico.gateway.balancing.algorithms` (smooth weighted round robin, consistent hash,
least connections, peak EWMA) and :mod:`portico.gateway.balancing.hash_key` (the ``chash`` key;
missing key material falls back to the client address).

Upstreams with ``discovery`` have no ``nodes`` in the specification: the caller passes the
resolved nodes to :meth:`Balancer.build`, or, to rebuild one on the event loop between other
work, makes it in steps with :class:`BalancerBuild` (a ``chash`` ring is the long part).
Passing the previous snapshot's balancer as ``previous`` carries the in-flight counts and
latency estimates over, so a deploy does not reset ``least_conn`` and ``ewma`` (requests in
flight on the old balancer finish on shared figures).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from portico.gateway.balancing.algorithms import (
    ConsistentHash,
    LeastConnections,
    NodeStats,
    PeakEwma,
    Picker,
    RingBuilder,
    SmoothWeightedRoundRobin,
)
from portico.gateway.balancing.hash_key import HashKey
from portico.gateway.balancing.nodes import Node, PickContext, nodes_of

__all__ = ["Balancer", "BalancerBuild", "HealthView"]


class HealthView(Protocol):
    """How the balancer reads node health (normally a ``health.checker.HealthChecker``; it
    may also have a ``version`` that changes whenever any node's health does)."""

    def healthy(self, node: Node) -> bool: ...


@dataclass(slots=True)
class _Group:
    priority: int
    nodes: tuple[Node, ...]
    picker: Picker
    healthy: tuple[Node, ...] = ()


class Balancer:
    __slots__ = (
        "_clock",
        "_groups",
        "_health",
        "_health_version",
        "_panic",
        "_stats",
        "hash_key",
        "nodes",
        "panic_picks",
        "type",
    )

    def __init__(
        self,
        nodes: Iterable[Node],
        health: HealthView,
        *,
        algorithm: str = "roundrobin",
        hash_key: HashKey | None = None,
        previous: Balancer | None = None,
        clock: Callable[[], float] = time.monotonic,
        rings: Mapping[int, RingBuilder] | None = None,
    ) -> None:
        """``rings``: for ``chash``, the ring of each priority's group, made beforehand."""
        self.nodes: tuple[Node, ...] = tuple(dict.fromkeys(nodes))  # duplicates listed once
        self.type = algorithm
        self.hash_key = hash_key
        self.panic_picks = 0
        self._health = health
        self._clock = clock
        self._health_version: object = None
        self._panic = False
        inherited = previous._stats_by_address() if previous is not None else {}
        self._stats: dict[Node, NodeStats] = {
            node: inherited.get((node.host, node.port)) or NodeStats() for node in self.nodes
        }
        made = rings or {}
        self._groups = [
            _Group(priority, group, self._picker(group, made.get(priority)))
            for priority, group in priority_groups(self.nodes)
        ]

    @classmethod
    def build(
        cls,
        specification: Mapping[str, Any],
        health: HealthView,
        *,
        nodes: Iterable[Node] | None = None,
        previous: Balancer | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> Balancer:
        """The balancer of an upstream; ``nodes`` replaces the specification's (discovery)."""
        kind, hash_key = _algorithm(specification)
        return cls(
            nodes_of(specification) if nodes is None else nodes,
            health,
            algorithm=kind,
            hash_key=hash_key,
            previous=previous,
            clock=clock,
        )

    def _picker(self, group: Sequence[Node], ring: RingBuilder | None = None) -> Picker:
        if self.type == "chash":
            key = self.hash_key or HashKey("vars", "remote_addr")
            return ConsistentHash(group, key, ring)
        if self.type == "least_conn":
            return LeastConnections(self._stats)
        if self.type == "ewma":
            return PeakEwma(self._stats, self._clock)
        return SmoothWeightedRoundRobin(group)

    def _stats_by_address(self) -> dict[tuple[str, int], NodeStats]:
        return {(node.host, node.port): stats for node, stats in self._stats.items()}

    def _refresh(self) -> None:
        """Re-read node health, unless the health view's version says nothing changed."""
        version = getattr(self._health, "version", None)
        if version is not None and version == self._health_version:
            return
        healthy = self._health.healthy
        any_healthy = False
        for group in self._groups:
            group.healthy = tuple(node for node in group.nodes if healthy(node))
            any_healthy = any_healthy or bool(group.healthy)
        self._panic = bool(self._groups) and not any_healthy
        self._health_version = version

    @property
    def panic(self) -> bool:
        """True while every weighted node is unhealthy and picks ignore health."""
        self._refresh()
        return self._panic

    def pick(self, ctx: PickContext, *, exclude: Collection[Node] = ()) -> Node | None:
        """The node for this attempt, or None when no node is eligible."""
        self._refresh()
        panic = self._panic
        for group in self._groups:
            pool: Sequence[Node] = group.nodes if panic else group.healthy
            if exclude:
                pool = [node for node in pool if node not in exclude]
            if pool:
                if panic:
                    self.panic_picks += 1
                return group.picker.pick(pool, ctx)
        return None

    def started(self, node: Node) -> None:
        """A request was sent to ``node``."""
        stats = self._stats.get(node)
        if stats is not None:
            stats.in_flight += 1
            stats.requests += 1

    def finished(self, node: Node, seconds: float, ok: bool) -> None:
        """The request sent to ``node`` completed after ``seconds``; ``ok`` unless it failed."""
        stats = self._stats.get(node)
        if stats is None:
            return
        stats.in_flight = max(0, stats.in_flight - 1)
        if not ok:
            stats.failures += 1
        if self.type == "ewma":
            stats.observe(seconds, ok, self._clock())

    def snapshot(self) -> dict[str, Any]:
        """Balancing figures per node, for /status and metrics."""
        now = self._clock()
        return {
            "type": self.type,
            "panic": self.panic,
            "panic_picks": self.panic_picks,
            "nodes": [
                {
                    "host": node.host,
                    "port": node.port,
                    "weight": node.weight,
                    "priority": node.priority,
                    "in_flight": stats.in_flight,
                    "requests": stats.requests,
                    "failures": stats.failures,
                    "ewma_seconds": stats.estimate(now) if self.type == "ewma" else None,
                }
                for node, stats in self._stats.items()
            ],
        }


def _algorithm(specification: Mapping[str, Any]) -> tuple[str, HashKey | None]:
    kind = str(specification.get("type", "roundrobin"))
    if kind != "chash":
        return kind, None
    return kind, HashKey(str(specification.get("hashOn", "vars")), specification.get("key"))


def priority_groups(nodes: Iterable[Node]) -> list[tuple[int, tuple[Node, ...]]]:
    """The weighted nodes by priority, the highest first (the balancer's groups)."""
    weighted = [node for node in nodes if node.weight > 0]
    return [
        (priority, tuple(node for node in weighted if node.priority == priority))
        for priority in sorted({node.priority for node in weighted}, reverse=True)
    ]


class BalancerBuild:
    """A :class:`Balancer` made in steps, for discovery to rebuild one on the event loop:
    while not :attr:`done`, :meth:`step` does a bounded part of the work (a part of a
    ``chash`` ring); then :meth:`balancer` makes it (linear in the nodes), carrying over the
    figures of ``previous`` as :meth:`Balancer.build` does."""

    __slots__ = ("_clock", "_health", "_nodes", "_pending", "_rings", "_specification")

    def __init__(
        self,
        specification: Mapping[str, Any],
        health: HealthView,
        nodes: Iterable[Node],
        *,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._specification = specification
        self._health = health
        self._clock = clock
        self._nodes = tuple(dict.fromkeys(nodes))
        self._rings: dict[int, RingBuilder] = {}
        if _algorithm(specification)[0] == "chash":
            self._rings = {p: RingBuilder(g) for p, g in priority_groups(self._nodes)}
        self._pending = [ring for ring in self._rings.values() if not ring.done]

    @property
    def done(self) -> bool:
        return not self._pending

    def step(self) -> None:
        if self._pending:
            ring = self._pending[0]
            ring.step()
            if ring.done:
                self._pending.pop(0)

    def balancer(self, previous: Balancer | None = None) -> Balancer:
        kind, hash_key = _algorithm(self._specification)
        return Balancer(
            self._nodes,
            self._health,
            algorithm=kind,
            hash_key=hash_key,
            previous=previous,
            clock=self._clock,
            rings=self._rings,
        )
