"""Keeping discovered upstreams' nodes current, off the request path.

One :class:`DiscoveredUpstream` per upstream with ``discovery``: a task that asks the source,
then sleeps for the answer's TTL held within the node's bounds (``PORTICO_GATEWAY_DISCOVERY_
MIN_TTL_SECONDS`` … ``_MAX_TTL_SECONDS``), stretched by up to 5 % so that upstreams of the
same TTL do not all ask at the same moment. An answer that differs from the last one goes
to the listener (the upstream's runtime, which rebuilds its balancer and tells its health
checker: nodes that stayed keep their state). When the source fails or answers with no node,
the last good nodes keep serving, the failure is recorded (``/status``, ``/metrics``, the
heartbeat) and the source is asked again after 1, 2, 4 ... times the minimum, at most the
maximum: a DNS outage never empties a working upstream.

Every resolution of the gateway takes a slot of one semaphore (:data:`CONCURRENT_RESOLUTIONS`),
so that a thousand upstreams coming due together are answered a few at a time, each answer a
short callback of the event loop (``bench/bench_discovery.py`` measures the loop's lag).

:class:`Discovery` is the gateway's set of them, kept across snapshots while an upstream's
``discovery`` is unchanged (as health checkers are), so a deploy elsewhere neither forgets the
nodes nor asks again.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Final, Protocol

from portico.gateway.balancing.nodes import Node
from portico.gateway.discovery.base import DiscoveryContext, DiscoveryFailed, Source
from portico.gateway.discovery.catalogue import make_source

__all__ = [
    "CONCURRENT_RESOLUTIONS",
    "Bounds",
    "DiscoveredUpstream",
    "Discovery",
    "NodesListener",
]

log = logging.getLogger("portico.gateway.discovery")

#: resolutions of one gateway in flight at once
CONCURRENT_RESOLUTIONS: Final = 8
#: seconds one resolution may take in all (a source's own timeouts are shorter)
RESOLVE_TIMEOUT: Final = 15.0
#: a TTL is stretched by up to this share, to spread upstreams of the same TTL
JITTER: Final = 0.05
#: nodes and characters of an error a heartbeat reports at most (the management API's bounds)
REPORTED_NODES: Final = 1000
REPORTED_ERROR: Final = 500
#: failures double the wait up to this many times the minimum (then the maximum bounds it)
MAX_BACKOFF_STEPS: Final = 5


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
    """What is told the nodes of an upstream when they change (its runtime)."""

    def use_nodes(self, nodes: tuple[Node, ...]) -> None: ...


def discovery_key(discovery: Mapping[str, Any]) -> tuple[str, str]:
    return str(discovery.get("type", "")), str(discovery.get("serviceName", ""))


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
        limiter: asyncio.Semaphore,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.upstream_id = upstream_id
        self.kind = kind
        self.service_name = service_name
        self.source = source
        self.bounds = bounds
        self.limiter = limiter
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
        self._task: asyncio.Task[None] | None = None

    @property
    def key(self) -> tuple[str, str]:
        return self.kind, self.service_name

    def attach(self, listener: NodesListener, built_with: tuple[Node, ...]) -> None:
        """From now on ``listener`` is told every change; it was built with ``built_with``
        and is told the current nodes at once if they differ."""
        self.listener = listener
        if built_with != self.nodes:
            listener.use_nodes(self.nodes)

    async def refresh(self) -> float:
        """Ask the source once (in a slot of the limiter); the seconds until the next time."""
        async with self.limiter:
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
        now = self.clock()
        self.checked_at = now
        self.resolutions += 1
        if not resolution.nodes:
            return self._failed("the answer holds no node")
        self.error = None
        self.failures = 0
        self.resolved_at = now
        self.ttl = resolution.ttl
        if resolution.nodes != self.nodes:
            self.nodes = resolution.nodes
            self.changes += 1
            log.info(
                "upstream %s discovered %d nodes",
                self.upstream_id,
                len(self.nodes),
                extra={"nodes": [node.address for node in self.nodes]},
            )
            self._tell()
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

    def _tell(self) -> None:
        listener = self.listener
        if listener is None:
            return
        try:
            listener.use_nodes(self.nodes)
        except Exception:  # the watch goes on; the runtime keeps its previous nodes
            log.exception("upstream %s could not take its discovered nodes", self.upstream_id)

    def start(self, first_delay: float) -> None:
        """Re-resolve in the background, the first time after ``first_delay`` seconds."""
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(
                self._run(first_delay), name=f"discovery:{self.upstream_id}"
            )

    async def _run(self, delay: float) -> None:
        while True:
            delay *= 1.0 + random.random() * JITTER  # noqa: S311 - spreading, not secrecy
            self.next_at = self.clock() + delay
            await asyncio.sleep(delay)
            delay = await self.refresh()

    async def stop(self) -> None:
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task

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
    """The discovered upstreams of one gateway, by upstream id."""

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
        self._limiter = asyncio.Semaphore(concurrency)
        self._live: dict[str, DiscoveredUpstream] = {}
        self._replaced: list[DiscoveredUpstream] = []

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
            limiter=self._limiter,
            clock=self.clock,
        )

    async def first_answers(self, upstreams: Iterable[DiscoveredUpstream], seconds: float) -> None:
        """Resolve the upstreams not live yet, together, for at most ``seconds``: a
        snapshot goes into service with their nodes when the source answers in time (an
        upstream still without nodes answers 503 until its watch finds some)."""
        fresh = [u for u in upstreams if self._live.get(u.upstream_id) is not u]
        fresh = [u for u in fresh if u.resolutions == 0 and u.failures == 0]
        if not fresh:
            return
        tasks = [asyncio.ensure_future(self._first(u)) for u in fresh]
        _, pending = await asyncio.wait(tasks, timeout=seconds)
        for task in pending:  # the watch asks again soon
            task.cancel()
        if pending:
            await asyncio.gather(*pending, return_exceptions=True)

    async def _first(self, upstream: DiscoveredUpstream) -> None:
        upstream.first_delay = await upstream.refresh()

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
            first = upstream.first_delay
            upstream.start(first if first is not None else self.bounds.retry(1))

    async def retire(self, keep: set[str]) -> None:
        """Stop the replaced ones and those of upstreams no environment uses any more."""
        while self._replaced:
            await self._replaced.pop().stop()
        for upstream_id in [u for u in self._live if u not in keep]:
            await self._live.pop(upstream_id).stop()

    def live(self) -> dict[str, DiscoveredUpstream]:
        return dict(self._live)

    async def aclose(self) -> None:
        await self.retire(set())
        await self.context.shared.aclose()
