"""Products over HTTP: success, bad input naming the field, conflicts, permissions, tenancy,
audit, deploying to environments (idempotent, each change a new config version), and
deleting a product apps subscribe to."""

from __future__ import annotations

import uuid
from typing import Any

import httpx
import pytest
from sqlalchemy import func, select

from portico.core.db.engine import Database
from portico.management.app.models import App, AppProduct
from portico.management.developer.models import Developer
from tests.conftest import Factory
from tests.management.conftest import World

QUOTA = {"limit": 100, "interval": 1, "interval_unit": "minute", "key_scope": "app"}


async def create(world: World, **body: Any) -> httpx.Response:
    return await world.call("POST", "/products", body)


async def product(world: World, name: str = "gold", **body: Any) -> dict[str, Any]:
    response = await create(world, name=name, **body)
    assert response.status_code == 201, response.text
    return dict(response.json())


async def api_id(world: World, name: str) -> str:
    response = await world.call("POST", "/apis", {"name": name})
    assert response.status_code == 201, response.text
    return str(response.json()["id"])


def deploy_path(env_id: str, product_id: str) -> str:
    return f"/envs/{env_id}/products/{product_id}/deploy"


async def version(world: World, env_id: str | None = None) -> int:
    env = env_id or world.env_id
    response = await world.client.get(
        f"/api/dataplane/v1/envs/{env}/config", headers=world.admin.headers
    )
    assert response.status_code == 200, response.text
    return int(response.json()["version"])


async def subscribe(
    world: World, database: Database, product_ids: list[str], *, env_id: str | None = None
) -> str:
    """An app of a new developer, owning a real consumer, subscribed to the products (the
    apps endpoints live elsewhere: the rows are written directly). Its id."""
    consumer = await world.call("POST", "/consumers", {"username": f"c-{uuid.uuid4().hex[:8]}"})
    assert consumer.status_code == 201, consumer.text
    async with database.session() as session, session.begin():
        developer = Developer(
            id=uuid.uuid4(),
            org_id=world.org.id,
            first_name="Ada",
            last_name="Lovelace",
            email=f"ada-{uuid.uuid4().hex[:8]}@example.com",
        )
        session.add(developer)
        await session.flush()
        app = App(
            id=uuid.uuid4(),
            org_id=world.org.id,
            developer_id=developer.id,
            environment_id=uuid.UUID(env_id or world.env_id),
            consumer_id=uuid.UUID(consumer.json()["id"]),
            name="mobile",
        )
        session.add(app)
        await session.flush()
        for rank, product_id in enumerate(product_ids):
            session.add(AppProduct(app_id=app.id, product_id=uuid.UUID(product_id), rank=rank))
    return str(app.id)


async def subscriptions(database: Database, product_id: str) -> int:
    async with database.session() as session:
        count = await session.scalar(
            select(func.count())
            .select_from(AppProduct)
            .where(AppProduct.product_id == uuid.UUID(product_id))
        )
        return int(count or 0)


async def test_create_read_list_update_delete(world: World) -> None:
    first, second = await api_id(world, "orders"), await api_id(world, "billing")
    created = await create(
        world,
        name="gold",
        displayName="Gold plan",
        description="for partners",
        apiIds=[first, second],
        quota=QUOTA,
    )
    assert created.status_code == 201, created.text
    body = created.json()
    assert set(body) == {
        "id",
        "orgId",
        "name",
        "displayName",
        "description",
        "apiIds",
        "quota",
        "environments",
        "createdAt",
        "updatedAt",
    }
    assert body["orgId"] == str(world.org.id)
    assert (body["name"], body["displayName"], body["description"]) == (
        "gold",
        "Gold plan",
        "for partners",
    )
    assert body["apiIds"] == [first, second]  # in the order sent
    assert body["quota"] == QUOTA
    assert body["environments"] == []

    got = await world.call("GET", f"/products/{body['id']}")
    assert got.status_code == 200 and got.json() == body
    listed = (await world.call("GET", "/products")).json()
    assert listed == {"items": [body], "page": 1, "size": 20, "total": 1}

    # defaults: displayName is the name, no APIs, no quota (traffic refused, not unlimited)
    bare = await product(world, "bronze")
    assert (bare["displayName"], bare["description"], bare["apiIds"], bare["quota"]) == (
        "bronze",
        "",
        [],
        None,
    )
    # key_scope defaults to app; -1 is unlimited
    unlimited = await product(
        world, "free", quota={"limit": -1, "interval": 1, "interval_unit": "day"}
    )
    assert unlimited["quota"] == {
        "limit": -1,
        "interval": 1,
        "interval_unit": "day",
        "key_scope": "app",
    }

    patched = await world.call(
        "PATCH", f"/products/{body['id']}", {"description": "partners only", "apiIds": [second]}
    )
    assert patched.status_code == 200, patched.text
    assert patched.json()["description"] == "partners only"
    assert patched.json()["apiIds"] == [second]
    assert patched.json()["quota"] == QUOTA  # untouched
    assert patched.json()["displayName"] == "Gold plan"
    developer_quota = {**QUOTA, "key_scope": "developer", "interval_unit": "month"}
    rescoped = await world.call("PATCH", f"/products/{body['id']}", {"quota": developer_quota})
    assert rescoped.json()["quota"] == developer_quota
    renamed = await world.call("PATCH", f"/products/{body['id']}", {"name": "platinum"})
    assert renamed.json()["name"] == "platinum" and renamed.json()["displayName"] == "Gold plan"
    removed = await world.call("PATCH", f"/products/{body['id']}", {"quota": None})
    assert removed.status_code == 200 and removed.json()["quota"] is None
    unchanged = await world.call("PATCH", f"/products/{body['id']}", {})
    assert unchanged.status_code == 200
    assert {k: v for k, v in unchanged.json().items() if k != "updatedAt"} == {
        k: v for k, v in removed.json().items() if k != "updatedAt"
    }

    deleted = await world.call("DELETE", f"/products/{body['id']}")
    assert deleted.status_code == 204
    missing = await world.call("GET", f"/products/{body['id']}")
    assert missing.status_code == 404
    assert missing.json()["detail"] == "product not found"


async def test_listing_sorts_filters_and_rejects_unknown_parameters(world: World) -> None:
    for name in ("b", "c", "a"):
        await product(world, name)

    def names(response: httpx.Response) -> list[str]:
        return [p["name"] for p in response.json()["items"]]

    assert names(await world.call("GET", "/products")) == ["a", "b", "c"]
    assert names(await world.call("GET", "/products?sort=-name")) == ["c", "b", "a"]
    assert names(await world.call("GET", "/products?sort=-createdAt")) == ["a", "c", "b"]
    assert names(await world.call("GET", "/products?name=b")) == ["b"]
    paged = (await world.call("GET", "/products?size=2&page=2")).json()
    assert [p["name"] for p in paged["items"]] == ["c"] and paged["total"] == 3
    for bad in ("?colour=red", "?sort=limit", "?size=0", "?name=%00"):
        response = await world.call("GET", "/products" + bad)
        assert response.status_code == 400, bad


QUOTA_ERROR = "$.quota.limit: must be at least 1, or -1 for unlimited"


@pytest.mark.parametrize(
    ("body", "pointer", "detail"),
    [
        ({}, "/name", "required property 'name' not found"),
        ({"name": 5}, "/name", "$.name: string expected"),
        ({"name": ""}, "/name", "$.name: must be at least 1 characters long"),
        ({"name": "x" * 65}, "/name", "$.name: must be at most 64 characters long"),
        ({"name": " padded"}, "/name", None),
        ({"name": "bell\u0007"}, "/name", None),
        ({"name": "a", "colour": "red"}, "/colour", "property 'colour' is not allowed"),
        ({"name": "a", "displayName": ""}, "/displayName", None),
        ({"name": "a", "displayName": "d" * 129}, "/displayName", None),
        ({"name": "a", "description": "d" * 1025}, "/description", None),
        ({"name": "a", "description": None}, "/description", None),
        ({"name": "a", "apiIds": "x"}, "/apiIds", "$.apiIds: array expected"),
        ({"name": "a", "apiIds": ["not-an-id"]}, "/apiIds/0", None),
        ({"name": "a", "apiIds": [str(uuid.uuid4()) for _ in range(101)]}, "/apiIds", None),
        ({"name": "a", "quota": 5}, "/quota", "$.quota: object expected"),
        ({"name": "a", "quota": {}}, "/quota/limit", "required property 'limit' not found"),
        ({"name": "a", "quota": {**QUOTA, "limit": 0}}, "/quota/limit", QUOTA_ERROR),
        ({"name": "a", "quota": {**QUOTA, "limit": -2}}, "/quota/limit", QUOTA_ERROR),
        ({"name": "a", "quota": {**QUOTA, "limit": "5"}}, "/quota/limit", None),
        ({"name": "a", "quota": {**QUOTA, "limit": 1.5}}, "/quota/limit", None),
        ({"name": "a", "quota": {**QUOTA, "limit": True}}, "/quota/limit", None),
        ({"name": "a", "quota": {**QUOTA, "limit": 2**63}}, "/quota/limit", None),
        ({"name": "a", "quota": {**QUOTA, "interval": 0}}, "/quota/interval", None),
        ({"name": "a", "quota": {**QUOTA, "interval": -1}}, "/quota/interval", None),
        (
            {"name": "a", "quota": {**QUOTA, "interval_unit": "week"}},
            "/quota/interval_unit",
            "$.quota.interval_unit: must be one of 'second', 'minute', 'hour', 'day' or 'month'",
        ),
        (
            {"name": "a", "quota": {"limit": 1, "interval": 1}},
            "/quota/interval_unit",
            "required property 'interval_unit' not found",
        ),
        ({"name": "a", "quota": {**QUOTA, "key_scope": "org"}}, "/quota/key_scope", None),
        (
            {"name": "a", "quota": {"limit": 1, "interval": 1, "intervalUnit": "day"}},
            "/quota/intervalUnit",
            None,
        ),
    ],
)
async def test_bad_input_is_a_400_naming_the_field_and_stores_nothing(
    world: World, body: dict[str, Any], pointer: str, detail: str | None
) -> None:
    response = await world.call("POST", "/products", body)
    assert response.status_code == 400, response.text
    assert response.headers["content-type"] == "application/problem+json"
    problem = response.json()
    assert pointer in [e["pointer"] for e in problem["errors"]], problem
    if detail is not None:
        assert problem["detail"] == detail
    assert (await world.call("GET", "/products")).json()["total"] == 0


async def test_api_ids_must_be_apis_of_the_org_each_once(world: World, factory: Factory) -> None:
    orders = await api_id(world, "orders")
    other = await factory.org()
    other_admin = await factory.user(other, roles=("Administrator",))
    foreign = await world.client.post(
        f"/api/orgs/{other.id}/apis", json={"name": "theirs"}, headers=other_admin.headers
    )
    unknown = str(uuid.uuid4())
    response = await create(world, name="p", apiIds=[orders, foreign.json()["id"], unknown])
    assert response.status_code == 400
    assert response.json()["errors"] == [
        {"pointer": "/apiIds/1", "detail": f"no api with id {foreign.json()['id']} in this org"},
        {"pointer": "/apiIds/2", "detail": f"no api with id {unknown} in this org"},
    ]
    twice = await create(world, name="p", apiIds=[orders, orders])
    assert twice.status_code == 400
    assert twice.json()["errors"] == [
        {"pointer": "/apiIds/1", "detail": f"api {orders} given twice"}
    ]
    assert (await world.call("GET", "/products")).json()["total"] == 0

    created = await product(world, "p", apiIds=[orders])
    patched = await world.call("PATCH", f"/products/{created['id']}", {"apiIds": [unknown]})
    assert patched.status_code == 400
    assert patched.json()["errors"][0]["pointer"] == "/apiIds/0"
    got = await world.call("GET", f"/products/{created['id']}")
    assert got.json()["apiIds"] == [orders]


async def test_patch_validates_every_field_and_null_only_clears_the_quota(world: World) -> None:
    created = await product(world, "p", quota=QUOTA)
    path = f"/products/{created['id']}"
    for body, pointer in (
        ({"name": ""}, "/name"),
        ({"quota": {**QUOTA, "limit": 0}}, "/quota/limit"),
        ({"quota": {**QUOTA, "interval_unit": "fortnight"}}, "/quota/interval_unit"),
        ({"id": created["id"]}, "/id"),
        ({"environments": []}, "/environments"),
    ):
        response = await world.call("PATCH", path, body)
        assert response.status_code == 400, body
        assert pointer in [e["pointer"] for e in response.json()["errors"]], body
    # null for any other field leaves it as it is
    kept = await world.call("PATCH", path, {"name": None, "description": None})
    assert kept.status_code == 200
    assert kept.json()["name"] == "p" and kept.json()["quota"] == QUOTA


async def test_names_are_unique_in_the_org(world: World, factory: Factory) -> None:
    first = await product(world, "gold")
    again = await create(world, name="gold")
    assert again.status_code == 409
    assert again.json()["detail"] == "a product named 'gold' already exists"
    second = await product(world, "silver")
    renamed = await world.call("PATCH", f"/products/{second['id']}", {"name": "gold"})
    assert renamed.status_code == 409
    assert renamed.json()["detail"] == "a product named 'gold' already exists"
    # its own name is no conflict
    own = await world.call("PATCH", f"/products/{first['id']}", {"name": "gold"})
    assert own.status_code == 200
    other = await factory.org()
    other_admin = await factory.user(other, roles=("Administrator",))
    elsewhere = await world.client.post(
        f"/api/orgs/{other.id}/products", json={"name": "gold"}, headers=other_admin.headers
    )
    assert elsewhere.status_code == 201


async def test_permissions_and_tenancy(world: World, factory: Factory) -> None:
    created = await product(world, "gold")
    base = world.base
    path = f"{base}/products/{created['id']}"
    deploy = base + deploy_path(world.env_id, created["id"])
    viewer = await factory.user(world.org, roles=("Viewer",))
    for target in (f"{base}/products", path, f"{base}/envs/{world.env_id}/products"):
        assert (await world.client.get(target, headers=viewer.headers)).status_code == 200
    for method, target, body in (
        ("POST", f"{base}/products", {"name": "nope"}),
        ("PATCH", path, {"description": "nope"}),
        ("DELETE", path, None),
        ("POST", deploy, None),
        ("DELETE", deploy, None),
    ):
        denied = await world.client.request(method, target, json=body, headers=viewer.headers)
        assert denied.status_code == 403, (method, target)
        assert denied.json()["detail"] == "missing permission 'product.manage'"
    member = await factory.user(world.org)  # no role at all
    for target in (f"{base}/products", path, f"{base}/envs/{world.env_id}/products"):
        unread = await world.client.get(target, headers=member.headers)
        assert unread.status_code == 403
        assert unread.json()["detail"] == "missing permission 'product.read'"
    publisher = await factory.user(world.org, roles=("API Publisher",))
    allowed = await world.client.post(deploy, headers=publisher.headers)
    assert allowed.status_code == 200, allowed.text

    other = await factory.org()
    outsider = await factory.user(other, roles=("Administrator",))
    other_env = await world.client.post(
        f"/api/orgs/{other.id}/envs", json={"name": "theirs"}, headers=outsider.headers
    )
    for method in ("GET", "PATCH", "DELETE"):
        body = {} if method == "PATCH" else None
        swapped = await world.client.request(
            method,
            f"/api/orgs/{other.id}/products/{created['id']}",
            json=body,
            headers=outsider.headers,
        )
        assert swapped.status_code == 404, method
        for suffix in (str(uuid.uuid4()), "not-a-uuid"):
            response = await world.call(method, f"/products/{suffix}", body)
            assert response.status_code == 404, (method, suffix)
            assert response.json()["detail"] == "product not found"
    for method in ("POST", "DELETE"):
        for env_id, product_id, detail in (
            (other_env.json()["id"], created["id"], "environment not found"),
            (str(uuid.uuid4()), created["id"], "environment not found"),
            ("not-a-uuid", created["id"], "environment not found"),
            (world.env_id, str(uuid.uuid4()), "product not found"),
            (world.env_id, "not-a-uuid", "product not found"),
        ):
            response = await world.call(method, deploy_path(env_id, product_id))
            assert response.status_code == 404, (method, env_id, product_id)
            assert response.json()["detail"] == detail
        # another org's product, deployed to this org's environment: not found
        theirs = await world.client.post(
            f"/api/orgs/{other.id}/products", json={"name": f"t-{method}"}, headers=outsider.headers
        )
        response = await world.call(method, deploy_path(world.env_id, theirs.json()["id"]))
        assert response.status_code == 404 and response.json()["detail"] == "product not found"
    for env_id in (other_env.json()["id"], str(uuid.uuid4()), "not-a-uuid"):
        listed = await world.call("GET", f"/envs/{env_id}/products")
        assert listed.status_code == 404 and listed.json()["detail"] == "environment not found"
    assert (await world.client.get(f"{base}/products", headers=outsider.headers)).status_code == (
        404
    )
    assert (await world.client.get(f"{base}/products")).status_code == 401


async def test_deploy_is_idempotent_and_publishes_each_change(world: World) -> None:
    orders = await api_id(world, "orders")
    created = await product(world, "gold", apiIds=[orders], quota=QUOTA)
    path = deploy_path(world.env_id, created["id"])
    start = await version(world)

    deployed = await world.call("POST", path)
    assert deployed.status_code == 200, deployed.text
    assert set(deployed.json()) == {"productId", "environmentId", "deployedAt"}
    assert deployed.json()["productId"] == created["id"]
    assert deployed.json()["environmentId"] == world.env_id
    assert await version(world) == start + 1
    again = await world.call("POST", path)
    assert again.status_code == 200 and again.json() == deployed.json()
    assert await version(world) == start + 1  # nothing changed: nothing published

    got = (await world.call("GET", f"/products/{created['id']}")).json()
    assert got["environments"] == [world.env_id]
    listed = (await world.call("GET", f"/envs/{world.env_id}/products")).json()
    assert listed["total"] == 1 and listed["items"] == [got]
    assert (await world.call("GET", f"/envs/{world.env_id}/products?name=other")).json()[
        "total"
    ] == 0

    product_path = f"/products/{created['id']}"
    # what gateways enforce: name, APIs, quota
    for change in (
        {"name": "platinum"},
        {"apiIds": []},
        {"quota": {**QUOTA, "limit": 5}},
        {"quota": None},
    ):
        before = await version(world)
        assert (await world.call("PATCH", product_path, change)).status_code == 200
        assert await version(world) == before + 1, change
    # what they do not hold, or a change to the same values: no new version
    before = await version(world)
    for change in ({"description": "d"}, {"displayName": "Platinum"}, {"name": "platinum"}):
        assert (await world.call("PATCH", product_path, change)).status_code == 200
    assert await version(world) == before

    undeployed = await world.call("DELETE", path)
    assert undeployed.status_code == 204
    assert await version(world) == before + 1
    assert (await world.call("GET", product_path)).json()["environments"] == []
    assert (await world.call("GET", f"/envs/{world.env_id}/products")).json()["total"] == 0
    gone = await world.call("DELETE", path)
    assert gone.status_code == 404
    assert gone.json()["detail"] == "product is not deployed in this environment"
    # a product deployed nowhere changes without publishing anything
    await world.call("PATCH", product_path, {"quota": QUOTA})
    assert await version(world) == before + 1

    # a second deploy after an undeploy is a new deployment
    redeployed = await world.call("POST", path)
    assert redeployed.status_code == 200
    assert await version(world) == before + 2


async def test_a_product_is_deployed_per_environment(world: World) -> None:
    test_env = (await world.call("POST", "/envs", {"name": "test"})).json()["id"]
    created = await product(world, "gold")
    prod_start, test_start = await version(world), await version(world, test_env)
    assert (await world.call("POST", deploy_path(test_env, created["id"]))).status_code == 200
    assert await version(world, test_env) == test_start + 1
    assert await version(world) == prod_start
    assert (await world.call("POST", deploy_path(world.env_id, created["id"]))).status_code == 200
    got = (await world.call("GET", f"/products/{created['id']}")).json()
    assert got["environments"] == sorted([world.env_id, test_env])
    # a change reaches every environment it is deployed in
    await world.call("PATCH", f"/products/{created['id']}", {"quota": QUOTA})
    assert await version(world) == prod_start + 2
    assert await version(world, test_env) == test_start + 2
    # deleting it publishes each of them too
    assert (await world.call("DELETE", f"/products/{created['id']}")).status_code == 204
    assert await version(world) == prod_start + 3
    assert await version(world, test_env) == test_start + 3
    assert (await world.call("GET", f"/envs/{test_env}/products")).json()["total"] == 0


async def test_deleting_a_product_apps_use_needs_force(world: World, database: Database) -> None:
    qa_env = (await world.call("POST", "/envs", {"name": "qa"})).json()["id"]
    gold = await product(world, "gold", quota=QUOTA)
    silver = await product(world, "silver")
    app = await subscribe(world, database, [gold["id"], silver["id"]], env_id=qa_env)
    await subscribe(world, database, [gold["id"]])
    path = f"/products/{gold['id']}"

    refused = await world.call("DELETE", path)
    assert refused.status_code == 409
    assert refused.json()["detail"] == "product is used by 2 apps"
    assert (await world.call("GET", path)).status_code == 200
    assert await subscriptions(database, gold["id"]) == 2
    one = await world.call("DELETE", f"/products/{silver['id']}")
    assert one.status_code == 409 and one.json()["detail"] == "product is used by 1 app"
    bad = await world.call("DELETE", path + "?force=maybe")
    assert bad.status_code == 400 and bad.json()["errors"][0]["parameter"] == "force"
    assert await subscriptions(database, gold["id"]) == 2

    prod_start, qa_start = await version(world), await version(world, qa_env)
    forced = await world.call("DELETE", path + "?force=true")
    assert forced.status_code == 204, forced.text
    assert (await world.call("GET", path)).status_code == 404
    assert await subscriptions(database, gold["id"]) == 0
    # the apps' environments are published; the apps and their other products remain
    assert await version(world) == prod_start + 1
    assert await version(world, qa_env) == qa_start + 1
    assert await subscriptions(database, silver["id"]) == 1
    async with database.session() as session:
        assert await session.get(App, uuid.UUID(app)) is not None

    # a product nobody uses needs no force, and force changes nothing then
    lone = await product(world, "lone")
    assert (await world.call("DELETE", f"/products/{lone['id']}?force=true")).status_code == 204
    assert (await world.call("DELETE", f"/products/{lone['id']}")).status_code == 404


async def test_every_change_is_audited(world: World, database: Database) -> None:
    created = await product(world, "gold", quota=QUOTA)
    path = f"/products/{created['id']}"
    await world.call("PATCH", path, {"quota": None})
    deployed = (await world.call("POST", deploy_path(world.env_id, created["id"]))).json()
    await world.call("POST", deploy_path(world.env_id, created["id"]))  # idempotent: no entry
    await world.call("DELETE", deploy_path(world.env_id, created["id"]))
    await world.call("POST", deploy_path(world.env_id, created["id"]))
    await subscribe(world, database, [created["id"]])
    assert (await world.call("DELETE", path)).status_code == 409  # refused: no entry
    await world.call("DELETE", path + "?force=true")

    log = (await world.call("GET", "/audit-log?entityType=product")).json()
    entries = [e for e in log["items"] if e["entityId"] == created["id"]]
    assert [e["action"] for e in entries] == [
        "product.delete",
        "product.deploy",
        "product.undeploy",
        "product.deploy",
        "product.update",
        "product.create",
    ]
    delete, redeploy, undeploy, deploy, update, create_ = entries
    assert create_["before"] is None and create_["after"]["name"] == "gold"
    assert create_["after"]["quota"] == QUOTA
    assert update["before"]["quota"] == QUOTA and update["after"]["quota"] is None
    assert deploy["after"] == deployed and deploy["before"] is None
    assert undeploy["before"] == deployed and undeploy["after"] is None
    assert delete["before"]["name"] == "gold" and delete["after"] is None
    assert delete["before"]["environments"] == [world.env_id]
    assert delete["summary"] == "forced: unsubscribed 1 app"
    assert redeploy["after"]["environmentId"] == world.env_id
    assert create_["actor"]["email"] == world.admin.email


async def test_quota_key_scope_is_the_seed_s_name_of_quota_key_scope(world: World) -> None:
    per_minute = {k: v for k, v in QUOTA.items() if k != "key_scope"}
    made = await product(world, quota=per_minute, quota_key_scope="developer")
    assert made["quota"]["key_scope"] == "developer"
    agreeing = await product(world, "silver", quota=QUOTA, quota_key_scope="app")
    assert agreeing["quota"]["key_scope"] == "app"
    changed = await world.call("PATCH", f"/products/{made['id']}", {"quota_key_scope": "app"})
    assert changed.status_code == 200, changed.text
    assert changed.json()["quota"] == {**per_minute, "key_scope": "app"}

    for body, pointer, detail in (
        (
            {"name": "x", "quota": QUOTA, "quota_key_scope": "developer"},
            "/quota_key_scope",
            "$.quota_key_scope: 'developer' disagrees with quota.key_scope 'app'; give one",
        ),
        (
            {"name": "x", "quota_key_scope": "app"},
            "/quota_key_scope",
            "$.quota_key_scope: needs a quota",
        ),
        (
            {"name": "x", "quota": per_minute, "quota_key_scope": "team"},
            "/quota_key_scope",
            None,
        ),
    ):
        refused = await create(world, **body)
        assert refused.status_code == 400, refused.text
        assert refused.json()["errors"][0]["pointer"] == pointer
        if detail is not None:
            assert refused.json()["errors"][0]["detail"] == detail
    bare = await product(world, "bronze")
    refused = await world.call("PATCH", f"/products/{bare['id']}", {"quota_key_scope": "app"})
    assert refused.status_code == 400, refused.text
    assert refused.json()["errors"] == [
        {"pointer": "/quota_key_scope", "detail": "$.quota_key_scope: needs a quota"}
    ]
