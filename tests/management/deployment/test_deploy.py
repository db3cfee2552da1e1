"""Deploy, dry-run, undeploy and the environment snapshots they produce."""

from __future__ import annotations

import asyncio
import uuid

from sqlalchemy import update

from portico.core.db.engine import Database
from portico.management.dataplane.notifier import NOTIFIER
from portico.management.revision.models import Revision
from tests.management.conftest import World, route
from tests.support.waiting import eventually


async def test_deploy_publishes_a_snapshot_with_effective_plugins(world: World) -> None:
    ids = await world.api(
        "pets",
        [
            route("/pets", ["GET", "POST"], plugins={"key-auth": {"header": "x-key"}}),
            route("/pets/:id", plugins={"limit-count": {"count": 10, "time_window": 60}}),
        ],
        plugins={"key-auth": {}, "cors": {}},
    )
    before = (await world.config()).json()
    dry = await world.dry_run(ids)
    assert dry.status_code == 200, dry.text
    assert dry.json() == {
        "success": True,
        "message": dry.json()["message"],
        "warnings": [],
        "routes": 2,
    }
    assert (await world.config()).json()["version"] == before["version"]  # dry-run changed nothing

    deployed = await world.deploy(ids)
    assert deployed.status_code == 200, deployed.text
    body = deployed.json()
    assert body["status"] == "DEPLOYED"
    assert body["configVersion"] == before["version"] + 1
    assert body["environmentId"] == world.env_id

    config = await world.config()
    assert config.status_code == 200
    snapshot = config.json()
    assert config.headers["etag"] == f'"{snapshot["content_hash"]}"'
    assert snapshot["version"] == body["configVersion"]
    assert snapshot["gateway_hosts"] == ["api.example.com"]
    by_uri = {r["uri"]: r for r in snapshot["routes"]}
    assert set(by_uri) == {"/pets", "/pets/:id"}
    pets = {p["name"]: p for p in by_uri["/pets"]["plugins"]}
    # the route's key-auth REPLACES the service's (no merge): its header, not the default
    assert pets["key-auth"]["scope"] == "route"
    assert pets["key-auth"]["config"]["header"] == "x-key"
    assert pets["cors"]["scope"] == "service"
    item = {p["name"]: p for p in by_uri["/pets/:id"]["plugins"]}
    assert item["key-auth"]["scope"] == "service"
    assert item["key-auth"]["config"]["header"] == "apikey"  # defaults filled in
    assert [p["name"] for p in by_uri["/pets/:id"]["plugins"]] == [
        "cors",
        "key-auth",
        "limit-count",
    ]  # by order: security 30, authentication 100, traffic 210
    assert set(snapshot["upstreams"]) == {world.upstream_id}
    assert by_uri["/pets"]["api_name"] == "pets"

    revision = (await world.call("GET", world.revision_path(ids))).json()
    assert revision["status"] == "ACTIVE"
    assert revision["deployedTo"] == [world.env_id]
    edit = await world.call(
        "PUT", world.revision_path(ids) + "/route-spec", {"routeSpec": [route("/x")]}
    )
    assert edit.status_code == 409
    assert edit.json()["detail"] == "Only INACTIVE revisions can be updated"

    listed = (await world.call("GET", f"/apis/{ids['api']}/deployments")).json()
    assert [d["revisionId"] for d in listed["items"]] == [ids["revision"]]
    env = (await world.call("GET", f"/envs/{world.env_id}")).json()
    assert [d["apiName"] for d in env["deployments"]] == ["pets"]
    assert env["configVersion"] == body["configVersion"]


async def test_deploy_checks_run_in_the_contracts_order(world: World) -> None:
    # no binding for the environment: the seed's message, on deploy and dry-run alike
    api = await world.call("POST", "/apis", {"name": "unbound"})
    unbound = {
        "api": api.json()["id"],
        "revision": await world.revision(
            api.json()["id"],
            [route("/u", plugins={"proxy-cache": {"cache_key": ["$request_method"]}})],
            bind=False,
        ),
    }
    for response in (await world.deploy(unbound), await world.dry_run(unbound)):
        assert response.status_code == 400
        assert response.json()["detail"] == "Upstream not configured for environment"

    bad_cache = await world.api(
        "cache", [route("/c", plugins={"proxy-cache": {"cache_key": ["$uri", "$request_method"]}})]
    )
    response = await world.deploy(bad_cache)
    assert response.status_code == 400
    assert response.json()["detail"] == (
        "failed to check the configuration of plugin proxy-cache: "
        "cache_key variable $request_method unsupported"
    )
    assert response.json()["errors"][0] == {
        "pointer": "/routeSpec/0/plugins/proxy-cache/cache_key",
        "detail": "cache_key variable $request_method unsupported",
    }

    loki = await world.api(
        "logs",
        [route("/l")],
        plugins={"aggregator-logger": {"endpoint_addr": "http://127.0.0.1:3100"}},
    )
    response = await world.dry_run(loki)
    assert response.status_code == 400
    assert response.json()["detail"] == (
        "failed to check the configuration of plugin aggregator-logger: "
        'property "endpoint_addrs" is required'
    )
    # plugin names are case-sensitive
    upper = await world.api("upper", [route("/k", plugins={"Key-Auth": {}})])
    response = await world.deploy(upper)
    assert response.status_code == 400
    assert "failed to check the configuration of plugin Key-Auth" in response.json()["detail"]


WAF = {"host": "waf.internal", "port": 8080}


async def test_a_route_without_plugins_is_refused_at_deploy(
    world: World, database: Database
) -> None:
    ids = await world.api("legacy", [route("/a")])
    # stored before structural validation existed (or by another tool): deploy re-checks
    async with database.session() as session, session.begin():
        await session.execute(
            update(Revision)
            .where(Revision.id == uuid.UUID(ids["revision"]))
            .values(route_spec=[{"name": "a", "uri": "/a", "methods": ["GET"]}])
        )
    response = await world.deploy(ids)
    assert response.status_code == 400
    assert response.json()["detail"] == "required property 'plugins' not found"


async def test_conflicts_with_another_api_name_both(world: World) -> None:
    first = await world.api("orders", [route("/items/:id")])
    assert (await world.deploy(first)).status_code == 200
    clash = await world.api("catalogue", [route("/items/:itemId", ["GET", "DELETE"])])
    response = await world.deploy(clash)
    assert response.status_code == 409
    detail = response.json()["detail"]
    assert "catalogue" in detail and "orders" in detail and "GET" in detail
    assert "/items/:itemId" in detail and "/items/:id" in detail
    assert (await world.dry_run(clash)).status_code == 409
    # another method, or another host, is no conflict
    other_method = await world.api("writer", [route("/items/:id", ["PUT"])])
    assert (await world.deploy(other_method)).status_code == 200
    other_host = await world.api("admin", [route("/items/:id", hosts=["admin.example.com"])])
    response = await world.deploy(other_host)
    assert response.status_code == 409  # the first route has no host: it serves every host
    scoped = await world.api("scoped", [route("/only/here", hosts=["a.example.com"])])
    assert (await world.deploy(scoped)).status_code == 200
    elsewhere = await world.api("elsewhere", [route("/only/here", hosts=["b.example.com"])])
    assert (await world.deploy(elsewhere)).status_code == 200


async def test_another_revision_live_needs_force_which_swaps(world: World) -> None:
    first = await world.api("swap", [route("/v1")])
    assert (await world.deploy(first)).status_code == 200
    second = {"api": first["api"], "revision": await world.revision(first["api"], [route("/v2")])}
    refused = await world.deploy(second)
    assert refused.status_code == 409
    assert refused.json()["detail"] == "Environment already has revision 1 deployed"
    dry = await world.dry_run(second)
    assert dry.status_code == 200
    assert any("revision 1 is live" in w for w in dry.json()["warnings"])
    swapped = await world.deploy(second, force=True)
    assert swapped.status_code == 200, swapped.text
    uris = [r["uri"] for r in (await world.config()).json()["routes"]]
    assert uris == ["/v2"]
    old = (await world.call("GET", world.revision_path(first))).json()
    assert old["status"] == "INACTIVE"
    assert len((await world.call("GET", f"/apis/{first['api']}/deployments")).json()["items"]) == 1


async def test_dry_run_warns(world: World) -> None:
    risky = await world.api(
        "risky",
        [
            route(
                "/r",
                plugins={
                    "key-auth": {"_meta": {"order": 300}},
                    "limit-count": {"count": 5, "time_window": 60},
                },
            ),
            route("/dup", ["GET"], priority=5),
            route("/dup", ["GET"]),
        ],
    )
    response = await world.dry_run(risky)
    assert response.status_code == 200, response.text
    warnings = response.json()["warnings"]
    assert any("key-auth (order 300) runs after limit-count" in w for w in warnings)
    assert any("is shadowed by" in w for w in warnings)

    idle = await world.call(
        "POST",
        f"/envs/{world.env_id}/upstreams",
        {
            "name": "idle",
            "specification": {"nodes": [{"host": "127.0.0.1", "port": 9, "weight": 0}]},
        },
    )
    api = await world.call("POST", "/apis", {"name": "idle-api"})
    revision = await world.call(
        "POST",
        f"/apis/{api.json()['id']}/revisions",
        {
            "routeSpec": [route("/idle")],
            "environmentUpstreams": [
                {"environmentId": world.env_id, "upstreamId": idle.json()["id"]}
            ],
        },
    )
    ids = {"api": api.json()["id"], "revision": revision.json()["id"]}
    warnings = (await world.dry_run(ids)).json()["warnings"]
    assert any("only nodes of weight 0" in w for w in warnings)


async def test_undeploy_removes_routes_and_frees_the_revision(world: World) -> None:
    ids = await world.api("gone", [route("/gone")])
    version = (await world.deploy(ids)).json()["configVersion"]
    undeployed = await world.call(
        "POST", world.revision_path(ids) + "/undeploy", {"environmentId": world.env_id}
    )
    assert undeployed.status_code == 200, undeployed.text
    assert undeployed.json()["configVersion"] == version + 1
    snapshot = (await world.config()).json()
    assert snapshot["routes"] == []
    assert snapshot["version"] == version + 1
    assert (await world.call("GET", world.revision_path(ids))).json()["status"] == "INACTIVE"
    again = await world.call(
        "POST", world.revision_path(ids) + "/undeploy", {"environmentId": world.env_id}
    )
    assert again.status_code == 409
    log = (await world.call("GET", "/audit-log?entityType=deployment")).json()
    assert [e["action"] for e in log["items"]] == ["deployment.undeploy", "deployment.deploy"]


async def test_long_poll_wakes_on_a_deploy_and_304s_without_one(world: World) -> None:
    current = (await world.config()).json()["version"]
    idle = await world.config(f"?since={current}&wait=1")
    assert idle.status_code == 304
    assert idle.headers["x-portico-config-version"] == str(current)

    ids = await world.api("poll", [route("/poll")])
    waiting = asyncio.create_task(world.config(f"?since={current}&wait=30"))
    await eventually(lambda: NOTIFIER.waiting(uuid.UUID(world.env_id)))
    assert not waiting.done()
    assert (await world.deploy(ids)).status_code == 200
    woke = await asyncio.wait_for(waiting, timeout=10)
    assert woke.status_code == 200
    assert woke.json()["version"] == current + 1
    # conditional GET with the current ETag
    unchanged = await world.client.get(
        f"/api/dataplane/v1/envs/{world.env_id}/config",
        headers={**world.admin.headers, "If-None-Match": woke.headers["etag"]},
    )
    assert unchanged.status_code == 304


async def test_environment_and_upstream_guard_what_is_deployed(world: World) -> None:
    ids = await world.api("guarded", [route("/g")])
    version = (await world.deploy(ids)).json()["configVersion"]
    assert (await world.call("DELETE", f"/envs/{world.env_id}")).status_code == 409
    upstream = f"/envs/{world.env_id}/upstreams/{world.upstream_id}"
    refused = await world.call("DELETE", upstream)
    assert refused.status_code == 409
    assert "guarded revision 1" in refused.json()["detail"]
    assert (await world.call("DELETE", f"/apis/{ids['api']}")).status_code == 409
    # a change of a deployed upstream reaches the gateways
    changed = await world.call(
        "PATCH",
        upstream,
        {"specification": {"nodes": [{"host": "127.0.0.2", "port": 8080}]}},
    )
    assert changed.status_code == 200
    snapshot = (await world.config()).json()
    assert snapshot["version"] == version + 1
    assert snapshot["upstreams"][world.upstream_id]["specification"]["nodes"][0]["host"] == (
        "127.0.0.2"
    )
    # and so does a change of the environment's hosts
    await world.call("PATCH", f"/envs/{world.env_id}", {"gatewayHosts": ["new.example.com"]})
    snapshot = (await world.config()).json()
    assert snapshot["gateway_hosts"] == ["new.example.com"]
    assert snapshot["version"] == version + 2


async def test_dry_run_warns_of_a_quota_nobody_can_pass(world: World) -> None:
    bare = await world.api("bare", [route("/q", plugins={"product-quota": {}})])
    guarded = await world.api(
        "guarded", [route("/g", plugins={"key-auth": {}, "product-quota": {}})]
    )
    warnings = (await world.dry_run(bare)).json()["warnings"]
    assert "route '/q': product-quota has no authentication plugin before it" in warnings[0]
    assert not [w for w in (await world.dry_run(guarded)).json()["warnings"] if "quota" in w]
