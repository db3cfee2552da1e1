"""Widgets: CRUD with the analytics query's rules, audited; ``/data`` runs the widget's query
over its window (relative ones end at the injectable clock's now)."""

from __future__ import annotations

import dataclasses
from datetime import timedelta
from typing import Any

import pytest

from portico.core.clock import Clock
from tests.conftest import Factory
from tests.management.analytics.traffic import orders_list, send, users_refused
from tests.management.conftest import World

LATE = "2026-03-01T00:00:00Z"


def widget(**overrides: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "name": "Traffic by API",
        "metric": "requests-count",
        "aggregation": "SUM",
        "dimensions": ["api_name"],
        "chart": "pie",
        "filters": {"window": "1h"},
    }
    body.update(overrides)
    return body


async def create(world: World, **overrides: Any) -> dict[str, Any]:
    response = await world.call("POST", "/widgets", widget(**overrides))
    assert response.status_code == 201, response.text
    created: dict[str, Any] = response.json()
    return created


async def test_create_read_change_delete_audited(world: World) -> None:
    created = await create(world)
    assert {k: created[k] for k in ("name", "metric", "aggregation", "dimensions", "chart")} == {
        "name": "Traffic by API",
        "metric": "requests-count",
        "aggregation": "SUM",
        "dimensions": ["api_name"],
        "chart": "pie",
    }
    assert created["filters"] == {"window": "1h"}
    path = f"/widgets/{created['id']}"
    assert (await world.call("GET", path)).json() == created
    listed = (await world.call("GET", "/widgets")).json()
    assert [w["id"] for w in listed["items"]] == [created["id"]] and listed["total"] == 1
    fixed = {"startTime": "2026-03-02T10:00:00Z", "endTime": "2026-03-02T12:00:00Z"}
    changed = await world.call(
        "PATCH",
        path,
        {
            "name": "Latency",
            "metric": "response-time",
            "aggregation": "P95",
            "chart": "line",
            "filters": {"window": fixed, "environmentId": world.env_id},
        },
    )
    assert changed.status_code == 200, changed.text
    body = changed.json()
    assert (body["name"], body["metric"], body["aggregation"], body["chart"]) == (
        "Latency",
        "response-time",
        "P95",
        "line",
    )
    assert body["dimensions"] == ["api_name"]  # unchanged
    assert body["filters"]["environmentId"] == world.env_id
    assert body["filters"]["window"]["startTime"].startswith("2026-03-02T10:00:00")
    assert (await world.call("DELETE", path)).status_code == 204
    assert (await world.call("GET", path)).status_code == 404
    assert (await world.call("GET", "/widgets/not-a-uuid")).status_code == 404
    log = (await world.call("GET", "/audit-log")).json()
    entries = [e for e in log["items"] if e["entityId"] == created["id"]]
    assert [e["action"] for e in entries] == ["widget.delete", "widget.update", "widget.create"]
    update = entries[1]
    assert update["before"]["name"] == "Traffic by API" and update["after"]["name"] == "Latency"
    assert entries[2]["after"]["metric"] == "requests-count"
    assert entries[0]["before"]["chart"] == "line"


@pytest.mark.parametrize(
    ("overrides", "pointer", "words"),
    [
        ({"name": ""}, "/name", "at least 1"),
        ({"name": "x" * 129}, "/name", "at most 128"),
        ({"metric": "bogus"}, "/metric", "unknown metric 'bogus'"),
        ({"aggregation": "MEDIAN"}, "/aggregation", "unknown aggregation 'MEDIAN'"),
        ({"dimensions": ["api_name", "colour"]}, "/dimensions/1", "unknown dimension 'colour'"),
        ({"chart": "donut"}, "/chart", ""),
        ({"filters": {"window": "2h"}}, "/filters/window", ""),
        ({"filters": {}}, "/filters/window", "not found"),
        (
            {
                "filters": {
                    "window": {
                        "startTime": "2026-01-01T00:00:00Z",
                        "endTime": "2026-03-01T00:00:00Z",
                    }
                }
            },
            "/filters/window/endTime",
            "31 days",
        ),
        (
            {"filters": {"window": "1h", "environmentId": "8a9f0e64-54a7-4f38-9d1b-7a0c1d6a0001"}},
            "/filters/environmentId",
            "no such environment",
        ),
        (
            {"filters": {"window": "1h", "apiId": "8a9f0e64-54a7-4f38-9d1b-7a0c1d6a0001"}},
            "/filters/apiId",
            "no such API",
        ),
        ({"colour": "red"}, "/colour", ""),
    ],
)
async def test_bad_widgets_are_400_naming_the_field(
    world: World, overrides: dict[str, Any], pointer: str, words: str
) -> None:
    response = await world.call("POST", "/widgets", widget(**overrides))
    assert response.status_code == 400, response.text
    error = response.json()["errors"][0]
    assert error["pointer"] == pointer, response.text
    assert words in error["detail"]
    created = await create(world)
    patched = await world.call("PATCH", f"/widgets/{created['id']}", overrides)
    if "name" in overrides or "metric" in overrides or "aggregation" in overrides:
        assert patched.status_code == 400 and patched.json()["errors"][0]["pointer"] == pointer


async def test_reading_needs_analytics_read_and_writing_analytics_manage(
    world: World, factory: Factory
) -> None:
    created = await create(world)
    viewer = await factory.user(world.org, roles=("Viewer",))
    nobody = await factory.user(world.org)
    for path in ("/widgets", f"/widgets/{created['id']}", f"/widgets/{created['id']}/data"):
        url = world.base + path
        assert (await world.client.get(url, headers=viewer.headers)).status_code == 200
        refused = await world.client.get(url, headers=nobody.headers)
        assert refused.status_code == 403
        assert "analytics.read" in refused.json()["detail"]
    for method, path, body in (
        ("POST", "/widgets", widget()),
        ("PATCH", f"/widgets/{created['id']}", {"name": "x"}),
        ("DELETE", f"/widgets/{created['id']}", None),
    ):
        refused = await world.client.request(
            method, world.base + path, json=body, headers=viewer.headers
        )
        assert refused.status_code == 403
        assert "analytics.manage" in refused.json()["detail"]


async def test_data_runs_the_query_over_a_window_ending_now(
    world: World, clock: Clock, app: Any
) -> None:
    api = (await world.call("POST", "/apis", {"name": "orders"})).json()
    now = clock.now()
    recent = [
        dataclasses.replace(orders_list(now - timedelta(minutes=10), float(ms)), api_id=api["id"])
        for ms in range(1, 21)
    ]
    older = [users_refused(now - timedelta(hours=3)) for _ in range(4)]
    await send(world, recent + older)

    pie = await create(world)
    data = (await world.call("GET", f"/widgets/{pie['id']}/data")).json()
    assert data["data"] == [{"dimensions": {"api_name": "orders"}, "value": 20}]
    assert "message" not in data
    assert data["value"] == 20 and data["timeUnit"] is None
    start = data["timeRange"]["startTime"]
    assert start == (now - timedelta(hours=1)).isoformat().replace("+00:00", "Z")[:16] + start[16:]

    day = await create(world, chart="table", filters={"window": "24h"})
    rows = (await world.call("GET", f"/widgets/{day['id']}/data")).json()["data"]
    assert {r["dimensions"]["api_name"]: r["value"] for r in rows} == {"orders": 20, "users": 4}

    line = await create(
        world,
        chart="line",
        metric="response-time",
        aggregation="MAX",
        dimensions=[],
        filters={"window": "24h", "apiId": api["id"], "environmentId": world.env_id},
    )
    series = (await world.call("GET", f"/widgets/{line['id']}/data")).json()
    assert series["timeUnit"] == "hour"
    assert [point["value"] for point in series["data"]] == [20.0]
    assert "timeBucket" in series["data"][0]

    number = await create(world, chart="number", metric="response-time", aggregation="P50")
    shown = (await world.call("GET", f"/widgets/{number['id']}/data")).json()
    assert shown["data"] == [{"value": shown["value"]}]
    assert abs(shown["value"] - 10.0) <= 0.1

    other_env = (await world.call("POST", "/envs", {"name": "staging"})).json()["id"]
    elsewhere = await create(world, filters={"window": "7d", "environmentId": other_env})
    empty = (await world.call("GET", f"/widgets/{elsewhere['id']}/data")).json()
    assert empty["data"] == [] and empty["message"] == "No data for the selected filters"

    clock.advance(timedelta(days=2))  # the 1-hour window moved past the traffic
    world.admin.token = app.state.access_tokens.issue(str(world.admin.id)).token
    later = (await world.call("GET", f"/widgets/{pie['id']}/data")).json()
    assert later["data"] == [] and later["message"] == "No data for the selected filters"
    count = (await world.call("GET", f"/widgets/{number['id']}/data")).json()
    assert count["data"] == [] and count["message"] == "No data for the selected filters"
