"""``POST /api/orgs/{orgId}/analytics/metrics/{metric}`` over traffic fed through the ingest
endpoint: every metric, dimension, operator and aggregation, time series, pages, errors."""

from __future__ import annotations

from collections import Counter
from datetime import timedelta
from typing import Any

import pytest

from portico.management.analytics.schemas import DIMENSIONS
from tests.conftest import Factory
from tests.management.analytics.traffic import (
    T0,
    Request,
    exact_percentile,
    iso,
    metric,
    orders_list,
    send,
    standard,
    users_refused,
)
from tests.management.conftest import World

ACCURACY = 0.01


@pytest.fixture
async def traffic(world: World) -> list[Request]:
    requests = standard()
    await send(world, requests)
    return requests


def grouped(response: Any, dimension: str) -> dict[Any, Any]:
    assert response.status_code == 200, response.text
    return {
        item["dimensions"][dimension]: item["value"] for item in response.json()["groupedResults"]
    }


def close(got: float, expected: float) -> bool:
    return abs(got - expected) <= ACCURACY * expected + 1e-9


async def test_the_seed_clients_query_answers_in_its_shape(
    world: World, traffic: list[Request]
) -> None:
    response = await metric(
        world,
        "requests-count",
        dimensions=["api_name"],
        filters=[{"column": "api_name", "operator": "EQ", "value": ["orders"]}],
        aggregation="AVG",
        timeUnit="minute",
        pageRequest={"page": 1, "size": 20, "sort": {"field": "value", "order": "DESC"}},
    )
    assert response.status_code == 200, response.text
    assert response.json() == {
        "value": 110,
        "timeRange": {"startTime": "2026-03-02T10:00:00Z", "endTime": "2026-03-02T12:00:00Z"},
        "groupedResults": [{"dimensions": {"api_name": "orders"}, "value": 110}],
        "meta": {"page": 1, "size": 20, "total": 1},
    }


@pytest.mark.parametrize("dimension", sorted(DIMENSIONS))
async def test_every_dimension_groups_and_filters(
    world: World, traffic: list[Request], dimension: str
) -> None:
    expected = Counter(r.dimension(dimension, "prod") for r in traffic)
    response = await metric(world, "requests-count", dimensions=[dimension])
    assert grouped(response, dimension) == dict(expected)
    value = orders_list(T0, 1.0).dimension(dimension, "prod")
    filtered = await metric(
        world,
        "requests-count",
        filters=[{"column": dimension, "operator": "EQ", "value": [value]}],
    )
    assert filtered.status_code == 200, filtered.text
    assert filtered.json()["value"] == expected[value]
    assert filtered.json()["groupedResults"] == [{"value": expected[value]}]


async def test_unattributed_traffic_has_an_empty_app_name(
    world: World, traffic: list[Request]
) -> None:
    response = await metric(world, "requests-count", dimensions=["app_name", "consumer"])
    assert response.status_code == 200
    rows = {
        (item["dimensions"]["app_name"], item["dimensions"]["consumer"]): item["value"]
        for item in response.json()["groupedResults"]
    }
    assert rows == {("Mobile", "mobile-consumer"): 100, ("Web", "web-consumer"): 10, ("", ""): 5}


@pytest.mark.parametrize(
    ("column", "operator", "value", "expected"),
    [
        ("response_status_code", "EQ", [200], 100),
        ("response_status_code", "EQ", ["200"], 100),
        ("response_status_code", "NEQ", [200], 15),
        ("response_status_code", "GT", [200], 15),
        ("response_status_code", "GTE", [201], 15),
        ("response_status_code", "LT", [201], 100),
        ("response_status_code", "LTE", [201], 110),
        ("response_status_code", "IN", [200, 401], 105),
        ("response_status_code", "LIKE", ["2%"], 110),
        ("api_name", "LIKE", ["ORD%"], 110),
        ("api_name", "NOT_LIKE", ["ord%"], 5),
        ("api_name", "IN", ["users", "nothing"], 5),
        ("api_name", "GT", ["p"], 5),
        ("route_name", "NEQ", ["list orders"], 15),
        ("developer", "LTE", ["ada@example.com"], 105),
    ],
)
async def test_every_operator(
    world: World,
    traffic: list[Request],
    column: str,
    operator: str,
    value: list[Any],
    expected: int,
) -> None:
    response = await metric(
        world,
        "requests-count",
        filters=[{"column": column, "operator": operator, "value": value}],
    )
    assert response.status_code == 200, response.text
    assert response.json()["value"] == expected


async def test_filters_are_and_combined(world: World, traffic: list[Request]) -> None:
    response = await metric(
        world,
        "requests-count",
        filters=[
            {"column": "api_name", "operator": "EQ", "value": ["orders"]},
            {"column": "request_method", "operator": "EQ", "value": ["POST"]},
        ],
    )
    assert response.json()["value"] == 10


MEASURES = {
    "response-time": lambda r: r.latency_ms,
    "upstream-response-time": lambda r: r.upstream_ms,
    "request-size": lambda r: r.request_bytes,
    "response-size": lambda r: r.response_bytes,
    "total-transfer-size": lambda r: r.request_bytes + r.response_bytes,
}


@pytest.mark.parametrize("name", sorted(MEASURES))
@pytest.mark.parametrize("aggregation", ["AVG", "MIN", "MAX", "SUM", "P50", "P95", "P99"])
async def test_every_measure_and_aggregation_per_group(
    world: World, traffic: list[Request], name: str, aggregation: str
) -> None:
    """Exact for AVG/MIN/MAX/SUM; percentiles within the sketch's 1 % of the exact ones
    (rank floor(q·(n−1)) of the sorted values)."""
    values_of: dict[str, list[float]] = {}
    for request in traffic:
        value = MEASURES[name](request)
        if value is not None:
            values_of.setdefault(request.api_name, []).append(float(value))
    everything = [v for values in values_of.values() for v in values]

    def expected(values: list[float]) -> float:
        match aggregation:
            case "AVG":
                return sum(values) / len(values)
            case "MIN":
                return min(values)
            case "MAX":
                return max(values)
            case "SUM":
                return sum(values)
        return exact_percentile(values, {"P50": 0.5, "P95": 0.95, "P99": 0.99}[aggregation])

    response = await metric(world, name, dimensions=["api_name"], aggregation=aggregation)
    got = grouped(response, "api_name")
    assert set(got) == {"orders", "users"}
    for api, values in values_of.items():
        if aggregation.startswith("P"):
            assert close(got[api], expected(values)), (api, got[api], expected(values))
        else:
            assert got[api] == pytest.approx(expected(values), abs=1e-3)
    if name == "upstream-response-time":
        assert got["users"] is None  # refused requests never reached an upstream
    total = response.json()["value"]
    if aggregation.startswith("P"):
        assert close(total, expected(everything))
    else:
        assert total == pytest.approx(expected(everything), abs=1e-3)


async def test_percentiles_of_a_wide_distribution_over_tiers_and_edges(world: World) -> None:
    """Latencies spread over four orders of magnitude, over minutes of two hours: the
    aligned window reads the hourly tier, the unaligned one minute edges too."""
    latencies = [0.5 * 1.013**i for i in range(700)]  # 0.5 ms .. ~4.4 s
    requests = [
        orders_list(T0 + timedelta(minutes=(i * 7) % 120), ms) for i, ms in enumerate(latencies)
    ]
    await send(world, requests)
    for start, end in (
        (T0, T0 + timedelta(hours=2)),
        (T0 - timedelta(minutes=17), T0 + timedelta(minutes=150)),
    ):
        for aggregation, q in (("P50", 0.5), ("P95", 0.95), ("P99", 0.99)):
            response = await metric(
                world,
                "response-time",
                aggregation=aggregation,
                startTime=iso(start),
                endTime=iso(end),
            )
            assert response.status_code == 200, response.text
            assert close(response.json()["value"], exact_percentile(latencies, q))


async def test_requests_per_second(world: World, traffic: list[Request]) -> None:
    response = await metric(world, "requests-per-second", dimensions=["api_name"])
    assert grouped(response, "api_name") == {
        "orders": round(110 / 7200, 6),
        "users": round(5 / 7200, 6),
    }
    series = await metric(world, "requests-per-second", excludeTimeUnit=False, timeUnit="minute")
    buckets = {i["timeBucket"]: i["value"] for i in series.json()["groupedResults"]}
    assert buckets["2026-03-02T10:01:00Z"] == round(100 / 60, 6)


async def test_time_series_by_minute_hour_and_day(world: World, traffic: list[Request]) -> None:
    later = users_refused(T0 + timedelta(days=1, minutes=5))
    await send(world, [later])
    by_minute = await metric(world, "requests-count", excludeTimeUnit=False, timeUnit="minute")
    assert [(i["timeBucket"], i["value"]) for i in by_minute.json()["groupedResults"]] == [
        ("2026-03-02T10:01:00Z", 100),
        ("2026-03-02T10:02:00Z", 10),
        ("2026-03-02T11:01:00Z", 5),
    ]
    by_hour = await metric(
        world,
        "requests-count",
        excludeTimeUnit=False,
        timeUnit="hour",
        dimensions=["api_name"],
        startTime=iso(T0 - timedelta(minutes=30)),
        endTime=iso(T0 + timedelta(hours=1, minutes=30)),
    )
    assert [
        (i["timeBucket"], i["dimensions"]["api_name"], i["value"])
        for i in by_hour.json()["groupedResults"]
    ] == [("2026-03-02T10:00:00Z", "orders", 110), ("2026-03-02T11:00:00Z", "users", 5)]
    by_day = await metric(
        world,
        "requests-count",
        excludeTimeUnit=False,
        timeUnit="day",
        startTime=iso(T0),
        endTime=iso(T0 + timedelta(days=2)),
    )
    assert [(i["timeBucket"], i["value"]) for i in by_day.json()["groupedResults"]] == [
        ("2026-03-02T00:00:00Z", 115),
        ("2026-03-03T00:00:00Z", 1),
    ]
    avg = await metric(
        world, "response-time", excludeTimeUnit=False, timeUnit="hour", aggregation="MAX"
    )
    assert [(i["timeBucket"], i["value"]) for i in avg.json()["groupedResults"]] == [
        ("2026-03-02T10:00:00Z", 200.0),
        ("2026-03-02T11:00:00Z", 2.0),
    ]


async def test_pages_and_sorting(world: World, traffic: list[Request]) -> None:
    async def page(number: int, size: int, field: str, order: str) -> Any:
        response = await metric(
            world,
            "requests-count",
            dimensions=["route_name"],
            pageRequest={"page": number, "size": size, "sort": {"field": field, "order": order}},
        )
        assert response.status_code == 200, response.text
        return response.json()

    first = await page(1, 2, "value", "DESC")
    assert [i["dimensions"]["route_name"] for i in first["groupedResults"]] == [
        "list orders",
        "create order",
    ]
    assert first["meta"] == {"page": 1, "size": 2, "total": 3}
    assert first["value"] == 115  # the total is of every group, not of the page
    second = await page(2, 2, "value", "DESC")
    assert [i["dimensions"]["route_name"] for i in second["groupedResults"]] == ["get user"]
    ascending = await page(1, 3, "value", "ASC")
    assert [i["value"] for i in ascending["groupedResults"]] == [5, 10, 100]
    by_name = await page(1, 3, "route_name", "ASC")
    assert [i["dimensions"]["route_name"] for i in by_name["groupedResults"]] == [
        "create order",
        "get user",
        "list orders",
    ]


async def test_a_window_without_traffic_answers_empty(world: World, traffic: list[Request]) -> None:
    response = await metric(
        world,
        "response-time",
        dimensions=["api_name"],
        startTime=iso(T0 - timedelta(days=3)),
        endTime=iso(T0 - timedelta(days=2)),
    )
    assert response.status_code == 200
    assert response.json()["groupedResults"] == []
    assert response.json()["value"] is None
    count = await metric(
        world,
        "requests-count",
        startTime=iso(T0 - timedelta(days=3)),
        endTime=iso(T0 - timedelta(days=2)),
    )
    assert count.json()["value"] == 0
    assert count.json()["groupedResults"] == []
    ungrouped = await metric(
        world,
        "response-time",
        aggregation="P95",
        startTime=iso(T0 - timedelta(days=3)),
        endTime=iso(T0 - timedelta(days=2)),
    )
    assert ungrouped.json()["groupedResults"] == [] and ungrouped.json()["value"] is None


async def test_other_organisations_traffic_is_not_counted(
    world: World, traffic: list[Request], factory: Factory
) -> None:
    other = await factory.org("Other")
    owner = await factory.user(other, roles=("Administrator",))
    response = await world.client.post(
        f"/api/orgs/{other.id}/analytics/metrics/requests-count",
        json={"startTime": iso(T0), "endTime": iso(T0 + timedelta(hours=2))},
        headers=owner.headers,
    )
    assert response.status_code == 200
    assert response.json()["value"] == 0


@pytest.mark.parametrize(
    ("name", "body", "where", "words"),
    [
        ("bogus", {}, {"parameter": "metric"}, "unknown metric 'bogus'"),
        (
            "requests-count",
            {"dimensions": ["colour"]},
            {"pointer": "/dimensions/0"},
            "unknown dimension 'colour'",
        ),
        (
            "requests-count",
            {"filters": [{"column": "api_name", "operator": "ABOUT", "value": ["x"]}]},
            {"pointer": "/filters/0/operator"},
            "unknown operator 'ABOUT'",
        ),
        (
            "requests-count",
            {"filters": [{"column": "size", "operator": "EQ", "value": ["x"]}]},
            {"pointer": "/filters/0/column"},
            "unknown dimension 'size'",
        ),
        (
            "response-time",
            {"aggregation": "MEDIAN"},
            {"pointer": "/aggregation"},
            "unknown aggregation 'MEDIAN'",
        ),
        (
            "requests-count",
            {"excludeTimeUnit": False, "timeUnit": "week"},
            {"pointer": "/timeUnit"},
            "unknown time unit 'week'",
        ),
        (
            "requests-count",
            {"endTime": "2026-04-03T00:00:01Z", "startTime": "2026-03-03T00:00:00Z"},
            {"pointer": "/endTime"},
            "31 days",
        ),
        (
            "requests-count",
            {"endTime": "2026-03-01T00:00:00Z"},
            {"pointer": "/endTime"},
            "before startTime",
        ),
        (
            "requests-count",
            {"filters": [{"column": "response_status_code", "operator": "EQ", "value": ["ok"]}]},
            {"pointer": "/filters/0/value/0"},
            "not a status code",
        ),
        (
            "requests-count",
            {"pageRequest": {"sort": {"field": "api_name"}}},
            {"pointer": "/pageRequest/sort/field"},
            "cannot sort by 'api_name'",
        ),
        ("requests-count", {"colour": "red"}, {"pointer": "/colour"}, ""),
        (
            "requests-count",
            {"filters": [{"column": "api_name", "operator": "EQ", "value": []}]},
            {"pointer": "/filters/0/value"},
            "",
        ),
    ],
)
async def test_bad_queries_are_400_naming_what_is_wrong(
    world: World, name: str, body: dict[str, Any], where: dict[str, str], words: str
) -> None:
    response = await metric(world, name, **body)
    assert response.status_code == 400, response.text
    assert response.headers["content-type"].startswith("application/problem+json")
    (error,) = response.json()["errors"]
    assert {k: error[k] for k in where} == where, error
    assert words in error["detail"]


async def test_exactly_31_days_is_allowed(world: World) -> None:
    response = await metric(
        world, "requests-count", startTime="2026-03-01T00:00:00Z", endTime="2026-04-01T00:00:00Z"
    )
    assert response.status_code == 200, response.text


async def test_reading_needs_analytics_read(world: World, factory: Factory) -> None:
    nobody = await factory.user(world.org)  # a member without roles
    body = {"startTime": iso(T0), "endTime": iso(T0 + timedelta(hours=1))}
    url = f"{world.base}/analytics/metrics/requests-count"
    refused = await world.client.post(url, json=body, headers=nobody.headers)
    assert refused.status_code == 403
    assert "analytics.read" in refused.json()["detail"]
    viewer = await factory.user(world.org, roles=("Viewer",))
    assert (await world.client.post(url, json=body, headers=viewer.headers)).status_code == 200
    stranger = await factory.user(await factory.org("Elsewhere"), roles=("Administrator",))
    assert (await world.client.post(url, json=body, headers=stranger.headers)).status_code == 404
    assert (await world.client.post(url, json=body)).status_code == 401
