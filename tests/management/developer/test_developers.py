"""Developers over HTTP: success, bad input naming the field, unique emails, permissions,
tenancy, audit, and deleting a developer who owns apps (refused, or cascading to the apps and
their consumers with force-delete)."""

from __future__ import annotations

import uuid
from typing import Any

import httpx
import pytest
from sqlalchemy import func, select

from portico.core.db.engine import Database
from portico.management.app.models import App, AppProduct
from portico.management.consumer.models import Consumer
from portico.management.developer.models import Developer
from tests.conftest import Factory
from tests.management.conftest import World

ADA = {"firstName": "Ada", "lastName": "Lovelace", "email": "Ada@Example.com"}


async def create(world: World, **body: Any) -> httpx.Response:
    return await world.call("POST", "/developers", body)


async def developer(world: World, **body: Any) -> dict[str, Any]:
    response = await create(world, **{**ADA, **body})
    assert response.status_code == 201, response.text
    return dict(response.json())


async def version(world: World, env_id: str | None = None) -> int:
    env = env_id or world.env_id
    response = await world.client.get(
        f"/api/dataplane/v1/envs/{env}/config", headers=world.admin.headers
    )
    assert response.status_code == 200, response.text
    return int(response.json()["version"])


async def app_of(
    world: World, database: Database, developer_id: str, *, env_id: str | None = None
) -> tuple[str, str]:
    """An app of the developer owning a real consumer, subscribed to a product (the apps
    endpoints live elsewhere: the rows are written directly). Ids of the app and consumer."""
    consumer = await world.call("POST", "/consumers", {"username": f"c-{uuid.uuid4().hex[:8]}"})
    assert consumer.status_code == 201, consumer.text
    subscribed = await world.call("POST", "/products", {"name": f"p-{uuid.uuid4().hex[:8]}"})
    assert subscribed.status_code == 201, subscribed.text
    app_id = uuid.uuid4()
    async with database.session() as session, session.begin():
        session.add(
            App(
                id=app_id,
                org_id=world.org.id,
                developer_id=uuid.UUID(developer_id),
                environment_id=uuid.UUID(env_id or world.env_id),
                consumer_id=uuid.UUID(consumer.json()["id"]),
                name=f"app-{app_id.hex[:6]}",
            )
        )
        await session.flush()
        session.add(AppProduct(app_id=app_id, product_id=uuid.UUID(subscribed.json()["id"])))
    return str(app_id), str(consumer.json()["id"])


async def rows(database: Database, model: Any, ids: list[str]) -> int:
    async with database.session() as session:
        count = await session.scalar(
            select(func.count()).select_from(model).where(model.id.in_([uuid.UUID(i) for i in ids]))
        )
        return int(count or 0)


async def test_create_read_list_update_delete(world: World) -> None:
    created = await create(world, **ADA)
    assert created.status_code == 201, created.text
    body = created.json()
    assert set(body) == {
        "id",
        "orgId",
        "firstName",
        "lastName",
        "email",
        "status",
        "appCount",
        "createdAt",
        "updatedAt",
    }
    assert body["orgId"] == str(world.org.id)
    assert (body["firstName"], body["lastName"]) == ("Ada", "Lovelace")
    assert body["email"] == "ada@example.com"  # stored lower-cased
    assert body["status"] == "active" and body["appCount"] == 0

    got = await world.call("GET", f"/developers/{body['id']}")
    assert got.status_code == 200 and got.json() == body
    listed = (await world.call("GET", "/developers")).json()
    assert listed == {"items": [body], "page": 1, "size": 20, "total": 1}

    patched = await world.call(
        "PATCH",
        f"/developers/{body['id']}",
        {"lastName": "King", "status": "inactive", "email": "ADA.KING@example.com"},
    )
    assert patched.status_code == 200, patched.text
    assert patched.json()["lastName"] == "King" and patched.json()["firstName"] == "Ada"
    assert patched.json()["status"] == "inactive"
    assert patched.json()["email"] == "ada.king@example.com"
    kept = await world.call("PATCH", f"/developers/{body['id']}", {"firstName": None})
    assert kept.status_code == 200 and kept.json()["firstName"] == "Ada"

    inactive = await developer(world, email="grace@example.com", status="inactive")
    assert inactive["status"] == "inactive"

    deleted = await world.call("DELETE", f"/developers/{body['id']}")
    assert deleted.status_code == 204
    missing = await world.call("GET", f"/developers/{body['id']}")
    assert missing.status_code == 404
    assert missing.json()["detail"] == "developer not found"


async def test_listing_sorts_filters_and_rejects_unknown_parameters(
    world: World, database: Database
) -> None:
    carol = await developer(world, email="carol@example.com", lastName="Zeta")
    await developer(world, email="alice@example.com", lastName="Young", status="inactive")
    await developer(world, email="bob@example.com", lastName="Xu")
    await app_of(world, database, carol["id"])

    def emails(response: httpx.Response) -> list[str]:
        assert response.status_code == 200, response.text
        return [d["email"] for d in response.json()["items"]]

    everyone = ["alice@example.com", "bob@example.com", "carol@example.com"]
    assert emails(await world.call("GET", "/developers")) == everyone
    assert emails(await world.call("GET", "/developers?sort=-email")) == everyone[::-1]
    assert emails(await world.call("GET", "/developers?sort=lastName")) == [
        "bob@example.com",
        "alice@example.com",
        "carol@example.com",
    ]
    assert emails(await world.call("GET", "/developers?sort=-createdAt")) == [
        "bob@example.com",
        "alice@example.com",
        "carol@example.com",
    ]
    assert emails(await world.call("GET", "/developers?status=inactive")) == ["alice@example.com"]
    assert emails(await world.call("GET", "/developers?email=Carol@Example.com")) == [
        "carol@example.com"
    ]
    listed = (await world.call("GET", "/developers?email=carol@example.com")).json()
    assert listed["items"][0]["appCount"] == 1
    paged = (await world.call("GET", "/developers?size=2&page=2")).json()
    assert [d["email"] for d in paged["items"]] == ["carol@example.com"]
    assert paged["total"] == 3
    for bad in ("?colour=red", "?sort=firstName", "?size=0", "?email=%00"):
        response = await world.call("GET", "/developers" + bad)
        assert response.status_code == 400, bad


@pytest.mark.parametrize(
    ("body", "pointer", "detail"),
    [
        ({}, "/firstName", "required property 'firstName' not found"),
        ({"firstName": "A", "lastName": "B"}, "/email", "required property 'email' not found"),
        ({**ADA, "firstName": ""}, "/firstName", "$.firstName: must be at least 1 characters long"),
        ({**ADA, "firstName": "x" * 65}, "/firstName", None),
        ({**ADA, "lastName": ""}, "/lastName", None),
        (
            {**ADA, "lastName": "y" * 65},
            "/lastName",
            "$.lastName: must be at most 64 characters long",
        ),
        ({**ADA, "lastName": " Lovelace"}, "/lastName", None),
        ({**ADA, "firstName": 5}, "/firstName", "$.firstName: string expected"),
        ({**ADA, "email": "not-an-email"}, "/email", None),
        ({**ADA, "email": "a@"}, "/email", None),
        ({**ADA, "email": 5}, "/email", "$.email: string expected"),
        ({**ADA, "email": "a" * 250 + "@example.com"}, "/email", None),
        ({**ADA, "status": "banned"}, "/status", "$.status: must be one of 'active' or 'inactive'"),
        ({**ADA, "status": None}, "/status", None),
        ({**ADA, "first_name": "Ada"}, "/first_name", "property 'first_name' is not allowed"),
        ({**ADA, "appCount": 3}, "/appCount", None),
        ({**ADA, "firstName": "A\u0000"}, "/firstName", None),
    ],
)
async def test_bad_input_is_a_400_naming_the_field_and_stores_nothing(
    world: World, body: dict[str, Any], pointer: str, detail: str | None
) -> None:
    response = await world.call("POST", "/developers", body)
    assert response.status_code == 400, response.text
    assert response.headers["content-type"] == "application/problem+json"
    problem = response.json()
    assert pointer in [e["pointer"] for e in problem["errors"]], problem
    if detail is not None:
        assert problem["detail"] == detail
    assert (await world.call("GET", "/developers")).json()["total"] == 0


async def test_patch_validates_its_fields(world: World) -> None:
    created = await developer(world)
    for body, pointer in (
        ({"email": "nope"}, "/email"),
        ({"status": "gone"}, "/status"),
        ({"lastName": ""}, "/lastName"),
        ({"id": created["id"]}, "/id"),
    ):
        response = await world.call("PATCH", f"/developers/{created['id']}", body)
        assert response.status_code == 400, body
        assert pointer in [e["pointer"] for e in response.json()["errors"]], body
    assert (await world.call("GET", f"/developers/{created['id']}")).json() == created


async def test_emails_are_unique_in_the_org_whatever_their_case(
    world: World, factory: Factory
) -> None:
    first = await developer(world)
    again = await create(world, **{**ADA, "email": "ADA@example.COM"})
    assert again.status_code == 409
    assert again.json()["detail"] == "a developer with email 'ada@example.com' already exists"
    second = await developer(world, email="grace@example.com")
    taken = await world.call("PATCH", f"/developers/{second['id']}", {"email": "Ada@example.com"})
    assert taken.status_code == 409
    assert taken.json()["detail"] == "a developer with email 'ada@example.com' already exists"
    own = await world.call("PATCH", f"/developers/{first['id']}", {"email": "ADA@example.com"})
    assert own.status_code == 200
    other = await factory.org()
    other_admin = await factory.user(other, roles=("Administrator",))
    elsewhere = await world.client.post(
        f"/api/orgs/{other.id}/developers", json=ADA, headers=other_admin.headers
    )
    assert elsewhere.status_code == 201


async def test_permissions_and_tenancy(world: World, factory: Factory) -> None:
    created = await developer(world)
    base = world.base
    path = f"{base}/developers/{created['id']}"
    viewer = await factory.user(world.org, roles=("Viewer",))
    assert (await world.client.get(f"{base}/developers", headers=viewer.headers)).status_code == (
        200
    )
    assert (await world.client.get(path, headers=viewer.headers)).status_code == 200
    for method, target, body in (
        ("POST", f"{base}/developers", {**ADA, "email": "x@example.com"}),
        ("PATCH", path, {"firstName": "nope"}),
        ("DELETE", path, None),
        ("DELETE", path + "?cascade=true", None),
    ):
        denied = await world.client.request(method, target, json=body, headers=viewer.headers)
        assert denied.status_code == 403, (method, target)
        assert denied.json()["detail"] == "missing permission 'developer.manage'"
    member = await factory.user(world.org)  # no role at all
    unread = await world.client.get(f"{base}/developers", headers=member.headers)
    assert unread.status_code == 403
    assert unread.json()["detail"] == "missing permission 'developer.read'"

    other = await factory.org()
    outsider = await factory.user(other, roles=("Administrator",))
    for method in ("GET", "PATCH", "DELETE"):
        body = {} if method == "PATCH" else None
        swapped = await world.client.request(
            method,
            f"/api/orgs/{other.id}/developers/{created['id']}",
            json=body,
            headers=outsider.headers,
        )
        assert swapped.status_code == 404, method
        for suffix in (str(uuid.uuid4()), "not-a-uuid"):
            response = await world.call(method, f"/developers/{suffix}", body)
            assert response.status_code == 404, (method, suffix)
            assert response.json()["detail"] == "developer not found"
    assert (await world.client.get(f"{base}/developers", headers=outsider.headers)).status_code == (
        404
    )
    assert (await world.client.get(f"{base}/developers")).status_code == 401
    assert (await world.call("GET", f"/developers/{created['id']}")).status_code == 200


async def test_a_developer_with_apps_is_deleted_only_by_cascade(
    world: World, factory: Factory, database: Database
) -> None:
    qa_env = (await world.call("POST", "/envs", {"name": "qa"})).json()["id"]
    quiet_env = (await world.call("POST", "/envs", {"name": "quiet"})).json()["id"]
    ada = await developer(world)
    first_app, first_consumer = await app_of(world, database, ada["id"])
    second_app, second_consumer = await app_of(world, database, ada["id"], env_id=qa_env)
    grace = await developer(world, email="grace@example.com")
    kept_app, kept_consumer = await app_of(world, database, grace["id"])
    path = f"/developers/{ada['id']}"
    assert (await world.call("GET", path)).json()["appCount"] == 2

    refused = await world.call("DELETE", path)
    assert refused.status_code == 409
    assert refused.json()["detail"] == (
        "developer has 2 apps; delete or reassign them first, or delete with ?cascade=true"
    )
    one = await world.call("DELETE", f"/developers/{grace['id']}")
    assert one.status_code == 409
    assert one.json()["detail"] == (
        "developer has 1 app; delete or reassign them first, or delete with ?cascade=true"
    )
    # a publisher manages developers but may not cascade
    publisher = await factory.user(world.org, roles=("API Publisher",))
    denied = await world.client.delete(
        world.base + path + "?cascade=true", headers=publisher.headers
    )
    assert denied.status_code == 403
    assert denied.json()["detail"] == "missing permission 'force-delete'"
    plain = await world.client.delete(world.base + path, headers=publisher.headers)
    assert plain.status_code == 409
    assert await rows(database, App, [first_app, second_app]) == 2

    versions = {env: await version(world, env) for env in (world.env_id, qa_env, quiet_env)}
    cascaded = await world.call("DELETE", path + "?cascade=true")
    assert cascaded.status_code == 204, cascaded.text
    assert (await world.call("GET", path)).status_code == 404
    assert await rows(database, App, [first_app, second_app]) == 0
    assert await rows(database, Consumer, [first_consumer, second_consumer]) == 0
    async with database.session() as session:
        left = await session.scalar(
            select(func.count())
            .select_from(AppProduct)
            .where(AppProduct.app_id.in_([uuid.UUID(first_app), uuid.UUID(second_app)]))
        )
        assert left == 0
    # the other developer's app and consumer are untouched
    assert await rows(database, App, [kept_app]) == 1
    assert await rows(database, Consumer, [kept_consumer]) == 1
    consumers = (await world.call("GET", "/consumers")).json()
    assert [c["id"] for c in consumers["items"]] == [kept_consumer]
    # the environments the apps were in are published, no other
    assert await version(world) == versions[world.env_id] + 1
    assert await version(world, qa_env) == versions[qa_env] + 1
    assert await version(world, quiet_env) == versions[quiet_env]

    # without apps, cascade needs no more than a plain delete; force-delete still required
    lone = await developer(world, email="lone@example.com")
    denied = await world.client.delete(
        f"{world.base}/developers/{lone['id']}?cascade=true", headers=publisher.headers
    )
    assert denied.status_code == 403
    assert (await world.call("DELETE", f"/developers/{lone['id']}?cascade=true")).status_code == (
        204
    )
    bad = await world.call("DELETE", f"/developers/{grace['id']}?cascade=perhaps")
    assert bad.status_code == 400 and bad.json()["errors"][0]["parameter"] == "cascade"


async def test_every_change_is_audited_and_a_refused_delete_writes_nothing(
    world: World, database: Database
) -> None:
    ada = await developer(world)
    await world.call("PATCH", f"/developers/{ada['id']}", {"status": "inactive"})
    app_id, _ = await app_of(world, database, ada["id"])
    assert (await world.call("DELETE", f"/developers/{ada['id']}")).status_code == 409
    assert (await world.call("DELETE", f"/developers/{ada['id']}?cascade=true")).status_code == 204
    grace = await developer(world, email="grace@example.com")
    await world.call("DELETE", f"/developers/{grace['id']}")

    log = (await world.call("GET", "/audit-log")).json()["items"]
    mine = [e for e in log if e["entityType"] in ("developer", "app")]
    assert [(e["action"], e["entityId"]) for e in mine] == [
        ("developer.delete", grace["id"]),
        ("developer.create", grace["id"]),
        ("developer.delete", ada["id"]),
        ("app.delete", app_id),
        ("developer.update", ada["id"]),
        ("developer.create", ada["id"]),
    ]
    grace_delete, _, ada_delete, app_delete, update, create_ = mine
    assert create_["after"]["email"] == "ada@example.com" and create_["before"] is None
    assert update["before"]["status"] == "active" and update["after"]["status"] == "inactive"
    assert ada_delete["before"]["appCount"] == 1 and ada_delete["after"] is None
    assert ada_delete["summary"] == "cascade: deleted 1 app"
    assert app_delete["before"] == {
        "id": app_id,
        "name": app_delete["before"]["name"],
        "environmentId": world.env_id,
        "developerId": ada["id"],
    }
    assert app_delete["after"] is None
    assert grace_delete["before"]["email"] == "grace@example.com"
    assert grace_delete["summary"] == ""


async def test_what_gateways_hold_of_a_developer_publishes_their_apps_environments(
    world: World, database: Database
) -> None:
    other_env = (await world.call("POST", "/envs", {"name": "other"})).json()["id"]
    ada = await developer(world)
    path = f"/developers/{ada['id']}"
    start = await version(world)
    # no apps: nothing to publish
    await world.call("PATCH", path, {"status": "inactive"})
    assert await version(world) == start
    await world.call("PATCH", path, {"status": "active"})
    await app_of(world, database, ada["id"])
    start, other_start = await version(world), await version(world, other_env)
    for change in ({"status": "inactive"}, {"email": "ada.king@example.com"}, {"status": "active"}):
        before = await version(world)
        assert (await world.call("PATCH", path, change)).status_code == 200
        assert await version(world) == before + 1, change
    # names, or a status set to what it is, change nothing at the gateways
    before = await version(world)
    for change in ({"firstName": "Augusta"}, {"status": "active"}):
        assert (await world.call("PATCH", path, change)).status_code == 200
    assert await version(world) == before
    assert await version(world, other_env) == other_start
    # the status is stored as set
    async with database.session() as session:
        stored = await session.get(Developer, uuid.UUID(ada["id"]))
        assert stored is not None and stored.status == "active"
