"""Compaction of closed hours: their sketches merged per route and app, for the queries
that split by nothing finer.

A percentile query over a day merges each hour's sketches, one per hourly key (environment,
route, consumer, method, status, app ...): about 35,000 per measure for 10 million requests
(``bench/bench_analytics.py``), and that merge is the query's cost when its hours are not in
the process's ``hour_cache``. Most such queries group and filter by API, route, app, product,
developer or environment only. Once an hour has closed, this merges its sketches without
consumer, method and status into ``telemetry_sketches_hourly_by_route`` (about a sixth of the
rows) and records the hour's fingerprint, (rows, requests) of its hourly rollups, beside it;
``hour_cache.hourly_merges`` reads those rows instead while the fingerprint still holds.

Late traffic for a compacted hour changes its fingerprint: queries read the finer rows again
(never stale ones) until the next pass compacts the hour anew. The fingerprint is read
before the sketches, so a write landing in between leaves the compaction marked stale rather
than wrong. Each hour is compacted in its own short transaction.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from portico.core.background import BackgroundLoop
from portico.core.clock import Clock
from portico.core.db.engine import Database
from portico.management.analytics.repository import AnalyticsRepository, Fingerprint, Window
from portico.management.telemetry import sketch as sketches
from portico.management.telemetry.models import MEASURES, NAMES, ROUTE_KEY

logger = logging.getLogger("portico.analytics.compaction")

#: an hour is compacted once it has been closed this long (the last batches of its minutes
#: arrive within seconds of its end)
SETTLE = timedelta(minutes=2)
_ID_COLUMNS = ("environment_id", *ROUTE_KEY)
#: groups merged between two yields to the event loop (a few milliseconds of work)
_GROUPS_PER_SLICE = 32


@dataclass
class CompactionReport:
    #: (org, hour) compacted in this pass, with the rows written
    compacted: list[tuple[uuid.UUID, datetime, int]] = field(default_factory=list)


def _hour(moment: datetime) -> datetime:
    return moment.astimezone(UTC).replace(minute=0, second=0, microsecond=0)


async def due_hours(
    session: AsyncSession, *, now: datetime, lookback: timedelta
) -> list[tuple[uuid.UUID, datetime, Fingerprint]]:
    """The closed hours within ``lookback`` whose compaction is missing or stale, oldest first
    per org, with their current fingerprint."""
    repository = AnalyticsRepository(session)
    until = _hour(now - SETTLE)  # the hours before this one are closed and settled
    since = _hour(now - lookback)
    due: list[tuple[uuid.UUID, datetime, Fingerprint]] = []
    for org_id in await repository.org_ids():
        fingerprints = await repository.hour_fingerprints(Window(True, since, until), org_id=org_id)
        compacted = await repository.compactions(org_id, list(fingerprints))
        for hour, fingerprint in sorted(fingerprints.items()):
            if compacted.get(hour) != fingerprint:
                due.append((org_id, hour, fingerprint))
    return due


async def compacted_rows(
    session: AsyncSession, org_id: uuid.UUID, hour: datetime
) -> tuple[Fingerprint | None, list[dict[str, Any]]]:
    """The hour's fingerprint, read first, and its sketches merged per route key."""
    repository = AnalyticsRepository(session)
    fingerprint = (
        await repository.hour_fingerprints(
            Window(True, hour, hour + timedelta(hours=1)), org_id=org_id
        )
    ).get(hour)
    rows: list[dict[str, Any]] = []
    if fingerprint is None:
        return None, rows
    for measure in MEASURES:
        variants: dict[tuple[Any, ...], int] = {}
        for number, group in enumerate(await repository.route_groups(org_id, hour, measure)):
            if number % _GROUPS_PER_SLICE == _GROUPS_PER_SLICE - 1:
                await asyncio.sleep(0)  # the loop also serves requests (portico serve)
            ids = tuple(getattr(group, name) for name in _ID_COLUMNS)
            variant = variants.get(ids, 0)
            variants[ids] = variant + 1
            accumulator = sketches.Accumulator()
            accumulator.add_joined(group.sketches or "")
            row = {name: getattr(group, name) for name in (*_ID_COLUMNS, *NAMES)}
            row.update(
                org_id=org_id,
                measure=measure,
                hour=hour,
                variant=variant,
                count=int(group.measured or 0),
                sketch=sketches.encode(accumulator.sketch(), packed=True),
            )
            rows.append(row)
    return fingerprint, rows


async def compact_hour(
    database: Database, org_id: uuid.UUID, hour: datetime, *, now: datetime
) -> int:
    """Compact one hour of one org: read and merge (no write lock held meanwhile), then
    replace its compacted rows in one transaction. The rows written."""
    async with database.session() as session:
        fingerprint, rows = await compacted_rows(session, org_id, hour)
    async with database.session() as session, session.begin():
        repository = AnalyticsRepository(session)
        await repository.lock_compaction(org_id, hour)
        await repository.replace_compaction(org_id, hour, rows, fingerprint, now)
    return len(rows)


class AnalyticsCompaction(BackgroundLoop):
    """Compacts due hours every ``interval`` seconds in ``portico serve``'s workers."""

    task_name = "portico-analytics-compaction"

    def __init__(
        self, database: Database, clock: Clock, *, interval: float, lookback_hours: int
    ) -> None:
        super().__init__()
        self.database = database
        self.clock = clock
        self.interval = interval
        self.lookback = timedelta(hours=lookback_hours)

    async def run_once(self) -> CompactionReport:
        report = CompactionReport()
        now = self.clock.now()
        async with self.database.session() as session:
            due = await due_hours(session, now=now, lookback=self.lookback)
        for org_id, hour, _ in due:
            if self._stopping:
                break
            written = await compact_hour(self.database, org_id, hour, now=now)
            report.compacted.append((org_id, hour, written))
            logger.debug("analytics: hour %s of org %s compacted", hour.isoformat(), org_id)
        return report

    async def run(self) -> None:
        while not self._stopping:
            try:
                await self.run_once()
            except Exception:  # a failed pass is retried at the next interval
                logger.exception("analytics compaction failed")
            await self._sleep(self.interval)
