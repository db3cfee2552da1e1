"""Live upstream health: gateway nodes send their health checkers' view of each upstream in
their heartbeat (``upstreamHealth``), and ``GET .../upstreams/{id}/health`` shows it per
data-plane node; ``portico serve``'s embedded gateway reports it too, as soon as a target
changes state."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest

from portico.core.clock import Clock
from portico.core.db.engine import Database
from portico.embedded import SnapshotFeeder
from portico.gateway.gateway import Gateway
from tests.management.conftest import World, route
from tests.support.ports import free_port
from tests.support.waiting import eventually

DOWN = {
    "host": "10.0.0.7",
    "port": 8080,
    "healthy": False,
    "reason": "active: 2 consecutive tcp_failures",
    "secondsInState": 12.5,
    "lastProbe": "tcp_failure (ConnectionRefusedError)",
    "probes": 9,
    "probeFailures": 4,
    "reports": 0,
}


async def _node_token(world: World) -> dict[str, str]:
    issued = await world.call("POST", f"/envs/{world.env_id}/dataplane-tokens", {"name": "n"})
    assert issued.status_code == 201, issued.text
    return {"Authorization": f"Bearer {issued.json()['token']}"}


async def _heartbeat(world: World, headers: dict[str, str], node: str, **extra: Any) -> int:
    body = {"nodeId": node, "environmentId": world.env_id, "configVersion": 1, **extra}
    answer = await world.client.post("/api/dataplane/v1/heartbeat", json=body, headers=headers)
    return answer.status_code


async def _health(world: World, upstream: str, env: str | None = None) -> httpx.Response:
    return await world.call("GET", f"/envs/{env or world.env_id}/upstreams/{upstream}/health")


async def test_each_nodes_last_report_of_the_upstream(world: World) -> None:
    node = await _node_token(world)
    report = {"upstreamId": world.upstream_id, "active": True, "passive": False}
    report |= {"probing": True, "targets": [DOWN]}
    assert await _heartbeat(world, node, "node-a", upstreamHealth=[report]) == 204
    assert await _heartbeat(world, node, "node-b") == 204  # reports no health

    health = await _health(world, world.upstream_id)
    assert health.status_code == 200, health.text
    body = health.json()
    assert (body["upstreamId"], body["environmentId"]) == (world.upstream_id, world.env_id)
    assert (body["active"], body["passive"]) == (False, False)  # what the upstream configures
    [a, b] = body["items"]
    assert (a["nodeId"], a["reported"], a["probing"], a["configVersion"]) == (
        "node-a",
        True,
        True,
        1,
    )
    assert a["targets"] == [DOWN]
    assert (b["nodeId"], b["reported"], b["targets"]) == ("node-b", False, [])

    # another upstream of the environment: not in node-a's report
    other = await world.call(
        "POST",
        f"/envs/{world.env_id}/upstreams",
        {"name": "other", "specification": {"nodes": [{"host": "10.0.0.8", "port": 80}]}},
    )
    items = (await _health(world, other.json()["id"])).json()["items"]
    assert [(i["nodeId"], i["reported"]) for i in items] == [("node-a", False), ("node-b", False)]

    # the next heartbeat replaces the report; one without health leaves none (not a stale one)
    recovered = {**DOWN, "healthy": True, "reason": "active: 2 consecutive successes"}
    assert (
        await _heartbeat(world, node, "node-a", upstreamHealth=[report | {"targets": [recovered]}])
        == 204
    )
    [a, _] = (await _health(world, world.upstream_id)).json()["items"]
    assert a["targets"] == [recovered]
    assert await _heartbeat(world, node, "node-a") == 204
    [a, _] = (await _health(world, world.upstream_id)).json()["items"]
    assert (a["reported"], a["targets"]) == (False, [])


async def test_an_upstream_of_another_environment_is_not_found(world: World) -> None:
    env = await world.call("POST", "/envs", {"name": "staging"})
    assert env.status_code == 201, env.text
    for upstream, where in (
        (world.upstream_id, env.json()["id"]),  # exists, but in prod
        ("00000000-0000-0000-0000-000000000000", world.env_id),
        ("not-a-uuid", world.env_id),
    ):
        answer = await _health(world, upstream, where)
        assert answer.status_code == 404, answer.text
        assert answer.headers["content-type"] == "application/problem+json"


@pytest.mark.parametrize(
    ("target", "pointer"),
    [
        ({**DOWN, "port": 0}, "/upstreamHealth/0/targets/0/port"),
        ({**DOWN, "healthy": "no"}, "/upstreamHealth/0/targets/0/healthy"),
        ({**DOWN, "reason": "x" * 201}, "/upstreamHealth/0/targets/0/reason"),
        ({**DOWN, "weight": 1}, "/upstreamHealth/0/targets/0/weight"),
    ],
)
async def test_a_bad_report_is_refused_naming_the_field(
    world: World, target: dict[str, Any], pointer: str
) -> None:
    node = await _node_token(world)
    good = {"upstreamId": world.upstream_id, "active": True, "passive": False, "probing": True}
    assert (
        await _heartbeat(world, node, "node-a", upstreamHealth=[good | {"targets": [DOWN]}]) == 204
    )
    body = {"nodeId": "node-a", "environmentId": world.env_id, "configVersion": 2}
    body["upstreamHealth"] = [good | {"targets": [target]}]
    answer = await world.client.post("/api/dataplane/v1/heartbeat", json=body, headers=node)
    assert answer.status_code == 400, answer.text
    assert pointer in [error["pointer"] for error in answer.json()["errors"]]
    [a] = (await _health(world, world.upstream_id)).json()["items"]
    assert (a["configVersion"], a["targets"]) == (1, [DOWN])  # nothing of it was stored


async def test_a_report_longer_than_the_bounds_is_refused(world: World) -> None:
    node = await _node_token(world)
    entry = {"upstreamId": world.upstream_id, "active": False, "passive": False}
    entry |= {"probing": False, "targets": [{**DOWN, "port": 1 + i} for i in range(1025)]}
    body = {"nodeId": "node-a", "environmentId": world.env_id, "configVersion": 1}
    answer = await world.client.post(
        "/api/dataplane/v1/heartbeat", json=body | {"upstreamHealth": [entry]}, headers=node
    )
    assert answer.status_code == 400, answer.text
    [error] = answer.json()["errors"]
    assert error["pointer"] == "/upstreamHealth/0/targets"
    assert "at most 1024 targets" in error["detail"]


@pytest.fixture
async def listening() -> AsyncIterator[int]:
    """A port that accepts connections (a target a tcp probe finds up)."""

    async def accept(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.close()

    server = await asyncio.start_server(accept, "127.0.0.1", 0)
    yield server.sockets[0].getsockname()[1]
    server.close()
    await server.wait_closed()


async def test_the_embedded_gateway_reports_a_change_of_health_at_once(
    world: World, database: Database, clock: Clock, listening: int
) -> None:
    """A deployed upstream with active tcp checks, one target up and one down: the embedded
    gateway's feeder reports the down one unhealthy as soon as its checker says so, long
    before its periodic heartbeat is due."""
    dead = free_port()  # nothing listens there
    checks = {
        "active": {
            "type": "tcp",
            "healthy": {"interval": 1},
            "unhealthy": {"interval": 1, "tcp_failures": 2},
        }
    }
    nodes = [{"host": "127.0.0.1", "port": listening}, {"host": "127.0.0.1", "port": dead}]
    upstream = await world.call(
        "POST",
        f"/envs/{world.env_id}/upstreams",
        {"name": "checked", "specification": {"nodes": nodes, "checks": checks}},
    )
    assert upstream.status_code == 201, upstream.text
    upstream_id = upstream.json()["id"]
    api = await world.call("POST", "/apis", {"name": "checked-api"})
    revision = await world.call(
        "POST",
        f"/apis/{api.json()['id']}/revisions",
        {
            "routeSpec": [route("/checked")],
            "environmentUpstreams": [{"environmentId": world.env_id, "upstreamId": upstream_id}],
        },
    )
    ids = {"api": api.json()["id"], "revision": revision.json()["id"]}
    assert (await world.deploy(ids)).status_code == 200

    gateway = Gateway()
    feeder = SnapshotFeeder(gateway, database, clock=clock, heartbeat_seconds=3600)
    try:
        await feeder.sync_once()
        await feeder.report()

        async def reported_down() -> bool:
            await feeder.report()  # writes only when something changed (not due for an hour)
            [node] = (await _health(world, upstream_id)).json()["items"]
            by_port = {t["port"]: t for t in node["targets"]}
            return node["reported"] and not by_port[dead]["healthy"]

        await eventually(reported_down, 30, interval=0.1)
        body = (await _health(world, upstream_id)).json()
        assert (body["active"], body["passive"]) == (True, False)
        [node] = body["items"]
        assert (node["nodeId"], node["probing"]) == (gateway.options.node_id, True)
        by_port = {t["port"]: t for t in node["targets"]}
        assert by_port[dead]["reason"] == "active: 2 consecutive tcp_failures"
        assert by_port[dead]["lastProbe"].startswith("tcp_failure")
        assert by_port[listening]["healthy"] is True
        assert by_port[listening]["probes"] >= 1
    finally:
        await gateway.close()
