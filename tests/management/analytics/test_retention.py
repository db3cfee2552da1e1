"""Retention: minutes past theirs are deleted once their hour holds them (rolled up again
from the minutes when it does not), hours past theirs are deleted and logged with counts."""

from __future__ import annotations

import logging
import uuid
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import func, select

from portico.core.clock import Clock
from portico.core.db.engine import Database
from portico.management.analytics.retention import AnalyticsRetention
from portico.management.telemetry.models import TelemetryHourlyRollup, TelemetryRollup
from tests.management.analytics.traffic import iso, orders_list, send, users_refused
from tests.management.conftest import World


async def counts(database: Database) -> tuple[int, int]:
    async with database.session() as session:
        minutes = await session.scalar(select(func.sum(TelemetryRollup.requests)))
        hours = await session.scalar(select(func.sum(TelemetryHourlyRollup.requests)))
    return int(minutes or 0), int(hours or 0)


async def test_old_minutes_are_kept_per_hour_and_old_hours_deleted_with_a_log(
    world: World, database: Database, clock: Clock, caplog: pytest.LogCaptureFixture
) -> None:
    now = clock.now()
    hour = now.replace(minute=0, second=0, microsecond=0)
    recent = [orders_list(now - timedelta(minutes=5), 10.0) for _ in range(3)]
    week_ago = hour - timedelta(days=9)
    old = [orders_list(week_ago + timedelta(minutes=m), float(m + 1)) for m in range(0, 60, 6)]
    lost_hour = hour - timedelta(days=10)
    written_before_hours = [users_refused(lost_hour + timedelta(minutes=7)) for _ in range(4)]
    ancient = [users_refused(hour - timedelta(days=500)) for _ in range(2)]
    await send(world, recent + old + written_before_hours + ancient)
    # an hour whose hourly rows are missing (as for minutes stored before the hourly tier)
    async with database.session() as session, session.begin():
        await session.execute(
            TelemetryHourlyRollup.__table__.delete().where(TelemetryHourlyRollup.hour == lost_hour)
        )
    assert await counts(database) == (19, 15)

    retention = AnalyticsRetention(
        database, clock, minute_retention_days=7, hour_retention_days=400, interval=3600
    )
    with caplog.at_level(logging.INFO, logger="portico.analytics.retention"):
        report = await retention.run_once()
    assert report.rolled_up == [(uuid.UUID(world.env_id), lost_hour)]
    assert sum(report.minutes_deleted.values()) == 16  # old + lost hour + ancient
    assert report.hours_deleted == {world.org.id: 2}
    assert await counts(database) == (3, 17)
    messages = [record.getMessage() for record in caplog.records]
    assert any("2 requests of org" in m and "gone" in m for m in messages), messages
    assert any("rolled up again" in m for m in messages), messages

    # what the minutes held answers from the hours, percentiles included
    response = await world.call(
        "POST",
        "/analytics/metrics/response-time",
        {
            "startTime": iso(week_ago),
            "endTime": iso(week_ago + timedelta(hours=1)),
            "excludeTimeUnit": True,
            "aggregation": "MAX",
        },
    )
    assert response.json()["value"] == 55.0
    rolled = await world.call(
        "POST",
        "/analytics/metrics/requests-count",
        {"startTime": iso(lost_hour), "endTime": iso(lost_hour + timedelta(hours=1))},
    )
    assert rolled.json()["value"] == 4

    again = await retention.run_once()  # nothing left to do
    assert (again.rolled_up, again.minutes_deleted, again.hours_deleted) == ([], {}, {})
    assert await counts(database) == (3, 17)


def test_cut_offs_fall_on_whole_hours() -> None:
    from portico.management.analytics.retention import _hour

    moment = datetime(2026, 3, 2, 10, 42, 17, tzinfo=UTC)
    assert _hour(moment) == datetime(2026, 3, 2, 10, tzinfo=UTC)
