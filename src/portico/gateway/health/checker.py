"""Health of an upstream's nodes: active probes, passive observation of live traffic, or both.

One :class:`HealthChecker` per upstream. It is meant to outlive config snapshots while the
upstream's checks and node addresses are unchanged — :meth:`HealthChecker.matches` (and
:attr:`HealthChecker.fingerprint`) say whether a new specification can keep the checker —
so an unrelated deploy does not reset health. The balancer reads it through its
:class:`~portico.gateway.balancing.balancer.HealthView`. A probe's interval follows the node's
state, including a change made by a passive report between two probes.

Every node starts healthy. Counting follows lua-resty-healthcheck:

- **Active** (``checks.active``): each node is probed every ``healthy.interval`` seconds while
  healthy and every ``unhealthy.interval`` seconds while unhealthy, at most ``concurrency``
  probes of this upstream at once. ``http``/``https``: ``GET http_path`` with ``Host: host``
  (or the node's host) on ``port`` (or the node's port) — see
  :mod:`portico.gateway.health.probe` (TLS without certificate verification); ``tcp``: a
  connect suffices. A status in ``healthy.http_statuses`` is a success; a status in
  ``unhealthy.http_statuses`` an http failure; any other status counts for nothing (as in
  lua-resty-healthcheck). A refused or reset connection, a TLS failure or an unparsable
  response is a tcp failure; no status line within ``timeout`` seconds a timeout.
  ``healthy.successes`` consecutive successes mark an unhealthy node healthy;
  ``unhealthy.http_failures`` consecutive http failures, ``tcp_failures`` consecutive tcp
  failures or ``timeouts`` consecutive timeouts mark a healthy node unhealthy.
- **Passive** (``checks.passive``): the proxy calls :meth:`HealthChecker.report` after every
  attempt; statuses are judged by ``passive.healthy/unhealthy.http_statuses`` and counted
  against ``passive.healthy.successes`` and ``passive.unhealthy.{http_failures,
  tcp_failures, timeouts}``; a threshold of 0 disables that counter. With ``passive.type``
  ``tcp`` any response is a success (only connect failures and timeouts count against).
- A success resets the failure counters and a failure the success counter; every change of
  state resets all counters. Active and passive keep separate counters, each judged by its
  own thresholds.
- **Combined**: either side can mark a node unhealthy; a node marked unhealthy (passively or
  actively) comes back after ``active.healthy.successes`` successful probes — or passive
  successes, which only occur while the balancer is in panic mode.
- **Passive only — re-admission by time.** Without active probing (none configured, or the
  checker not started or stopped), an unhealthy node would get no traffic and so no report
  that could bring it back. After :data:`PASSIVE_COOL_OFF_SECONDS` (10 s) it is re-admitted
  as healthy with fresh counters; if it still fails, the passive thresholds take it out
  again. Kong leaves such a node down until an operator re-enables it; we re-admit
  automatically so that a passive-only upstream cannot stay dark forever.

:attr:`HealthChecker.version` changes whenever any node's state changes, so the balancer
re-reads health only then.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable, Iterable, Mapping
from typing import Any, Final

from portico.gateway.balancing.nodes import Node, nodes_of
from portico.gateway.health.config import ActiveConfig, PassiveConfig, fingerprint
from portico.gateway.health.probe import ProbeOutcome, ProbeResult, probe
from portico.gateway.health.state import (
    Event,
    Source,
    Target,
    classify_probe,
    classify_report,
    limit_of,
)

__all__ = ["PASSIVE_COOL_OFF_SECONDS", "HealthChecker"]

PASSIVE_COOL_OFF_SECONDS: Final = 10.0
#: probes started or stopped in one turn of the event loop when discovery changes the nodes
PROBES_PER_TURN: Final = 32
MAX_TRACKED_NODES: Final = 4096  # nodes first seen in report() (discovery) beyond this are ignored

log = logging.getLogger("portico.gateway.health")


class HealthChecker:
    def __init__(
        self,
        upstream_id: str,
        specification: Mapping[str, Any],
        *,
        nodes: Iterable[Node] | None = None,
        cool_off: float = PASSIVE_COOL_OFF_SECONDS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        checks = specification.get("checks") or {}
        self.upstream_id = upstream_id
        self.fingerprint = fingerprint(specification)
        active, passive = checks.get("active"), checks.get("passive")
        self.active = None if active is None else ActiveConfig.read(active)
        self.passive = None if passive is None else PassiveConfig.read(passive)
        self.cool_off = cool_off
        self._clock = clock
        self._version = 0
        self._next_readmit: float | None = None
        self._targets: dict[tuple[str, int], Target] = {}
        self._tasks: dict[tuple[str, int], asyncio.Task[None]] = {}
        self._retired: set[asyncio.Task[None]] = set()
        self._semaphore: asyncio.Semaphore | None = None
        self._running = False
        for node in nodes_of(specification) if nodes is None else nodes:
            self._targets.setdefault((node.host, node.port), Target(node.host, node.port))

    def matches(self, specification: Mapping[str, Any]) -> bool:
        """Whether this checker can serve ``specification`` (same checks and addresses)."""
        return fingerprint(specification) == self.fingerprint

    @property
    def version(self) -> int:
        """Changes whenever a node changes state."""
        self._readmit_due()
        return self._version

    @property
    def probing(self) -> bool:
        return self._running

    # --- the view ------------------------------------------------------------------------

    def healthy(self, node: Node) -> bool:
        target = self._targets.get((node.host, node.port))
        if target is None or target.healthy:
            return True
        if target.readmit_at is not None:
            self._readmit_due()
            return target.healthy
        return False

    # --- passive ---------------------------------------------------------------------------

    def report(
        self,
        node: Node,
        *,
        status: int | None = None,
        tcp_failure: bool = False,
        timeout: bool = False,
    ) -> None:
        """What became of a request proxied to ``node`` (no-op without passive checks)."""
        passive = self.passive
        if passive is None:
            return
        key = (node.host, node.port)
        target = self._targets.get(key)
        if target is None:
            if len(self._targets) >= MAX_TRACKED_NODES:
                return
            target = self._targets[key] = Target(node.host, node.port)
        target.reports += 1
        event = classify_report(passive, status, tcp_failure, timeout)
        if event is not None:
            self._count(target, "passive", event)

    # --- active ----------------------------------------------------------------------------

    async def start(self) -> None:
        """Start probing every node, if ``checks.active`` is configured (idempotent)."""
        if self.active is None or self._running:
            return
        self._semaphore = asyncio.Semaphore(self.active.concurrency)
        self._running = True
        for target in self._targets.values():
            self._spawn(target)

    async def stop(self) -> None:
        """Stop probing (idempotent). Health stays as it was, but nothing would bring an
        unhealthy node back now: it gets the passive-only cool-off."""
        self._running = False
        tasks = [*self._tasks.values(), *self._retired]
        self._tasks.clear()
        self._retired.clear()
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        now = self._clock()
        for target in self._targets.values():
            target.wake = None
            if not target.healthy and target.readmit_at is None:
                target.readmit_at = now + self.cool_off
                if self._next_readmit is None or target.readmit_at < self._next_readmit:
                    self._next_readmit = target.readmit_at

    async def follow_nodes(
        self, nodes: Iterable[Node], pause: Callable[[], Awaitable[None]]
    ) -> None:
        """Replace the probed addresses (discovery); nodes kept keep their state. In steps,
        for discovery on the event loop: ``await pause()`` before each, and at most
        :data:`PROBES_PER_TURN` probes started or stopped in one turn of the loop (each
        costs a step of its task in the next turn)."""
        await pause()
        gone, added = self._retarget(nodes)
        changes: list[tuple[str, int] | Target] = [*gone, *added]
        for count, change in enumerate(changes):
            if count and count % PROBES_PER_TURN == 0:
                await asyncio.sleep(0)
            await pause()
            if isinstance(change, Target):
                self._start_probe(change)
            else:
                self._stop_probe(change)

    def _retarget(self, nodes: Iterable[Node]) -> tuple[list[tuple[str, int]], list[Target]]:
        """The targets become ``nodes``' (those kept keep their state); the addresses gone and
        the targets added, whose probes are still to stop and start."""
        wanted = {(node.host, node.port): node for node in nodes}
        gone = [key for key in self._targets if key not in wanted]
        for key in gone:
            del self._targets[key]
        added: list[Target] = []
        for key, node in wanted.items():
            if key not in self._targets:
                target = self._targets[key] = Target(node.host, node.port)
                added.append(target)
        self._version += 1
        return gone, added

    def _stop_probe(self, key: tuple[str, int]) -> None:
        if key in self._targets:  # (back since: starting its new target replaces the probe)
            return
        task = self._tasks.pop(key, None)
        if task is not None:
            task.cancel()
            self._retired.add(task)
            task.add_done_callback(self._retired.discard)

    def _start_probe(self, target: Target) -> None:
        key = (target.host, target.port)
        if not self._running or self._targets.get(key) is not target:
            return  # (not probing, or replaced since)
        stale = self._tasks.pop(key, None)
        if stale is not None:
            stale.cancel()
            self._retired.add(stale)
            stale.add_done_callback(self._retired.discard)
        self._spawn(target)

    def _spawn(self, target: Target) -> None:
        key = (target.host, target.port)
        name = f"health:{self.upstream_id}:{target.host}:{target.port}"
        self._tasks[key] = asyncio.get_running_loop().create_task(
            self._probe_loop(target), name=name
        )

    async def _probe_loop(self, target: Target) -> None:
        active = self.active
        semaphore = self._semaphore
        assert active is not None and semaphore is not None
        wake = target.wake = asyncio.Event()
        loop = asyncio.get_running_loop()
        while True:
            began = loop.time()
            async with semaphore:
                try:
                    result = await probe(
                        active.type,
                        target.host,
                        active.port or target.port,
                        seconds=active.timeout,
                        path=active.http_path,
                        host_header=active.host or target.host,
                    )
                except Exception as error:  # a probe must never end the loop
                    log.exception("health probe of %s:%s failed", target.host, target.port)
                    result = ProbeResult(ProbeOutcome.TCP_FAILURE, detail=type(error).__name__)
            self._record_probe(target, result)
            # the interval follows the node's state, also when it changes meanwhile (passive)
            while True:
                healthy = target.healthy
                interval = active.healthy_interval if healthy else active.unhealthy_interval
                remaining = began + interval - loop.time()
                if remaining <= 0:
                    break
                wake.clear()
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(remaining):
                        await wake.wait()

    def _record_probe(self, target: Target, result: ProbeResult) -> None:
        assert self.active is not None
        target.probes += 1
        if result.outcome is ProbeOutcome.STATUS:
            target.last_probe = str(result.status)
        else:
            detail = f" ({result.detail})" if result.detail else ""
            target.last_probe = f"{result.outcome.value}{detail}"
        event = classify_probe(result, self.active.thresholds)
        if event is None:
            return
        if event != "success":
            target.probe_failures += 1
        self._count(target, "active", event)

    # --- state -----------------------------------------------------------------------------

    def _count(self, target: Target, source: Source, event: Event) -> None:
        config = self.active if source == "active" else self.passive
        assert config is not None
        counters = target.active if source == "active" else target.passive
        count = counters.add(event)
        limit = limit_of(config.thresholds, event)
        if limit == 0 or count < limit or target.healthy == (event == "success"):
            return
        if event == "success":
            self._set(target, True, f"{source}: {count} consecutive successes")
        else:
            self._set(target, False, f"{source}: {count} consecutive {event}s")

    def _set(self, target: Target, healthy: bool, reason: str) -> None:
        now = self._clock()
        target.healthy = healthy
        target.active.reset()
        target.passive.reset()
        target.reason = reason
        target.changed_at = now
        target.readmit_at = None
        if target.wake is not None:
            target.wake.set()  # its probe loop re-reads the interval
        if not healthy and (target.host, target.port) not in self._tasks:
            target.readmit_at = now + self.cool_off
            if self._next_readmit is None or target.readmit_at < self._next_readmit:
                self._next_readmit = target.readmit_at
        self._version += 1
        log.log(
            logging.INFO if healthy else logging.WARNING,
            "upstream %s node %s:%s is %s (%s)",
            self.upstream_id,
            target.host,
            target.port,
            "healthy" if healthy else "unhealthy",
            reason,
        )

    def _readmit_due(self) -> None:
        """Re-admit the nodes whose passive-only cool-off has elapsed."""
        if self._next_readmit is None:
            return
        now = self._clock()
        if now < self._next_readmit:
            return
        upcoming: float | None = None
        for target in self._targets.values():
            if target.readmit_at is None:
                continue
            if target.readmit_at <= now:
                self._set(target, True, f"re-admitted after {self.cool_off:g}s cool-off")
            elif upcoming is None or target.readmit_at < upcoming:
                upcoming = target.readmit_at
        self._next_readmit = upcoming

    def snapshot(self) -> dict[str, Any]:
        """Per node: healthy, why, since when, counters — for /status and metrics."""
        self._readmit_due()
        now = self._clock()
        return {
            "upstream_id": self.upstream_id,
            "active": self.active is not None,
            "passive": self.passive is not None,
            "probing": self._running,
            "version": self._version,
            "nodes": [target.describe(now) for target in self._targets.values()],
        }
