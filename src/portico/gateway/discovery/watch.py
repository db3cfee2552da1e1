"""Keeping discovered upstreams' nodes current, off the request path.

One :class:`DiscoveredUpstream` per upstream with ``discovery``: it asks the source, and is
due again after the answer's TTL held within the node's bounds (``PORTICO_GATEWAY_DISCOVERY_
MIN_TTL_SECONDS`` … ``_MAX_TTL_SECONDS``), stretched by up to 5 % so that upstreams of the
same TTL do not all come due at the same moment. An answer that differs from the last one
goes to the listener (the upstream's runtime, which rebuilds its balancer and tells its
health checker: nodes that stayed keep their state). When the source fails or answers with
no node, the last good nodes keep serving, the failure is recorded (``/status``,
``/metrics``, the heartbeat) and the source is asked again after 1, 2, 4 ... times the
minimum, at most the maximum: a DNS outage never empties a working upstream.

:class:`Discovery` is the gateway's set of them, kept across snapshots while an upstream's
``discovery`` is unchanged (as health checkers are), so a deploy elsewhere neither forgets
the nodes nor asks again. However many upstreams it keeps, it runs one timer (the earliest
due time of a heap) and :data:`CONCURRENT_RESOLUTIONS` workers: a thousand upstreams coming
due together are taken a few at a time, and at most that many resolutions are in flight.
Every step of their work on the event loop (popping what is due, issuing a query, reading an
answer, comparing nodes, rebuilding a balancer, starting a probe) is paced by the gateway's
:class:`~.pacing.Pacer`, so discovery holds the loop at most ``pacing.TURN_SECONDS`` and one
step at a time (``bench/bench_discovery.py`` measures the loop's lag).
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
import logging
import random
import time
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Final, Protocol

from portico.gateway.balancing.nodes import Node
from portico.gateway.discovery.base import MAX_NODES, DiscoveryContext, DiscoveryFailed, Source
from portico.gateway.discovery.catalogue import make_source
from portico.gateway.discovery.pacing import Pacer

__all__ = [
    "CONCURRENT_RESOLUTIONS",
    "Bounds",
    "DiscoveredUpstream",
    "Discovery",
    "NodesListener",
    "signature",
]

log = logging.getLogger("portico.gateway.discovery")

#: resolutions of one gateway in flight at once (its workers)
CONCURRENT_RESOLUTIONS: Final = 8
#: seconds one resolution may take in all (a source's own timeouts are shorter)
RESOLVE_TIMEOUT: Final = 15.0
#: a TTL is stretched by up to this share, to spread upstreams of the same TTL
JITTER: Final = 0.05
#: nodes and characters of an error a heartbeat reports at most (the management API's bounds)
REPORTED_NODES: Final = MAX_NODES
REPORTED_ERROR: Final = 500
#: failures double the wait up to this many times the minimum (then the maximum bounds it)
MAX_BACKOFF_STEPS: Final = 5
#: a first answer (a deploy waits for it) is taken before the upstreams that came due
_FIRST, _DUE = 0, 1


@dataclass(frozen=True)
class Bounds:
    """How long an answer is used, whatever its TTL says (seconds)."""

    min_ttl: float = 1.0
    max_ttl: float = 300.0

    def hold(self, ttl: float | None) -> float:
        if ttl is None:
            return self.max_ttl
        return min(self.max_ttl, max(self.min_ttl, ttl))

    def retry(self, failures: int) -> float:
        steps = max(0, min(failures - 1, MAX_BACKOFF_STEPS))
        return min(self.max_ttl, self.min_ttl * float(2**steps))


class NodesListener(Protocol):
    """What is told the nodes of an upstream when they change (its runtime), with the pace
    its work on the loop keeps (``await pause()`` before each step)."""

    async def use_nodes(
        self, nodes: tuple[Node, ...], pause: Callable[[], Awaitable[None]]
    ) -> None: ...


def discovery_key(discovery: Mapping[str, Any]) -> tuple[str, str]:
    return str(discovery.get("type", "")), str(discovery.get("serviceName", ""))


def signature(watchers: Mapping[str, DiscoveredUpstream]) -> tuple[tuple[str, int, int, str], ...]:
    """Changes when the nodes of any of these upstreams change, when its failing starts, ends
    or fails otherwise (not at every retry), or when a watcher is replaced: a node's
    heartbeat then reports at once what the management API shows (as for health)."""
    return tuple(
        sorted(
            (upstream_id, id(w), w.changes, w.error or "") for upstream_id, w in watchers.items()
        )
    )


class DiscoveredUpstream:
    """The nodes of one upstream as its source last gave them (the last good answer)."""

    def __init__(
        self,
        upstream_id: str,
        kind: str,
        service_name: str,
        source: Source,
        *,
        bounds: Bounds,
        pacer: Pacer,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.upstream_id = upstream_id
        self.kind = kind
        self.service_name = service_name
        self.source = source
        self.bounds = bounds
        self.pacer = pacer
        self.clock = clock
        #: the last good answer (empty until a first one came)
        self.nodes: tuple[Node, ...] = ()
        self.listener: NodesListener | None = None
        #: epoch seconds of the last good answer, of the last attempt, of the next one
        self.resolved_at: float | None = None
        self.checked_at: float | None = None
        self.next_at: float | None = None
        self.ttl: float | None = None
        #: why the last attempt did not give nodes (None after a good answer)
        self.error: str | None = None
        #: attempts in a row that gave no nodes
        self.failures = 0
        self.resolutions = 0
        self.changes = 0
        #: the wait after the first answer (made before the upstream went live)
        self.first_delay: float | None = None
        #: resolved by its Discovery while true (committed and not stopped)
        self.live = False
        #: queued for a worker or being resolved by one (never twice at once)
        self.busy = False
        #: the loop time it is due at (its entry in the heap; others are stale)
        self.due: float | None = None
        #: done once the first resolution ended (a deploy waits for it)
        self.first: asyncio.Future[None] | None = None

    @property
    def key(self) -> tuple[str, str]:
        return self.kind, self.service_name

    async def attach(self, listener: NodesListener, built_with: tuple[Node, ...]) -> None:
        """From now on ``listener`` is told every change; it was built with ``built_with``
        and is told the current nodes at once if they differ."""
        self.listener = listener
        if built_with != self.nodes:
            await self._tell()

    async def refresh(self) -> float:
        """Ask the source once; the seconds until the next time."""
        try:
            async with asyncio.timeout(RESOLVE_TIMEOUT):
                resolution = await self.source.resolve()
        except DiscoveryFailed as failed:
            return self._failed(str(failed))
        except TimeoutError:
            return self._failed(f"no answer within {RESOLVE_TIMEOUT:g}s")
        except Exception as error:  # a source's defect must not end the watch
            log.exception("discovery of upstream %s failed", self.upstream_id)
            return self._failed(f"{type(error).__name__}")
        await self.pacer.pause()  # comparing up to MAX_NODES nodes
        now = self.clock()
        self.checked_at = now
        self.resolutions += 1
        nodes = resolution.nodes[:MAX_NODES]
        if not nodes:
            return self._failed("the answer holds no node")
        self.error = None
        self.failures = 0
        self.resolved_at = now
        self.ttl = resolution.ttl
        if nodes != self.nodes:
            self.nodes = nodes
            self.changes += 1
            log.info(
                "upstream %s discovered %d nodes",
                self.upstream_id,
                len(nodes),
                extra={"nodes": [node.address for node in nodes[:20]]},
            )
            await self._tell()
        return self.bounds.hold(resolution.ttl)

    def _failed(self, reason: str) -> float:
        self.checked_at = self.clock()
        self.failures += 1
        if self.error != reason:  # once per kind of failure, not at every retry
            log.warning(
                "discovery of upstream %s (%s %s): %s; keeping its %d last good nodes",
                self.upstream_id,
                self.kind,
                self.service_name,
                reason,
                len(self.nodes),
            )
        self.error = reason
        return self.bounds.retry(self.failures)

    async def _tell(self) -> None:
        listener = self.listener
        if listener is None:
            return
        try:
            await listener.use_nodes(self.nodes, self.pacer.pause)
        except Exception:  # the watch goes on; the runtime keeps its previous nodes
            log.exception("upstream %s could not take its discovered nodes", self.upstream_id)

    def report(self) -> dict[str, Any]:
        """What the node's heartbeat says of it (``DiscoveryReport`` of the management API)."""
        return {
            "type": self.kind,
            "serviceName": self.service_name,
            "nodes": [
                {"host": n.host, "port": n.port, "weight": n.weight, "priority": n.priority}
                for n in self.nodes[:REPORTED_NODES]
            ],
            "resolvedAt": self.resolved_at,
            "error": None if self.error is None else self.error[:REPORTED_ERROR],
            "failures": self.failures,
        }

    def describe(self) -> dict[str, Any]:
        """What ``/status`` shows of it: the report, and when it asks next."""
        return {
            **self.report(),
            "checkedAt": self.checked_at,
            "nextAt": self.next_at,
            "ttl": self.ttl,
            "resolutions": self.resolutions,
            "changes": self.changes,
        }


class Discovery:
    """The discovered upstreams of one gateway, by upstream id, and the timer and workers
    that keep them current."""

    def __init__(
        self,
        context: DiscoveryContext,
        bounds: Bounds,
        *,
        concurrency: int = CONCURRENT_RESOLUTIONS,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.context = context
        self.bounds = bounds
        self.clock = clock
        self.pacer = context.pacer
        self.concurrency = concurrency
        self._live: dict[str, DiscoveredUpstream] = {}
        self._replaced: list[DiscoveredUpstream] = []
        #: (loop time due, order, upstream): the next time of each live upstream
        self._heap: list[tuple[float, int, DiscoveredUpstream]] = []
        self._order = itertools.count()
        self._ready: asyncio.PriorityQueue[tuple[int, int, DiscoveredUpstream]] | None = None
        self._timer: asyncio.TimerHandle | None = None
        self._timer_at: float | None = None
        self._tasks: list[asyncio.Task[None]] = []

    def candidate(self, upstream_id: str, discovery: Mapping[str, Any]) -> DiscoveredUpstream:
        """The live one for this upstream when its discovery is unchanged, else a new one,
        not yet live (:meth:`commit` makes it so once its snapshot is in service)."""
        kind, service_name = discovery_key(discovery)
        known = self._live.get(upstream_id)
        if known is not None and known.key == (kind, service_name):
            return known
        source = make_source(kind, service_name, self.context)
        return DiscoveredUpstream(
            upstream_id,
            kind,
            service_name,
            source,
            bounds=self.bounds,
            pacer=self.pacer,
            clock=self.clock,
        )

    async def first_answers(self, upstreams: Iterable[DiscoveredUpstream], seconds: float) -> None:
        """Resolve the upstreams not live yet, before any that is due, for at most
        ``seconds``: a snapshot goes into service with their nodes when the source answers in
        time (an upstream whose answer comes later gets its nodes then; one without nodes
        answers 503 until its watch finds some)."""
        fresh = [u for u in upstreams if self._live.get(u.upstream_id) is not u]
        fresh = [u for u in fresh if u.resolutions == 0 and u.failures == 0 and not u.busy]
        if not fresh:
            return
        ready = self._start()
        loop = asyncio.get_running_loop()
        for upstream in fresh:
            upstream.first = loop.create_future()
            upstream.busy = True
            ready.put_nowait((_FIRST, next(self._order), upstream))
        await asyncio.wait([u.first for u in fresh if u.first is not None], timeout=seconds)

    def commit(self, upstreams: Iterable[DiscoveredUpstream]) -> None:
        """These are now what serves: make them live and watch them; those they replace
        stop at the next :meth:`retire`."""
        for upstream in upstreams:
            known = self._live.get(upstream.upstream_id)
            if known is upstream:
                continue
            if known is not None:
                self._replaced.append(known)
            self._live[upstream.upstream_id] = upstream
            upstream.live = True
            if not upstream.busy:  # (a first answer still coming plans the next itself)
                first = upstream.first_delay
                self._plan(upstream, first if first is not None else self.bounds.retry(1))

    async def retire(self, keep: set[str]) -> None:
        """Stop the replaced ones and those of upstreams no environment uses any more (a
        resolution in flight ends unheeded; their entries in the heap are skipped)."""
        while self._replaced:
            self._replaced.pop().live = False
        for upstream_id in [u for u in self._live if u not in keep]:
            self._live.pop(upstream_id).live = False

    def live(self) -> dict[str, DiscoveredUpstream]:
        return dict(self._live)

    async def aclose(self) -> None:
        await self.retire(set())
        if self._timer is not None:
            self._timer.cancel()
        tasks, self._tasks = self._tasks, []
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        await self.context.shared.aclose()

    # --- the timer and the workers ----------------------------------------------------------

    def _start(self) -> asyncio.PriorityQueue[tuple[int, int, DiscoveredUpstream]]:
        """The workers' queue; the workers and the dispatcher start with it (first use)."""
        if self._ready is None:
            self._ready = asyncio.PriorityQueue()
            loop = asyncio.get_running_loop()
            self._tasks = [
                loop.create_task(self._work(), name=f"discovery:worker:{n}")
                for n in range(self.concurrency)
            ]
        return self._ready

    def _plan(self, upstream: DiscoveredUpstream, delay: float) -> None:
        """``upstream`` is due again in ``delay`` seconds (stretched by the jitter)."""
        self._start()
        delay *= 1.0 + random.random() * JITTER  # noqa: S311 - spreading, not secrecy
        loop = asyncio.get_running_loop()
        upstream.next_at = self.clock() + delay
        upstream.due = due = loop.time() + delay
        heapq.heappush(self._heap, (due, next(self._order), upstream))
        if self._timer_at is None or due < self._timer_at:
            self._arm(loop, due)

    def _arm(self, loop: asyncio.AbstractEventLoop, due: float) -> None:
        if self._timer is not None:
            self._timer.cancel()
        self._timer_at = due
        self._timer = loop.call_at(due, self._dispatch_soon)

    def _dispatch_soon(self) -> None:
        self._timer = self._timer_at = None
        self._tasks.append(asyncio.get_running_loop().create_task(self._dispatch()))

    async def _dispatch(self) -> None:
        """Hand what is due to the workers, one paced step each; re-arm the timer."""
        loop = asyncio.get_running_loop()
        ready = self._start()
        try:
            while self._heap and self._heap[0][0] <= loop.time():
                await self.pacer.pause()
                due, _, upstream = heapq.heappop(self._heap)
                if upstream.live and upstream.due == due and not upstream.busy:
                    upstream.busy = True
                    ready.put_nowait((_DUE, next(self._order), upstream))
            if self._heap and (self._timer_at is None or self._heap[0][0] < self._timer_at):
                self._arm(loop, self._heap[0][0])
        finally:
            current = asyncio.current_task()
            self._tasks = [task for task in self._tasks if task is not current]

    async def _work(self) -> None:
        ready = self._start()
        while True:
            _, _, upstream = await ready.get()
            try:
                delay = await upstream.refresh()
            finally:
                upstream.busy = False
            if upstream.first is not None:
                upstream.first_delay = delay
                if not upstream.first.done():
                    upstream.first.set_result(None)
                upstream.first = None
            if upstream.live:
                self._plan(upstream, delay)
