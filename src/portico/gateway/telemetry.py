"""Telemetry: every request that reached a route becomes a record, folded at once into
per-minute rollups held in memory and shipped to the control plane in batches.

Folding at the node (as Kong's vitals do) keeps the cost per request to one dict lookup and a
few additions, and makes what travels and what the control plane writes proportional to the
number of distinct (minute, API, route, consumer, method, status) keys, not to traffic.

Nothing here blocks a request. Memory is bounded: at most ``max_keys`` rollups wait; records
that would need a new key beyond that are dropped and counted. A failed shipment is merged
back and retried on the next tick (under the same bound). The count of dropped records travels
with the next batch the control plane accepts, which stores it: loss is counted, never silent.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    from portico.gateway.config import EnvironmentRuntime
    from portico.gateway.context import RequestContext

logger = logging.getLogger("portico.gateway.telemetry")

#: upper bounds (milliseconds) of the latency histogram's buckets; the last one is +Inf
LATENCY_BUCKETS_MS: Final[tuple[float, ...]] = (
    5,
    10,
    25,
    50,
    100,
    250,
    500,
    1000,
    2500,
    5000,
    10000,
)
BUCKET_COUNT: Final = len(LATENCY_BUCKETS_MS) + 1

#: (environment id, minute as epoch seconds, api id, route id, consumer, method, status)
RollupKey = tuple[str, int, str, str, str, str, int]


def bucket_of(latency_ms: float) -> int:
    for index, bound in enumerate(LATENCY_BUCKETS_MS):
        if latency_ms <= bound:
            return index
    return len(LATENCY_BUCKETS_MS)


@dataclass(slots=True)
class Rollup:
    requests: int = 0
    latency_ms_sum: float = 0.0
    latency_ms_max: float = 0.0
    upstream_requests: int = 0
    upstream_ms_sum: float = 0.0
    request_bytes: int = 0
    response_bytes: int = 0
    buckets: list[int] = field(default_factory=lambda: [0] * BUCKET_COUNT)

    def merge(self, other: Rollup) -> None:
        self.requests += other.requests
        self.latency_ms_sum += other.latency_ms_sum
        self.latency_ms_max = max(self.latency_ms_max, other.latency_ms_max)
        self.upstream_requests += other.upstream_requests
        self.upstream_ms_sum += other.upstream_ms_sum
        self.request_bytes += other.request_bytes
        self.response_bytes += other.response_bytes
        for index, count in enumerate(other.buckets):
            self.buckets[index] += count


@dataclass
class Batch:
    rollups: dict[RollupKey, Rollup]
    #: records lost per environment id
    dropped: dict[str, int]

    def environments(self) -> set[str]:
        return {key[0] for key in self.rollups} | {e for e, n in self.dropped.items() if n}

    def documents(self, environment_id: str) -> list[dict[str, Any]]:
        """The environment's rollups in the wire form of ``/api/dataplane/v1/telemetry``."""
        out = []
        for key, rollup in self.rollups.items():
            env_id, minute, api_id, route_id, consumer, method, status = key
            if env_id != environment_id:
                continue
            out.append(
                {
                    "minute": datetime.fromtimestamp(minute, UTC).isoformat(),
                    "apiId": api_id,
                    "routeId": route_id,
                    "consumer": consumer,
                    "method": method,
                    "status": status,
                    "requests": rollup.requests,
                    "latencyMsSum": round(rollup.latency_ms_sum, 3),
                    "latencyMsMax": round(rollup.latency_ms_max, 3),
                    "upstreamRequests": rollup.upstream_requests,
                    "upstreamMsSum": round(rollup.upstream_ms_sum, 3),
                    "requestBytes": rollup.request_bytes,
                    "responseBytes": rollup.response_bytes,
                    "latencyBuckets": list(rollup.buckets),
                }
            )
        return out


#: ships one batch; raises (anything) when the control plane did not take it. A sink that
#: delivered part of the batch removes that part from it before raising.
Sink = Callable[[Batch], Awaitable[None]]


class TelemetryRecorder:
    """Folds requests into rollups (``observe`` is a ``Gateway`` observer) and ships them."""

    def __init__(
        self,
        sink: Sink,
        *,
        interval: float = 5.0,
        max_keys: int = 50_000,
        now: Callable[[], float] = time.time,
    ) -> None:
        self.sink = sink
        self.interval = interval
        self.max_keys = max_keys
        self.now = now
        self.pending: dict[RollupKey, Rollup] = {}
        self.dropped: dict[str, int] = {}  # records lost, not yet reported, per environment
        self.dropped_total = 0  # since start, for /metrics
        self.shipped_batches = 0
        self._task: asyncio.Task[None] | None = None

    # ------------------------------------------------------------------ hot path

    def observe(self, env: EnvironmentRuntime, ctx: RequestContext) -> None:
        ids = ctx.rollup_key
        consumer = ctx.consumer.username if ctx.consumer is not None else ""
        minute = int(self.now()) // 60 * 60
        key = (ids[0], minute, ids[1], ids[2], consumer, ctx.request.method, ctx.status)
        rollup = self.pending.get(key)
        if rollup is None:
            if len(self.pending) >= self.max_keys:
                self._lose(key[0], 1)
                return
            rollup = self.pending[key] = Rollup()
        latency_ms = ctx.latency * 1000.0
        rollup.requests += 1
        rollup.latency_ms_sum += latency_ms
        if latency_ms > rollup.latency_ms_max:
            rollup.latency_ms_max = latency_ms
        if ctx.upstream_seconds is not None:
            rollup.upstream_requests += 1
            rollup.upstream_ms_sum += ctx.upstream_seconds * 1000.0
        rollup.request_bytes += ctx.request_bytes
        rollup.response_bytes += ctx.response_bytes
        rollup.buckets[bucket_of(latency_ms)] += 1

    # ------------------------------------------------------------------ shipping

    def _lose(self, env_id: str, records: int) -> None:
        self.dropped[env_id] = self.dropped.get(env_id, 0) + records
        self.dropped_total += records

    def take(self) -> Batch:
        batch = Batch(self.pending, self.dropped)
        self.pending, self.dropped = {}, {}
        return batch

    def give_back(self, batch: Batch) -> None:
        """A shipment failed: its rollups wait for the next one (within the bound)."""
        for key, rollup in batch.rollups.items():
            known = self.pending.get(key)
            if known is not None:
                known.merge(rollup)
            elif len(self.pending) < self.max_keys:
                self.pending[key] = rollup
            else:
                self._lose(key[0], rollup.requests)
        for env_id, records in batch.dropped.items():
            self.dropped[env_id] = self.dropped.get(env_id, 0) + records

    async def ship(self) -> bool:
        """Send what is pending; False when the sink failed (the batch is kept)."""
        if not self.pending and not self.dropped:
            return True
        batch = self.take()
        try:
            await self.sink(batch)
        except asyncio.CancelledError:
            self.give_back(batch)
            raise
        except Exception as error:
            self.give_back(batch)
            logger.warning("telemetry not delivered, kept for the next attempt: %s", error)
            return False
        self.shipped_batches += 1
        return True

    async def run(self) -> None:
        while True:
            await asyncio.sleep(self.interval)
            await self.ship()

    def start(self) -> None:
        if self._task is None:
            self._task = asyncio.create_task(self.run())

    async def stop(self) -> None:
        """Stop the timer and make a last delivery attempt."""
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None
        with contextlib.suppress(Exception):
            await asyncio.wait_for(self.ship(), timeout=5)
