"""Taking a node's telemetry batch into the store, in the caller's transaction."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from portico.core.clock import Clock
from portico.management.environment.models import Environment
from portico.management.telemetry.models import BUCKET_COLUMNS
from portico.management.telemetry.repository import TelemetryRepository
from portico.management.telemetry.schemas import TelemetryBatch


def _minute(moment: datetime) -> datetime:
    return moment.replace(second=0, microsecond=0)


async def ingest(
    *, session: AsyncSession, env: Environment, batch: TelemetryBatch, clock: Clock
) -> None:
    """Add the batch's rollups to the environment's (several nodes, one row per key) and
    count the records the node reports lost against the minute they were reported."""
    rows: list[dict[str, Any]] = []
    for rollup in batch.rollups:
        row: dict[str, Any] = {
            "environment_id": env.id,
            "org_id": env.org_id,
            "minute": rollup.minute,
            "api_id": rollup.api_id,
            "route_id": rollup.route_id,
            "consumer": rollup.consumer,
            "method": rollup.method,
            "status": rollup.status,
            "requests": rollup.requests,
            "latency_ms_sum": rollup.latency_ms_sum,
            "latency_ms_max": rollup.latency_ms_max,
            "upstream_requests": rollup.upstream_requests,
            "upstream_ms_sum": rollup.upstream_ms_sum,
            "request_bytes": rollup.request_bytes,
            "response_bytes": rollup.response_bytes,
        }
        row.update(zip(BUCKET_COLUMNS, rollup.latency_buckets, strict=True))
        rows.append(row)
    repository = TelemetryRepository(session)
    if rows:
        await repository.add_rollups(rows)
    if batch.dropped:
        await repository.add_loss(
            {
                "environment_id": env.id,
                "org_id": env.org_id,
                "minute": _minute(clock.now()),
                "node_id": batch.node_id,
                "dropped": batch.dropped,
            }
        )
