"""``portico serve``'s embedded gateway is one of each environment's data-plane nodes: the
feeder that gives it its snapshots reports it as a standalone node's heartbeat does
(embedded.py), at once for a new config version and every ``heartbeat_seconds`` else."""

from __future__ import annotations

from datetime import timedelta

import httpx

from portico.core.clock import Clock
from portico.core.db.engine import Database
from portico.embedded import SnapshotFeeder
from portico.gateway.gateway import Gateway
from tests.conftest import Account, Org

ADDRESS = "127.0.0.1:9080"


async def _nodes(client: httpx.AsyncClient, org: Org, admin: Account, env: str) -> list[dict]:  # type: ignore[type-arg]
    listed = await client.get(f"/api/orgs/{org.id}/envs/{env}/nodes", headers=admin.headers)
    assert listed.status_code == 200, listed.text
    return list(listed.json()["items"])


async def test_the_embedded_gateway_reports_each_environment_it_runs(
    client: httpx.AsyncClient, org: Org, admin: Account, database: Database, clock: Clock
) -> None:
    created = await client.post(
        f"/api/orgs/{org.id}/envs", json={"name": "prod"}, headers=admin.headers
    )
    env = created.json()["id"]
    gateway = Gateway()
    feeder = SnapshotFeeder(gateway, database, clock=clock, address=ADDRESS, heartbeat_seconds=3600)
    assert await _nodes(client, org, admin, env) == []

    await feeder.sync_once()
    await feeder.report()
    [node] = await _nodes(client, org, admin, env)
    assert node["nodeId"] == gateway.options.node_id
    assert (node["address"], node["configVersion"], node["inSync"]) == (ADDRESS, 1, True)

    # a new version is reported at once, with the same node
    patched = await client.patch(
        f"/api/orgs/{org.id}/envs/{env}",
        json={"gatewayHosts": ["api.example.com"]},
        headers=admin.headers,
    )
    assert patched.status_code == 200, patched.text
    await feeder.sync_once()
    await feeder.report()
    [node] = await _nodes(client, org, admin, env)
    assert (node["configVersion"], node["inSync"]) == (2, True)

    # nothing new and not due: no write (the heartbeat's time stays); due: written again
    seen = node["lastSeenAt"]
    clock.advance(timedelta(seconds=30))
    await feeder.report()
    assert (await _nodes(client, org, admin, env))[0]["lastSeenAt"] == seen
    feeder.heartbeat_seconds = 0
    await feeder.report()
    assert (await _nodes(client, org, admin, env))[0]["lastSeenAt"] > seen
