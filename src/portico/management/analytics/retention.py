"""Retention of the rollup tiers: minutes are kept ``analytics_minute_retention_days``, hours
``analytics_hour_retention_days``.

Ingest adds every rollup to its minute and to its hour, so minutes past their retention are
already in the hourly tier. The sweep checks that before deleting them: an hour whose minutes
hold more requests than its hourly rows (written before the hourly tier existed, or lost) is
rolled up again from its minutes first. Cut-offs fall on whole hours, so an hour's minutes go
all at once. What leaves the last tier is gone: it is logged, with the rollups and the
requests they held, per organisation.
"""

from __future__ import annotations

import logging
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from portico.core.background import BackgroundLoop
from portico.core.clock import Clock
from portico.core.db.engine import Database
from portico.management.telemetry import sketch as sketches
from portico.management.telemetry.models import SKETCHES
from portico.management.telemetry.repository import TelemetryRepository, key_of
from portico.management.telemetry.service import merge_rows

logger = logging.getLogger("portico.analytics.retention")


@dataclass
class SweepReport:
    minute_cutoff: datetime
    hour_cutoff: datetime
    #: (environment, hour) rolled up again from minutes before the minutes went
    rolled_up: list[tuple[uuid.UUID, datetime]] = field(default_factory=list)
    #: requests of the deleted minute rows, per org (kept in the hourly tier)
    minutes_deleted: dict[uuid.UUID, int] = field(default_factory=dict)
    #: requests of the deleted hour rows, per org (gone)
    hours_deleted: dict[uuid.UUID, int] = field(default_factory=dict)
    loss_rows_deleted: int = 0


def _hour(moment: datetime) -> datetime:
    return moment.astimezone(UTC).replace(minute=0, second=0, microsecond=0)


async def _roll_up(
    repository: TelemetryRepository, environment_id: uuid.UUID, hour: datetime
) -> None:
    """Replace the hour's rows by the merge of its minutes."""
    end = hour + timedelta(hours=1)
    merged: dict[tuple[Any, ...], dict[str, Any]] = {}
    for row in await repository.minutes_between(environment_id, hour, end):
        row = {**row, "hour": hour}
        del row["minute"]
        for name in SKETCHES:
            row[name] = sketches.decode(row[name])
        key = key_of(row, "hour")
        known = merged.get(key)
        if known is None:
            merged[key] = row
        else:
            merge_rows(known, row)
    for row in merged.values():
        for name in SKETCHES:
            row[name] = sketches.encode(row[name], packed=True)
    await repository.delete_between(True, environment_id, hour, end)
    await repository.upsert(True, list(merged.values()))


async def sweep(
    *,
    session: AsyncSession,
    now: datetime,
    minute_retention_days: int,
    hour_retention_days: int,
) -> SweepReport:
    """One retention pass, in the caller's transaction."""
    repository = TelemetryRepository(session)
    report = SweepReport(
        minute_cutoff=_hour(now - timedelta(days=minute_retention_days)),
        hour_cutoff=_hour(now - timedelta(days=hour_retention_days)),
    )
    in_minutes: dict[tuple[uuid.UUID, datetime], int] = {}
    for environment_id, minute, requests in await repository.totals_before(
        False, report.minute_cutoff
    ):
        key = (environment_id, _hour(minute))
        in_minutes[key] = in_minutes.get(key, 0) + int(requests or 0)
    in_hours = {
        (environment_id, _hour(hour)): int(requests or 0)
        for environment_id, hour, requests in await repository.totals_before(
            True, report.minute_cutoff
        )
    }
    for key, requests in sorted(in_minutes.items()):
        if key[1] >= report.hour_cutoff and in_hours.get(key, 0) < requests:
            await _roll_up(repository, *key)
            report.rolled_up.append(key)
    report.minutes_deleted = await repository.delete_before(False, report.minute_cutoff)
    report.hours_deleted = await repository.delete_before(True, report.hour_cutoff)
    report.loss_rows_deleted = await repository.delete_loss_before(report.hour_cutoff)
    return report


class AnalyticsRetention(BackgroundLoop):
    """Runs ``sweep`` every ``interval`` seconds in ``portico serve``'s workers."""

    task_name = "portico-analytics-retention"

    def __init__(
        self,
        database: Database,
        clock: Clock,
        *,
        minute_retention_days: int,
        hour_retention_days: int,
        interval: float,
    ) -> None:
        super().__init__()
        self.database = database
        self.clock = clock
        self.minute_retention_days = minute_retention_days
        self.hour_retention_days = hour_retention_days
        self.interval = interval

    async def run_once(self) -> SweepReport:
        async with self.database.session() as session, session.begin():
            report = await sweep(
                session=session,
                now=self.clock.now(),
                minute_retention_days=self.minute_retention_days,
                hour_retention_days=self.hour_retention_days,
            )
        for environment_id, hour in report.rolled_up:
            logger.warning(
                "analytics: hour %s of environment %s rolled up again from its minutes "
                "before they were deleted",
                hour.isoformat(),
                environment_id,
            )
        if report.minutes_deleted:
            logger.info(
                "analytics: minute rollups before %s deleted (%d requests, kept per hour)",
                report.minute_cutoff.isoformat(),
                sum(report.minutes_deleted.values()),
            )
        for org_id, requests in report.hours_deleted.items():
            logger.info(
                "analytics: hourly rollups before %s deleted past retention: %d requests of "
                "org %s are gone",
                report.hour_cutoff.isoformat(),
                requests,
                org_id,
            )
        return report

    async def run(self) -> None:
        while not self._stopping:
            try:
                await self.run_once()
            except Exception:  # a failed sweep is retried at the next interval
                logger.exception("analytics retention sweep failed")
            await self._sleep(self.interval)
