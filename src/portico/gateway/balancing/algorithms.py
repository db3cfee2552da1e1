"""The four load-balancing algorithms, each over one priority group of an upstream's nodes.

A picker is built once per group and asked, per request, to choose among ``pool``: the
group's nodes that are eligible right now (healthy — or all of them in panic mode — and not
excluded), in the group's configured order. :mod:`portico.gateway.balancing.balancer` decides
the pool; the pickers only choose within it.

- :class:`SmoothWeightedRoundRobin` — nginx's smooth weighted round robin: each pick adds every
  eligible node's weight to its running score, takes the highest (the first on ties) and
  takes the pool's total weight off the winner. Deterministic, and spread evenly: weights
  5, 1, 1 give ``a a b a c a a``.
- :class:`ConsistentHash` — a hash ring with virtual points proportional to weight (160 per
  unit of weight, scaled down to at most 65,536 points a group). Point positions depend only
  on the node's own address and index, so adding or removing a node moves about ``1/N`` of
  the keys, and only to or from that node. An ineligible owner passes its keys on clockwise.
  Hashes are BLAKE2b, so every gateway process maps a key to the same node. A ring of 65,536
  points takes tens of milliseconds to make: :class:`RingBuilder` makes it in steps of
  bounded work (hashing :data:`RING_STEP_POINTS` points, or sorting one of 256 buckets), so
  that discovery can rebuild one on the event loop between other work.
- :class:`LeastConnections` — fewest in-flight requests relative to weight,
  ``(in_flight + 1) / weight``; ties taken round robin.
- :class:`PeakEwma` — Finagle's / APISIX's peak EWMA: a latency estimate that jumps up to any
  slower response at once and decays towards faster ones with a 10 s time constant; the
  score is ``estimate × (in_flight + 1) / weight``, lowest wins, ties round robin. At pick
  time the estimate also decays towards zero with idle time (not stored), so a node that was
  slow a while ago is tried again. A node never measured scores 0 while idle and a large
  penalty while a request is in flight (so a new node is probed with one request, not
  flooded). A failed request counts as at least twice the current estimate and at least
  100 ms, so a node that fails fast does not look fast.
"""

from __future__ import annotations

import hashlib
import math
import struct
from bisect import bisect_left
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Final, Protocol

from portico.gateway.balancing.nodes import Node, PickContext

__all__ = [
    "ConsistentHash",
    "LeastConnections",
    "NodeStats",
    "PeakEwma",
    "Picker",
    "RingBuilder",
    "SmoothWeightedRoundRobin",
    "hash64",
]

EWMA_DECAY_SECONDS: Final = 10.0
EWMA_FAILURE_FLOOR_SECONDS: Final = 0.1
EWMA_UNMEASURED_PENALTY: Final = 1e9
RING_POINTS_PER_WEIGHT: Final = 160
RING_MAX_POINTS: Final = 65_536
#: ring points hashed in one step of a RingBuilder (a multiple of the 8 a digest gives)
RING_STEP_POINTS: Final = 512
#: a ring's points are sorted in buckets by their first byte, one bucket a step
_RING_BUCKET_SHIFT: Final = 56
_RING_BUCKETS: Final = 256
#: the bits of a ring entry below its position that hold its node's index
_OWNER_BITS: Final = 32
_OWNER_MASK: Final = (1 << _OWNER_BITS) - 1
_EIGHT_POINTS: Final = struct.Struct(">8Q")


@dataclass(slots=True)
class NodeStats:
    """Live traffic figures of one node, shared with the next snapshot's balancer."""

    in_flight: int = 0
    ewma: float = 0.0  # seconds; 0: never measured
    ewma_at: float = 0.0  # clock reading of the last update
    requests: int = 0
    failures: int = 0

    def estimate(self, now: float) -> float:
        """The latency estimate decayed towards zero by the time since it was updated."""
        if self.ewma == 0.0:
            return 0.0
        return self.ewma * math.exp(-max(0.0, now - self.ewma_at) / EWMA_DECAY_SECONDS)

    def observe(self, seconds: float, ok: bool, now: float) -> None:
        current = self.estimate(now)
        sample = max(0.0, seconds)
        if not ok:
            sample = max(sample, 2 * current, EWMA_FAILURE_FLOOR_SECONDS)
        if self.ewma == 0.0 or sample > self.ewma:
            self.ewma = sample  # peak: a slower response counts at once
        else:
            weight = math.exp(-max(0.0, now - self.ewma_at) / EWMA_DECAY_SECONDS)
            self.ewma = self.ewma * weight + sample * (1.0 - weight)
        self.ewma_at = now


class Picker(Protocol):
    def pick(self, pool: Sequence[Node], ctx: PickContext) -> Node: ...


def hash64(data: str) -> int:
    """A stable 64-bit hash (the same in every process, unlike ``hash``)."""
    return int.from_bytes(hashlib.blake2b(data.encode(), digest_size=8).digest(), "big")


def _block_points(address: str, block: int) -> tuple[int, ...]:
    digest = hashlib.blake2b(f"{address}#{block}".encode()).digest()
    points: tuple[int, ...] = _EIGHT_POINTS.unpack(digest)
    return points


class RingBuilder:
    """The ring of a :class:`ConsistentHash` over ``nodes``, made in steps: :meth:`step` does
    a bounded amount of the work (hashing up to :data:`RING_STEP_POINTS` points, or sorting
    one of 256 buckets of them) until :attr:`done`. The ring is the same as made in one go:
    the points sorted, ties in node order.

    A point is kept as one integer, its position shifted left with its node's index below
    (:data:`_OWNER_BITS`): integers are not tracked by the garbage collector, where 65,536
    ``(point, node)`` tuples made the collector scan for milliseconds in the middle of a
    step, and sorting them sorts by position, then node order."""

    __slots__ = ("_block", "_buckets", "_counts", "_next_bucket", "_node", "owners", "points")

    def __init__(self, nodes: Sequence[Node]) -> None:
        total = sum(node.weight for node in nodes)
        scale = min(float(RING_POINTS_PER_WEIGHT), RING_MAX_POINTS / total) if total else 0.0
        self._counts = [(node, max(1, int(node.weight * scale))) for node in nodes]
        self._node = 0  # the node being hashed, and its next block of eight points
        self._block = 0
        self._buckets: list[list[int]] = [[] for _ in range(_RING_BUCKETS)]
        self._next_bucket = 0
        self.points: list[int] = []
        self.owners: list[Node] = []

    @property
    def done(self) -> bool:
        return self._next_bucket >= _RING_BUCKETS

    def step(self) -> None:
        if self._node < len(self._counts):
            self._hash_some()
        elif self._next_bucket < _RING_BUCKETS:
            bucket = self._buckets[self._next_bucket]
            bucket.sort()
            counts = self._counts
            self.points.extend(entry >> _OWNER_BITS for entry in bucket)
            self.owners.extend(counts[entry & _OWNER_MASK][0] for entry in bucket)
            self._buckets[self._next_bucket] = []
            self._next_bucket += 1

    def _hash_some(self) -> None:
        budget = RING_STEP_POINTS
        buckets = self._buckets
        while budget > 0 and self._node < len(self._counts):
            index = self._node
            node, count = self._counts[index]
            address = f"{node.host}:{node.port}"
            blocks = (count + 7) // 8
            while budget > 0 and self._block < blocks:
                points = _block_points(address, self._block)
                keep = min(8, count - self._block * 8)
                for point in points[:keep]:
                    buckets[point >> _RING_BUCKET_SHIFT].append(point << _OWNER_BITS | index)
                budget -= 8
                self._block += 1
            if self._block >= blocks:
                self._node += 1
                self._block = 0

    def build(self) -> RingBuilder:
        """All the remaining steps at once."""
        while not self.done:
            self.step()
        return self


class SmoothWeightedRoundRobin:
    __slots__ = ("_current",)

    def __init__(self, nodes: Sequence[Node]) -> None:
        self._current = dict.fromkeys(nodes, 0)

    def pick(self, pool: Sequence[Node], ctx: PickContext) -> Node:
        if len(pool) == 1:
            return pool[0]
        current = self._current
        total = 0
        best = pool[0]
        best_score = None
        for node in pool:
            score = current[node] + node.weight
            current[node] = score
            total += node.weight
            if best_score is None or score > best_score:
                best, best_score = node, score
        current[best] -= total
        return best


class ConsistentHash:
    __slots__ = ("_key", "_owners", "_points", "_size")

    def __init__(
        self,
        nodes: Sequence[Node],
        key: Callable[[PickContext], str],
        ring: RingBuilder | None = None,
    ) -> None:
        """``ring``: the ring of ``nodes``, made beforehand (else it is made here)."""
        self._key = key
        self._size = len(nodes)
        built = (ring or RingBuilder(nodes)).build()
        self._points = built.points
        self._owners = built.owners

    def owner(self, key: str, eligible: Callable[[Node], bool] | None = None) -> Node | None:
        """The node owning ``key``: the first eligible owner clockwise from its hash."""
        points, owners = self._points, self._owners
        start = bisect_left(points, hash64(key))
        for offset in range(len(points)):
            node = owners[(start + offset) % len(points)]
            if eligible is None or eligible(node):
                return node
        return None

    def pick(self, pool: Sequence[Node], ctx: PickContext) -> Node:
        key = self._key(ctx)
        if len(pool) == 1:
            return pool[0]
        if len(pool) == self._size:
            node = self.owner(key)
        else:
            eligible = set(pool)
            node = self.owner(key, eligible.__contains__)
        return pool[0] if node is None else node


class LeastConnections:
    __slots__ = ("_cursor", "_stats")

    def __init__(self, stats: dict[Node, NodeStats]) -> None:
        self._stats = stats
        self._cursor = 0

    def pick(self, pool: Sequence[Node], ctx: PickContext) -> Node:
        return _lowest(self, pool, lambda node: (self._stats[node].in_flight + 1) / node.weight)


class PeakEwma:
    __slots__ = ("_clock", "_cursor", "_stats")

    def __init__(self, stats: dict[Node, NodeStats], clock: Callable[[], float]) -> None:
        self._stats = stats
        self._clock = clock
        self._cursor = 0

    def pick(self, pool: Sequence[Node], ctx: PickContext) -> Node:
        now = self._clock()

        def score(node: Node) -> float:
            stats = self._stats[node]
            estimate = stats.estimate(now)
            if estimate == 0.0:
                if stats.in_flight:
                    return (EWMA_UNMEASURED_PENALTY + stats.in_flight) / node.weight
                return 0.0
            return estimate * (stats.in_flight + 1) / node.weight

        return _lowest(self, pool, score)


def _lowest(
    picker: LeastConnections | PeakEwma, pool: Sequence[Node], score: Callable[[Node], float]
) -> Node:
    """The lowest-scoring node of ``pool``, scanning from a rotating start so that ties are
    shared round robin."""
    size = len(pool)
    start = picker._cursor % size
    best_index = start
    best_score = math.inf
    for offset in range(size):
        index = (start + offset) % size
        value = score(pool[index])
        if value < best_score:
            best_index, best_score = index, value
    picker._cursor = best_index + 1
    return pool[best_index]
