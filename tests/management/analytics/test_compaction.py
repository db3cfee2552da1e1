"""Compaction: closed hours merged per route and app answer percentile queries exactly as
the finer rows do, are never read once their hour has changed, are made again by the next
pass, and leave with their hour at retention."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from sqlalchemy import func, select

from portico.core.db.engine import Database
from portico.management.analytics import hour_cache
from portico.management.analytics.compaction import AnalyticsCompaction
from portico.management.analytics.repository import AnalyticsRepository
from portico.management.analytics.retention import sweep
from portico.management.telemetry.models import (
    MEASURES,
    TelemetryRouteSketch,
    TelemetrySketchCompaction,
)
from tests.management.analytics.traffic import (
    T0,
    exact_percentile,
    iso,
    metric,
    orders_create,
    orders_list,
    send,
    users_refused,
)
from tests.management.conftest import World
from tests.support.clock import FrozenClock

WINDOW = {"startTime": iso(T0), "endTime": iso(T0 + timedelta(hours=3))}
#: well after the three hours, which are closed
LATER = T0 + timedelta(hours=5)


def close(value: float, expected: float) -> bool:
    return abs(value - expected) <= 0.0201 * expected


def compaction(database: Database, at: Any = LATER) -> AnalyticsCompaction:
    return AnalyticsCompaction(database, FrozenClock(at), interval=60, lookback_hours=24)


async def values(world: World, measure: str, aggregation: str, *dimensions: str) -> Any:
    hour_cache.CACHE.clear()  # each answer read from the store, not from an earlier merge
    answer = await metric(
        world, measure, aggregation=aggregation, dimensions=list(dimensions), **WINDOW
    )
    assert answer.status_code == 200, answer.text
    document = answer.json()
    grouped = [(row.get("dimensions"), row["value"]) for row in document["groupedResults"]]
    return [(None, document["value"]), *grouped]


async def stored(database: Database) -> tuple[int, list[Any]]:
    async with database.session() as session:
        rows = await session.scalar(select(func.count()).select_from(TelemetryRouteSketch))
        hours = (await session.execute(select(TelemetrySketchCompaction.hour))).scalars()
        return int(rows or 0), sorted(hours)


def by_api(answer: list[Any]) -> dict[str, float]:
    return {row["api_name"]: value for row, value in answer[1:]}


def traffic() -> list[Any]:
    """Two hours: orders listed by one app at three statuses (three finer rows, one route
    row), orders created by another, refused users with no app."""
    first = [orders_list(T0 + timedelta(minutes=5), float(ms)) for ms in range(1, 101)]
    first += [orders_create(T0 + timedelta(minutes=7)) for _ in range(10)]
    first += [users_refused(T0 + timedelta(minutes=9)) for _ in range(5)]
    second = [orders_list(T0 + timedelta(minutes=65), float(ms)) for ms in range(300, 360)]
    return first + second


async def test_compacted_hours_answer_as_the_finer_rows(world: World, database: Database) -> None:
    requests = traffic()
    # the same route and app at other statuses: finer rows that compaction merges
    for status in (404, 500):
        for ms in range(1, 21):
            request = orders_list(T0 + timedelta(minutes=11), float(ms * 3))
            requests.append(type(request)(**{**request.__dict__, "status": status}))
    await send(world, requests)
    questions = [
        ("response-time", "P95", "api_name"),
        ("response-time", "P50", "app_name", "route_name"),
        ("upstream-response-time", "P99", "developer"),
        ("response-size", "P50", "env_name", "product_name"),
        ("response-time", "P99"),
    ]
    before = [await values(world, *question) for question in questions]

    report = await compaction(database).run_once()
    assert [hour for _, hour, _ in report.compacted] == [T0, T0 + timedelta(hours=1)]
    rows, hours = await stored(database)
    # per measure: hour one has orders list, orders create, users; hour two orders list
    assert rows == 4 * len(MEASURES)
    assert hours == [T0, T0 + timedelta(hours=1)]

    read_by_route: list[bool] = []
    original = AnalyticsRepository.sketches

    async def spy(self: AnalyticsRepository, *args: Any, **kwargs: Any) -> Any:
        read_by_route.append(bool(kwargs.get("by_route")))
        return await original(self, *args, **kwargs)

    AnalyticsRepository.sketches = spy  # type: ignore[method-assign]
    try:
        after = [await values(world, *question) for question in questions]
    finally:
        AnalyticsRepository.sketches = original  # type: ignore[method-assign]
    assert after == before
    assert read_by_route and all(read_by_route)  # every hour from the compacted rows

    expected = [float(ms) for ms in range(1, 101)] + [float(ms) for ms in range(300, 360)]
    expected += [float(ms * 3) for ms in range(1, 21)] * 2
    orders = by_api(before[0])["orders"]
    assert close(orders, exact_percentile(expected + [200.0] * 10, 0.95))


async def test_a_query_by_status_method_or_consumer_reads_the_finer_rows(
    world: World, database: Database
) -> None:
    await send(world, traffic())
    before = await values(world, "response-time", "P95", "response_status_code")
    await compaction(database).run_once()
    by_status = await values(world, "response-time", "P95", "response_status_code")
    assert by_status == before
    assert {row["response_status_code"] for row, _ in by_status[1:]} == {200, 201, 401}
    hour_cache.CACHE.clear()
    filtered = await metric(
        world,
        "response-time",
        aggregation="P50",
        filters=[{"column": "request_method", "operator": "EQ", "value": ["POST"]}],
        **WINDOW,
    )
    assert filtered.json()["value"] == 200.0 or close(filtered.json()["value"], 200.0)


async def test_late_traffic_makes_a_compaction_stale_until_compacted_again(
    world: World, database: Database
) -> None:
    await send(world, traffic())
    await compaction(database).run_once()
    late = [orders_list(T0 + timedelta(minutes=30), float(ms)) for ms in range(5000, 5200)]
    await send(world, late)

    # the first hour changed: its compacted rows are not read, the answer has the late ones
    answer = by_api(await values(world, "response-time", "P95", "api_name"))
    assert answer["orders"] > 4000

    report = await compaction(database).run_once()
    assert [hour for _, hour, _ in report.compacted] == [T0]  # only the changed hour
    again = by_api(await values(world, "response-time", "P95", "api_name"))
    assert again == answer
    assert (await compaction(database).run_once()).compacted == []  # nothing left to do


async def test_open_hours_are_not_compacted_and_lookback_bounds_the_pass(
    world: World, database: Database
) -> None:
    await send(world, traffic())
    during_second_hour = T0 + timedelta(hours=1, minutes=30)
    report = await compaction(database, during_second_hour).run_once()
    assert [hour for _, hour, _ in report.compacted] == [T0]
    # a minute after the hour closed, its last batches may still be arriving
    just_closed = T0 + timedelta(hours=2, minutes=1)
    assert (await compaction(database, just_closed).run_once()).compacted == []
    far_later = T0 + timedelta(days=3)
    assert (await compaction(database, far_later).run_once()).compacted == []


async def test_retention_deletes_compacted_hours_with_their_hour(
    world: World, database: Database
) -> None:
    await send(world, traffic())
    await compaction(database).run_once()
    async with database.session() as session, session.begin():
        await sweep(
            session=session,
            now=T0 + timedelta(days=2, hours=1, minutes=30),
            minute_retention_days=1,
            hour_retention_days=2,
        )
    rows, hours = await stored(database)
    assert hours == [T0 + timedelta(hours=1)]
    assert rows == len(MEASURES)


async def test_a_name_changed_within_the_hour_stays_apart(world: World, database: Database) -> None:
    before_rename = [orders_list(T0 + timedelta(minutes=5), float(ms)) for ms in range(1, 51)]
    renamed = [
        type(request)(**{**request.__dict__, "api_name": "purchases", "status": 404})
        for request in (
            orders_list(T0 + timedelta(minutes=40), float(ms)) for ms in range(500, 550)
        )
    ]
    await send(world, before_rename)
    await send(world, renamed)
    expected = await values(world, "response-time", "P50", "api_name")
    assert set(by_api(expected)) == {"orders", "purchases"}
    await compaction(database).run_once()
    rows, _ = await stored(database)
    assert rows == 2 * len(MEASURES)  # one key, two variants
    assert await values(world, "response-time", "P50", "api_name") == expected
