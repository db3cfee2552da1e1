"""``POST /api/dataplane/v1/telemetry``: rollups from nodes are merged per key into minutes and
hours, lost records are counted, bad batches are refused whole, an older node's batches still
validate."""

from __future__ import annotations

import uuid
from typing import Any

from sqlalchemy import select

from portico.core.db.engine import Database
from portico.gateway.telemetry.rollups import sketch_index
from portico.management.telemetry import sketch
from portico.management.telemetry.models import (
    MEASURES,
    TelemetryHourlyRollup,
    TelemetryHourlySketch,
    TelemetryLoss,
    TelemetryRollup,
)
from tests.management.conftest import World

MINUTE = "2026-11-22T05:00:00+00:00"


def rollup(**overrides: Any) -> dict[str, Any]:
    document: dict[str, Any] = {
        "minute": MINUTE,
        "apiId": "api-1",
        "routeId": "rev:0",
        "consumer": "alice",
        "method": "GET",
        "status": 200,
        "appId": "app-1",
        "productId": "prod-1",
        "developerId": "dev-1",
        "apiName": "orders",
        "routeName": "list",
        "apiPath": "/orders",
        "upstreamPath": "/v1/orders",
        "appName": "Mobile",
        "developerEmail": "dev@example.com",
        "productName": "Gold",
        "requests": 3,
        "latencyMsSum": 30.0,
        "latencyMsMin": 4.0,
        "latencyMsMax": 20.0,
        "upstreamRequests": 3,
        "upstreamMsSum": 24.0,
        "upstreamMsMin": 3.0,
        "upstreamMsMax": 15.0,
        "requestBytes": 0,
        "requestBytesMin": 0,
        "requestBytesMax": 0,
        "responseBytes": 300,
        "responseBytesMin": 100,
        "responseBytesMax": 100,
        "transferBytesMin": 100,
        "transferBytesMax": 100,
        "latencySketch": f"{sketch_index(4.0)}=1,{sketch_index(6.0)}=1,{sketch_index(20.0)}=1",
        "upstreamSketch": f"{sketch_index(3.0)}=1,{sketch_index(6.0)}=1,{sketch_index(15)}=1",
        "requestSketch": "0=3",
        "responseSketch": f"{sketch_index(100)}=3",
        "transferSketch": f"{sketch_index(100)}=3",
    }
    document.update(overrides)
    return document


async def post(world: World, token: str, body: dict[str, Any]) -> Any:
    return await world.client.post(
        "/api/dataplane/v1/telemetry", json=body, headers={"Authorization": f"Bearer {token}"}
    )


async def node_token(world: World) -> str:
    created = await world.call("POST", f"/envs/{world.env_id}/dataplane-tokens", {"name": "n"})
    return str(created.json()["token"])


async def test_rollups_from_several_nodes_add_up_and_losses_are_counted(
    world: World, database: Database
) -> None:
    token = await node_token(world)
    batch = {"nodeId": "node-a", "environmentId": world.env_id, "rollups": [rollup()]}
    assert (await post(world, token, batch)).status_code == 204
    second = {
        "nodeId": "node-b",
        "environmentId": world.env_id,
        "rollups": [
            rollup(
                requests=1,
                latencyMsSum=90.0,
                latencyMsMin=90.0,
                latencyMsMax=90.0,
                upstreamRequests=0,
                upstreamMsSum=0.0,
                latencySketch=f"{sketch_index(90.0)}=1",
                upstreamSketch="",
                requestSketch="0=1",
                responseSketch=f"{sketch_index(100)}=1",
                transferSketch=f"{sketch_index(100)}=1",
                responseBytes=100,
                appName="Mobile (renamed)",
            ),
            rollup(
                status=429,
                requests=2,
                upstreamRequests=0,
                upstreamMsSum=0.0,
                latencySketch=f"{sketch_index(1.0)}=2",
                upstreamSketch="",
                requestSketch="0=2",
                responseSketch=f"{sketch_index(100)}=2",
                transferSketch=f"{sketch_index(100)}=2",
                responseBytes=200,
            ),
        ],
        "dropped": 7,
    }
    assert (await post(world, token, second)).status_code == 204
    async with database.session() as session:
        rows = {r.status: r for r in await session.scalars(select(TelemetryRollup))}
        hours = {r.status: r for r in await session.scalars(select(TelemetryHourlyRollup))}
        losses = list(await session.scalars(select(TelemetryLoss)))
        stored = list(await session.scalars(select(TelemetryHourlySketch)))
    hour_sketches = {(s.status, s.measure): s for s in stored}
    # every measure stored, an empty one too: a query grouping by it lists the group
    assert hour_sketches[(429, "upstream")].sketch == ""
    assert hour_sketches[(429, "upstream")].count == 0
    for tier in (rows, hours):
        ok = tier[200]
        assert (ok.requests, ok.latency_ms_sum, ok.latency_ms_max) == (4, 120.0, 90.0)
        assert (ok.latency_ms_min, ok.upstream_ms_min, ok.upstream_ms_max) == (4.0, 3.0, 15.0)
        assert (ok.upstream_requests, ok.upstream_ms_sum, ok.response_bytes) == (3, 24.0, 400)
        sketch_of = (
            {m: getattr(ok, f"{m}_sketch") for m in MEASURES}
            if tier is rows
            else {m: hour_sketches[(200, m)].sketch for m in MEASURES}
        )
        assert sketch.decode(sketch_of["latency"]) == {
            sketch_index(4.0): 1,
            sketch_index(6.0): 1,
            sketch_index(20.0): 1,
            sketch_index(90.0): 1,
        }
        assert sketch.decode(sketch_of["response"]) == {sketch_index(100): 4}
        assert sum(sketch.decode(sketch_of["upstream"]).values()) == 3
        assert (ok.app_id, ok.product_id, ok.developer_id) == ("app-1", "prod-1", "dev-1")
        assert (ok.api_name, ok.route_name, ok.api_path, ok.upstream_path) == (
            "orders",
            "list",
            "/orders",
            "/v1/orders",
        )
        assert (ok.app_name, ok.developer_email, ok.product_name) == (
            "Mobile (renamed)",  # the latest name
            "dev@example.com",
            "Gold",
        )
        assert ok.env_name == "prod"
        assert ok.org_id == world.org.id
        assert tier[429].requests == 2
    assert hours[200].hour.isoformat() == MINUTE
    assert hour_sketches[(200, "upstream")].count == 3
    assert hour_sketches[(200, "latency")].count == 4
    assert hour_sketches[(200, "latency")].api_name == "orders"  # what queries group by
    assert hour_sketches[(200, "latency")].sketch.count(":") == 2  # packed: merges fast
    assert [(loss.node_id, loss.dropped) for loss in losses] == [("node-b", 7)]


async def test_an_older_nodes_batch_is_taken_with_its_latency_histogram(
    world: World, database: Database
) -> None:
    token = await node_token(world)
    old = {
        "minute": MINUTE,
        "apiId": "api-1",
        "routeId": "rev:0",
        "consumer": "",
        "method": "GET",
        "status": 200,
        "requests": 3,
        "latencyMsSum": 30.0,
        "latencyMsMax": 20.0,
        "upstreamRequests": 3,
        "upstreamMsSum": 24.0,
        "requestBytes": 0,
        "responseBytes": 300,
        "latencyBuckets": [1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0],
    }
    batch = {"nodeId": "old", "environmentId": world.env_id, "rollups": [old]}
    assert (await post(world, token, batch)).status_code == 204
    async with database.session() as session:
        (row,) = await session.scalars(select(TelemetryRollup))
    assert (row.app_id, row.app_name, row.requests) == ("", "", 3)
    assert sketch.decode(row.latency_sketch) == {
        sketch_index(5): 1,
        sketch_index(10): 1,
        sketch_index(25): 1,
    }
    assert sketch.decode(row.response_sketch) == {sketch_index(100): 3}
    assert sketch.decode(row.upstream_sketch) == {sketch_index(8.0): 3}


async def test_bad_batches_are_refused_whole_naming_the_field(
    world: World, database: Database
) -> None:
    token = await node_token(world)
    cases = [
        (rollup(latencyBuckets=[1] * 12), "/rollups/1/latencyBuckets", "must add up"),
        (rollup(latencySketch="1=2"), "/rollups/1/latencySketch", "must add up to requests"),
        (
            rollup(upstreamSketch="1=1"),
            "/rollups/1/upstreamSketch",
            "must add up to upstreamRequests",
        ),
        (rollup(latencySketch="5000=3"), "/rollups/1/latencySketch", "at most"),
        (rollup(latencySketch=None), "/rollups/1/latencySketch", "not found"),
        (rollup(latencySketch="1:3"), "/rollups/1/latencySketch", "pattern"),
        (rollup(appId="x" * 65), "/rollups/1/appId", ""),
        (rollup(minute="2026-11-22T05:00:30+00:00"), "/rollups/1/minute", "start of a minute"),
        (rollup(minute="2026-11-22T05:00:00"), "/rollups/1/minute", "time zone"),
        (rollup(status=42), "/rollups/1/status", ""),
        (rollup(requests=0), "/rollups/1/requests", ""),
        (rollup(upstreamRequests=9), "/rollups/1/upstreamRequests", "cannot exceed"),
        (rollup(method="get"), "/rollups/1/method", ""),
        (rollup(latencyMsSum=-1.0), "/rollups/1/latencyMsSum", ""),
        (rollup(extra=1), "/rollups/1/extra", ""),
    ]
    for bad, pointer, words in cases:
        body = {"nodeId": "n", "environmentId": world.env_id, "rollups": [rollup(), bad]}
        response = await post(world, token, body)
        assert response.status_code == 400, (bad, response.text)
        error = response.json()["errors"][0]
        assert error["pointer"] == pointer, response.text
        assert words in error["detail"]
    async with database.session() as session:
        assert list(await session.scalars(select(TelemetryRollup))) == []


async def test_a_node_may_only_report_for_its_environment(world: World) -> None:
    token = await node_token(world)
    other = (await world.call("POST", "/envs", {"name": "other"})).json()["id"]
    body = {"nodeId": "n", "environmentId": other, "rollups": [rollup()]}
    assert (await post(world, token, body)).status_code == 404
    unknown = {"nodeId": "n", "environmentId": str(uuid.uuid4()), "rollups": []}
    assert (await post(world, token, unknown)).status_code == 404
    assert (
        await post(world, "pdp_nope", {**body, "environmentId": world.env_id})
    ).status_code == 401
    response = await world.client.post("/api/dataplane/v1/telemetry", json=body)
    assert response.status_code == 401
