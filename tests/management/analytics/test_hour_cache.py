"""Merged hours are reused between percentile queries while their hour is unchanged, and
never once it has changed: new traffic in a cached hour shows in the next answer."""

from __future__ import annotations

from datetime import timedelta

from portico.management.analytics.hour_cache import CACHE, HourCache, HourMerge
from tests.management.analytics.traffic import T0, exact_percentile, iso, metric, orders_list, send
from tests.management.conftest import World

WINDOW = {"startTime": iso(T0), "endTime": iso(T0 + timedelta(hours=3))}


def close(value: float, expected: float) -> bool:
    return abs(value - expected) <= 0.0201 * expected


async def p95_by_api(world: World) -> dict[str, float]:
    answer = await metric(
        world, "response-time", aggregation="P95", dimensions=["api_name"], **WINDOW
    )
    assert answer.status_code == 200, answer.text
    return {row["dimensions"]["api_name"]: row["value"] for row in answer.json()["groupedResults"]}


async def test_unchanged_hours_are_reused_and_changed_ones_merged_again(world: World) -> None:
    first_hour = [float(ms) for ms in range(1, 101)]
    second_hour = [float(ms) for ms in range(200, 260)]
    await send(world, [orders_list(T0 + timedelta(minutes=5), ms) for ms in first_hour])
    await send(world, [orders_list(T0 + timedelta(minutes=65), ms) for ms in second_hour])

    misses, hits = CACHE.misses, CACHE.hits
    before = await p95_by_api(world)
    assert close(before["orders"], exact_percentile(first_hour + second_hour, 0.95))
    assert (CACHE.misses - misses, CACHE.hits - hits) == (2, 0)  # two hours merged

    assert await p95_by_api(world) == before
    assert (CACHE.misses - misses, CACHE.hits - hits) == (2, 2)  # both reused

    # late traffic lands in the first hour: that hour is merged again, the other reused
    late = [float(ms) for ms in range(5000, 5100)]
    await send(world, [orders_list(T0 + timedelta(minutes=30), ms) for ms in late])
    after = await p95_by_api(world)
    assert close(after["orders"], exact_percentile(first_hour + second_hour + late, 0.95))
    assert after["orders"] > 4000
    assert (CACHE.misses - misses, CACHE.hits - hits) == (3, 3)


async def test_filters_and_groups_are_cached_apart(world: World) -> None:
    await send(world, [orders_list(T0 + timedelta(minutes=5), float(ms)) for ms in range(1, 50)])
    grouped = await p95_by_api(world)
    overall = await metric(world, "response-time", aggregation="P95", **WINDOW)
    filtered = await metric(
        world,
        "response-time",
        aggregation="P95",
        filters=[{"column": "api_name", "operator": "EQ", "value": ["nothing-by-this-name"]}],
        **WINDOW,
    )
    assert overall.json()["value"] == grouped["orders"]
    assert filtered.json()["value"] is None  # not the unfiltered merge of the same hour


def test_the_cache_is_bounded_least_recently_used_first() -> None:
    cache = HourCache(max_entries=2)
    shape = ("store", T0, "latency_sketch", (), ())  # any hashable shape
    merges = [HourMerge((1, n), {}) for n in range(3)]
    for n, merge in enumerate(merges[:2]):
        cache.put(shape, T0 + timedelta(hours=n), merge)  # type: ignore[arg-type]
    assert cache.get(shape, T0, (1, 0)) is merges[0]  # type: ignore[arg-type]
    cache.put(shape, T0 + timedelta(hours=2), merges[2])  # type: ignore[arg-type]
    assert cache.get(shape, T0 + timedelta(hours=1), (1, 1)) is None  # type: ignore[arg-type]
    assert cache.get(shape, T0, (1, 0)) is merges[0]  # type: ignore[arg-type]
    assert cache.get(shape, T0, (1, 5)) is None  # type: ignore[arg-type]  # changed hour
