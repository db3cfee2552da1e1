"""``POST /api/dataplane/v1/telemetry``: rollups from nodes are added up per key, lost records
are counted, bad batches are refused whole."""

from __future__ import annotations

import uuid
from typing import Any

from sqlalchemy import select

from portico.core.db.engine import Database
from portico.management.telemetry.models import TelemetryLoss, TelemetryRollup
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
        "requests": 3,
        "latencyMsSum": 30.0,
        "latencyMsMax": 20.0,
        "upstreamRequests": 3,
        "upstreamMsSum": 24.0,
        "requestBytes": 0,
        "responseBytes": 300,
        "latencyBuckets": [1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0],
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
                latencyMsMax=90.0,
                upstreamRequests=0,
                upstreamMsSum=0.0,
                latencyBuckets=[0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0],
            ),
            rollup(
                status=429,
                requests=2,
                upstreamRequests=0,
                upstreamMsSum=0.0,
                latencyBuckets=[2] + [0] * 11,
            ),
        ],
        "dropped": 7,
    }
    assert (await post(world, token, second)).status_code == 204
    async with database.session() as session:
        rows = {r.status: r for r in await session.scalars(select(TelemetryRollup))}
        losses = list(await session.scalars(select(TelemetryLoss)))
    ok = rows[200]
    assert (ok.requests, ok.latency_ms_sum, ok.latency_ms_max) == (4, 120.0, 90.0)
    assert (ok.upstream_requests, ok.upstream_ms_sum, ok.response_bytes) == (3, 24.0, 600)
    assert (ok.latency_b00, ok.latency_b01, ok.latency_b02, ok.latency_b04) == (1, 1, 1, 1)
    assert ok.org_id == world.org.id
    assert rows[429].requests == 2
    assert [(loss.node_id, loss.dropped) for loss in losses] == [("node-b", 7)]


async def test_bad_batches_are_refused_whole_naming_the_field(
    world: World, database: Database
) -> None:
    token = await node_token(world)
    cases = [
        (rollup(latencyBuckets=[1] * 12), "/rollups/1/latencyBuckets", "must add up"),
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
