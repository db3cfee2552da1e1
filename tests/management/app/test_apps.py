"""Apps over HTTP: a developer's credential set in one environment, owning one consumer,
subscribed to products; what the environment's snapshot carries of it; and the quota it buys,
enforced on real traffic by a gateway fed the snapshot the control plane published."""

from __future__ import annotations

import uuid
from typing import Any

import httpx

from portico.core.db.engine import Database
from portico.gateway.gateway import Gateway
from portico.management.consumer.models import Consumer
from tests.conftest import Factory
from tests.gateway.test_pipeline import running
from tests.management.conftest import World, route


async def developer(world: World, email: str, status: str = "active") -> str:
    """A developer, created as a user would (POST /developers)."""
    body = {"firstName": "Ada", "lastName": "Lovelace", "email": email, "status": status}
    created = await world.call("POST", "/developers", body)
    assert created.status_code == 201, created.text
    return str(created.json()["id"])


async def product(
    world: World,
    name: str,
    api_ids: list[str],
    quota: dict[str, Any] | None,
    deployed: bool = True,
) -> str:
    """A product (POST /products), deployed in the world's environment unless told not to."""
    body: dict[str, Any] = {"name": name, "apiIds": api_ids}
    if quota is not None:
        body["quota"] = quota
    created = await world.call("POST", "/products", body)
    assert created.status_code == 201, created.text
    product_id = str(created.json()["id"])
    if deployed:
        answer = await world.call("POST", f"/envs/{world.env_id}/products/{product_id}/deploy")
        assert answer.status_code == 200, answer.text
    return product_id


def per_minute(limit: int) -> dict[str, Any]:
    return {"limit": limit, "interval": 1, "interval_unit": "minute", "key_scope": "app"}


async def create_app(world: World, dev: str, **body: Any) -> httpx.Response:
    return await world.call("POST", f"/developers/{dev}/envs/{world.env_id}/apps", body)


async def config(world: World) -> dict[str, Any]:
    answer = await world.config()
    assert answer.status_code == 200, answer.text
    return dict(answer.json())


async def test_create_generates_the_key_once_and_the_snapshot_carries_the_app(
    world: World, database: Database
) -> None:
    dev = await developer(world, "ada@example.com")
    api_id = (await world.call("POST", "/apis", {"name": "orders"})).json()["id"]
    p1 = await product(world, "gold", [api_id], per_minute(5))
    p2 = await product(world, "silver", [api_id], per_minute(9))
    created = await create_app(world, dev, name="mobile", products={p2: 2, p1: 1})
    assert created.status_code == 201, created.text
    body = created.json()
    key = body["generatedCredentials"]["key-auth"]["key"]
    assert len(key) >= 40
    assert body["products"] == {p1: 1, p2: 2}
    assert body["status"] == "active" and body["developerId"] == dev
    assert body["credentials"] == {"key-auth": {"keyHint": key[:4]}}
    again = await world.call("GET", f"/apps/{body['id']}")
    assert again.status_code == 200 and "generatedCredentials" not in again.json()
    assert key not in again.text
    listed = await world.call("GET", f"/developers/{dev}/envs/{world.env_id}/apps")
    assert [a["name"] for a in listed.json()["items"]] == ["mobile"]

    document = await config(world)
    [consumer] = [c for c in document["consumers"] if c["app"]]
    assert consumer["id"] == body["consumerId"]
    assert consumer["app"] == {
        "id": body["id"],
        "name": "mobile",
        "developer_id": dev,
        "developer_email": "ada@example.com",
        "product_ids": [p1, p2],  # lowest rank first
    }
    assert sorted(p["name"] for p in document["products"]) == ["gold", "silver"]
    # the consumer it owns is not changed behind its back
    owned = await world.call("DELETE", f"/consumers/{body['consumerId']}")
    assert owned.status_code == 409 and "belongs to app 'mobile'" in owned.json()["detail"]


async def test_generated_basic_and_jwt_credentials(world: World, database: Database) -> None:
    dev = await developer(world, "bob@example.com")
    created = await create_app(
        world, dev, name="server", plugins={"basic-auth": {}, "jwt-auth": {}}
    )
    assert created.status_code == 201, created.text
    generated = created.json()["generatedCredentials"]
    assert set(generated["basic-auth"]) == {"username", "password"}
    assert set(generated["jwt-auth"]) == {"key", "secret"}
    assert (
        generated["basic-auth"]["password"]
        not in (await world.call("GET", f"/apps/{created.json()['id']}")).text
    )


async def test_bad_input_is_refused_naming_the_field(world: World, database: Database) -> None:
    dev = await developer(world, "c@example.com")
    unknown = str(uuid.uuid4())
    answer = await create_app(world, dev, name="x", products={unknown: 1})
    assert answer.status_code == 400
    assert answer.json()["errors"] == [
        {"pointer": f"/products/{unknown}", "detail": "unknown product"}
    ]
    answer = await create_app(world, dev, name="x", products={"not-a-uuid": 1})
    assert (
        answer.status_code == 400
        and answer.json()["errors"][0]["pointer"] == "/products/not-a-uuid"
    )
    answer = await create_app(world, dev, name="x", products={unknown: -1})
    assert answer.status_code == 400
    answer = await create_app(world, dev, name="", products={})
    assert answer.status_code == 400 and answer.json()["errors"][0]["pointer"] == "/name"
    answer = await create_app(world, dev, name="x", surprise=1)
    assert answer.status_code == 400
    answer = await create_app(world, dev, name="x", plugins={"key-auth": {"key": ""}})
    assert answer.status_code == 400
    assert answer.json()["errors"][0]["pointer"].startswith("/plugins/key-auth")
    assert (await create_app(world, str(uuid.uuid4()), name="x")).status_code == 404
    assert (await create_app(world, "nope", name="x")).status_code == 404
    first = await create_app(world, dev, name="dup")
    assert first.status_code == 201
    second = await create_app(world, dev, name="dup")
    assert second.status_code == 409


async def test_reassign_revoke_and_delete(world: World, database: Database) -> None:
    ada = await developer(world, "ada@example.com")
    bob = await developer(world, "bob@example.com")
    created = (await create_app(world, ada, name="web")).json()
    app_path = f"/apps/{created['id']}"
    moved = await world.call("PATCH", app_path, {"developerId": bob})
    assert moved.status_code == 200 and moved.json()["developerId"] == bob
    document = await config(world)
    [entry] = [c for c in document["consumers"] if c["app"]]
    assert entry["app"]["developer_email"] == "bob@example.com"
    revoked = await world.call("PATCH", app_path, {"status": "revoked"})
    assert revoked.status_code == 200 and revoked.json()["status"] == "revoked"
    assert not [c for c in (await config(world))["consumers"] if c["id"] == created["consumerId"]]
    assert (
        await world.call("PATCH", app_path, {"developerId": str(uuid.uuid4())})
    ).status_code == 404
    assert (await world.call("DELETE", app_path)).status_code == 204
    assert (await world.call("GET", app_path)).status_code == 404
    async with database.session() as session:
        assert await session.get(Consumer, uuid.UUID(created["consumerId"])) is None
    log = (await world.call("GET", "/audit-log")).json()["items"]
    actions = [e["action"] for e in log if e["entityType"] == "app"]
    assert actions[:4] == ["app.delete", "app.update", "app.update", "app.create"]


async def test_inactive_developer_and_other_environment_cut_access(
    world: World, database: Database
) -> None:
    idle = await developer(world, "idle@example.com", status="inactive")
    await create_app(world, idle, name="dormant")
    other_env = await world.call(
        "POST", "/envs", {"name": "stage", "gatewayHosts": ["s.example.com"]}
    )
    busy = await developer(world, "busy@example.com")
    elsewhere = await world.call(
        "POST", f"/developers/{busy}/envs/{other_env.json()['id']}/apps", {"name": "staged"}
    )
    assert elsewhere.status_code == 201
    assert not [c for c in (await config(world))["consumers"] if c["username"].startswith("app-")]


async def test_permissions(world: World, database: Database, factory: Factory) -> None:
    dev = await developer(world, "p@example.com")
    viewer = await factory.user(world.org, roles=("Viewer",))
    url = f"/api/orgs/{world.org.id}/developers/{dev}/envs/{world.env_id}/apps"
    listed = await world.client.get(url, headers=viewer.headers)
    assert listed.status_code == 200
    refused = await world.client.post(url, json={"name": "x"}, headers=viewer.headers)
    assert refused.status_code == 403
    assert refused.json()["detail"] == "missing permission 'developer.manage'"


async def test_the_quota_an_app_buys_is_enforced_on_real_traffic(
    world: World, database: Database, backend: int
) -> None:
    # an API on a real backend, protected by key-auth and product-quota, deployed
    up = await world.call(
        "POST",
        f"/envs/{world.env_id}/upstreams",
        {"name": "echo", "specification": {"nodes": [{"host": "127.0.0.1", "port": backend}]}},
    )
    api = await world.call("POST", "/apis", {"name": "orders"})
    api_id = api.json()["id"]
    revision = await world.call(
        "POST",
        f"/apis/{api_id}/revisions",
        {
            "serviceSpec": {"name": "orders", "plugins": {"key-auth": {}, "product-quota": {}}},
            "routeSpec": [route("/orders")],
            "environmentUpstreams": [
                {"environmentId": world.env_id, "upstreamId": up.json()["id"]}
            ],
        },
    )
    deployed = await world.deploy({"api": api_id, "revision": revision.json()["id"]})
    assert deployed.status_code == 200, deployed.text
    dev = await developer(world, "ada@example.com")
    small = await product(world, "small", [api_id], per_minute(5))
    large = await product(world, "large", [api_id], per_minute(1000))
    a = (await create_app(world, dev, name="a", products={small: 1})).json()
    b = (await create_app(world, dev, name="b", products={large: 1})).json()
    key_a = a["generatedCredentials"]["key-auth"]["key"]
    key_b = b["generatedCredentials"]["key-auth"]["key"]

    # the gateway's clock stands at the top of a minute, so all calls share one window
    gw = Gateway(now=lambda: 1_800_000_000.0)
    await gw.apply(await config(world))
    async with running(gw) as client:
        statuses = [
            (await client.get("/orders", headers={"apikey": key_a})).status_code for _ in range(6)
        ]
        refused = await client.get("/orders", headers={"apikey": key_a})
        others = [
            (await client.get("/orders", headers={"apikey": key_b})).status_code for _ in range(8)
        ]
    assert statuses == [200] * 5 + [429]
    assert refused.status_code == 429 and refused.content == b'{"error":"quota exceeded"}'
    assert others == [200] * 8


async def test_an_app_plugin_is_checked_as_the_gateway_checks_it(
    world: World, database: Database
) -> None:
    dev = await developer(world, "w@example.com")
    answer = await create_app(world, dev, name="x", plugins={"key-auth": {}, "waf": {"host": "w"}})
    assert answer.status_code == 400, answer.text
    assert answer.json()["detail"] == (
        'failed to check the configuration of plugin waf: property "port" is required'
    )
