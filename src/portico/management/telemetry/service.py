"""Taking a node's telemetry batch into the store, in the caller's transaction: each rollup
is merged into its minute and into its hour (see ``models``)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from portico.core.clock import Clock
from portico.gateway.telemetry.rollups import sketch_index
from portico.management.environment.models import Environment
from portico.management.telemetry import sketch as sketches
from portico.management.telemetry.models import ADDED, EXTREMES, KEY, NAMES, SKETCHES
from portico.management.telemetry.repository import TelemetryRepository, key_of
from portico.management.telemetry.schemas import RollupIn, TelemetryBatch

Row = dict[str, Any]


def _minute(moment: datetime) -> datetime:
    return moment.replace(second=0, microsecond=0)


def _hour(moment: datetime) -> datetime:
    return moment.replace(minute=0, second=0, microsecond=0)


def _row(env: Environment, rollup: RollupIn) -> Row:
    """A rollup as a row to merge: sketches as dicts, extremes defaulted for older nodes."""
    requests = rollup.requests
    average_request = rollup.request_bytes // requests
    average_response = rollup.response_bytes // requests
    row: Row = {
        "environment_id": env.id,
        "org_id": env.org_id,
        "minute": rollup.minute,
        "env_name": env.name,
        "requests": requests,
        "latency_ms_sum": rollup.latency_ms_sum,
        "latency_ms_max": rollup.latency_ms_max,
        "latency_ms_min": _or(rollup.latency_ms_min, rollup.latency_ms_sum / requests),
        "upstream_requests": rollup.upstream_requests,
        "upstream_ms_sum": rollup.upstream_ms_sum,
        "request_bytes": rollup.request_bytes,
        "response_bytes": rollup.response_bytes,
    }
    upstream_average = rollup.upstream_ms_sum / max(rollup.upstream_requests, 1)
    row["upstream_ms_min"] = _or(rollup.upstream_ms_min, upstream_average)
    row["upstream_ms_max"] = _or(rollup.upstream_ms_max, upstream_average)
    row["request_bytes_min"] = _or(rollup.request_bytes_min, average_request)
    row["request_bytes_max"] = _or(rollup.request_bytes_max, average_request)
    row["response_bytes_min"] = _or(rollup.response_bytes_min, average_response)
    row["response_bytes_max"] = _or(rollup.response_bytes_max, average_response)
    row["transfer_bytes_min"] = _or(rollup.transfer_bytes_min, average_request + average_response)
    row["transfer_bytes_max"] = _or(rollup.transfer_bytes_max, average_request + average_response)
    for name in KEY:
        row[name] = getattr(rollup, name)
    for name in NAMES[1:]:
        row[name] = getattr(rollup, name)
    given = rollup.sketches
    row["latency_sketch"] = given.get("latency_sketch") or sketches.from_legacy_buckets(
        rollup.latency_buckets or []
    )
    # an older node's rollup: its sizes and upstream latency at their averages
    row["upstream_sketch"] = _given_or(
        given, "upstream_sketch", upstream_average, rollup.upstream_requests
    )
    row["request_sketch"] = _given_or(given, "request_sketch", average_request, requests)
    row["response_sketch"] = _given_or(given, "response_sketch", average_response, requests)
    row["transfer_sketch"] = _given_or(
        given, "transfer_sketch", average_request + average_response, requests
    )
    return row


def _or(value: Any, fallback: Any) -> Any:
    return fallback if value is None else value


def _given_or(
    given: dict[str, sketches.Sketch], name: str, average: float, count: int
) -> sketches.Sketch:
    if name in given:
        return dict(given[name])
    if count <= 0:
        return {}
    return {sketch_index(average): count}


def merge_rows(into: Row, other: Row) -> None:
    """Add ``other`` to ``into`` (same key); ``other``'s names are the newer ones."""
    for low, high, counter in EXTREMES:
        if not other[counter]:
            continue
        if not into[counter]:
            into[low], into[high] = other[low], other[high]
        else:
            into[low] = min(into[low], other[low])
            into[high] = max(into[high], other[high])
    for name in ADDED:
        into[name] += other[name]
    for name in SKETCHES:
        sketches.merge(into[name], other[name])
    for name in NAMES:
        if other[name]:
            into[name] = other[name]


async def ingest(
    *, session: AsyncSession, env: Environment, batch: TelemetryBatch, clock: Clock
) -> None:
    """Merge the batch's rollups into the environment's minutes and hours (several nodes,
    one row per key) and count the records the node reports lost against the minute they
    were reported."""
    repository = TelemetryRepository(session)
    if batch.rollups:
        minutes: dict[tuple[Any, ...], Row] = {}
        hours: dict[tuple[Any, ...], Row] = {}
        for rollup in batch.rollups:
            row = _row(env, rollup)
            _fold(minutes, key_of(row, "minute"), row)
            hourly = {**row, "hour": _hour(rollup.minute)}
            del hourly["minute"]
            hourly.update({name: dict(row[name]) for name in SKETCHES})
            _fold(hours, key_of(hourly, "hour"), hourly)
        await repository.lock_environment(env.id)
        for is_hourly, rows in ((False, minutes), (True, hours)):
            stored = await repository.existing(is_hourly, list(rows))
            for key, row in rows.items():
                known = stored.get(key)
                if known is not None:
                    for name in SKETCHES:
                        known[name] = sketches.decode(known[name])
                    merge_rows(known, row)
                    rows[key] = known
            for row in rows.values():
                for name in SKETCHES:
                    row[name] = sketches.encode(row[name], packed=is_hourly)
            await repository.upsert(is_hourly, list(rows.values()))
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


def _fold(rows: dict[tuple[Any, ...], Row], key: tuple[Any, ...], row: Row) -> None:
    known = rows.get(key)
    if known is None:
        rows[key] = row
    else:
        merge_rows(known, row)
