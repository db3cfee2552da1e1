"""Revisions over HTTP: create, read, list, edit specs, clone, delete; ACTIVE revisions are
immutable; numbering; permissions, tenancy, audit."""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

import httpx
from sqlalchemy import func, select

from portico.core.db.engine import Database
from portico.management.revision.models import Revision
from tests.conftest import Account, Factory, Org
from tests.management.revision.support import (
    ROUTE,
    audit_actions,
    deploy,
    make_api,
    make_env,
    make_revision,
    make_upstream,
    revisions,
    undeploy,
)

SERVICE: dict[str, Any] = {
    "name": "orders",
    "desc": "Order service",
    "plugins": {"key-auth": {"header": "X-Key"}},
    "hosts": ["api.example.com", "*.example.org"],
}
ROUTES: list[dict[str, Any]] = [
    {
        "name": "get-order",
        "uri": "/orders/:id",
        "methods": ["GET", "HEAD"],
        "hosts": ["api.example.com"],
        "plugins": {"limit-count": {"count": 5, "time_window": 60}},
        "script": "return true -- ten+",
        "service_id": "svc-1",
        "desc": "one order",
        "priority": 10,
        "status": 0,
    },
    {"uri": "/orders/*", "plugins": {}},
]
# What is stored for ROUTES: as sent, with priority and status filled in where absent.
STORED_ROUTES = [ROUTES[0], {**ROUTES[1], "priority": 0, "status": 1}]
KEYS = {
    "id",
    "apiId",
    "number",
    "status",
    "serviceSpec",
    "routeSpec",
    "upstreamBindings",
    "deployedTo",
    "createdBy",
    "createdAt",
    "updatedAt",
}


async def test_create_read_list_edit_clone_delete(
    client: httpx.AsyncClient, database: Database, org: Org, admin: Account
) -> None:
    api = await make_api(client, org, admin)
    env = await make_env(client, org, admin, "prod")
    upstream = await make_upstream(client, org, admin, env["id"])
    binding = {"environmentId": env["id"], "upstreamId": upstream["id"]}

    created = await client.post(
        revisions(org, api["id"]),
        json={"serviceSpec": SERVICE, "routeSpec": ROUTES, "environmentUpstreams": [binding]},
        headers=admin.headers,
    )
    assert created.status_code == 201, created.text
    first = created.json()
    assert set(first) == KEYS
    assert first["apiId"] == api["id"] and first["number"] == 1
    assert first["status"] == "INACTIVE" and first["deployedTo"] == []
    assert first["serviceSpec"] == SERVICE
    assert first["routeSpec"] == STORED_ROUTES
    assert first["upstreamBindings"] == [binding]
    assert first["createdBy"] == str(admin.id)

    got = await client.get(revisions(org, api["id"], f"/{first['id']}"), headers=admin.headers)
    assert got.status_code == 200 and got.json() == first

    # every part of the body is optional
    empty = await make_revision(client, org, admin, api["id"])
    assert empty["number"] == 2
    assert empty["serviceSpec"] == {} and empty["routeSpec"] == []
    assert empty["upstreamBindings"] == []

    service = await client.put(
        revisions(org, api["id"], f"/{empty['id']}/service-spec"),
        json={"serviceSpec": {"name": "renamed"}},
        headers=admin.headers,
    )
    assert service.status_code == 200, service.text
    assert service.json()["serviceSpec"] == {"name": "renamed"}
    routes = await client.put(
        revisions(org, api["id"], f"/{empty['id']}/route-spec"),
        json={"routeSpec": [ROUTE]},
        headers=admin.headers,
    )
    assert routes.status_code == 200, routes.text
    assert routes.json()["routeSpec"] == [{**ROUTE, "priority": 0, "status": 1}]
    assert routes.json()["serviceSpec"] == {"name": "renamed"}  # the other spec stays
    # what is read back validates again, to the same thing
    again = await client.put(
        revisions(org, api["id"], f"/{first['id']}/route-spec"),
        json={"routeSpec": first["routeSpec"]},
        headers=admin.headers,
    )
    assert again.json()["routeSpec"] == first["routeSpec"]

    cloned = await client.post(
        revisions(org, api["id"], f"/{first['id']}/clone"), headers=admin.headers
    )
    assert cloned.status_code == 201, cloned.text
    clone = cloned.json()
    assert clone["number"] == 3 and clone["id"] != first["id"]
    assert clone["status"] == "INACTIVE"
    for key in ("serviceSpec", "routeSpec", "upstreamBindings"):
        assert clone[key] == first[key]

    listed = (await client.get(revisions(org, api["id"]), headers=admin.headers)).json()
    assert [r["number"] for r in listed["items"]] == [3, 2, 1]  # newest first
    assert listed["total"] == 3

    deleted = await client.delete(
        revisions(org, api["id"], f"/{empty['id']}"), headers=admin.headers
    )
    assert deleted.status_code == 204
    gone = await client.get(revisions(org, api["id"], f"/{empty['id']}"), headers=admin.headers)
    assert gone.status_code == 404 and gone.json()["detail"] == "revision not found"
    # numbers are never reused
    assert (await make_revision(client, org, admin, api["id"]))["number"] == 4
    detail = (
        await client.get(f"/api/orgs/{org.id}/apis/{api['id']}", headers=admin.headers)
    ).json()
    assert detail["revisionCount"] == 3

    assert await audit_actions(client, org, admin, empty["id"]) == [
        "revision.delete",
        "revision.update",
        "revision.update",
        "revision.create",
    ]
    assert await audit_actions(client, org, admin, clone["id"]) == ["revision.clone"]
    log = (await client.get(f"/api/orgs/{org.id}/audit-log", headers=admin.headers)).json()
    route_update = next(
        e for e in log["items"] if e["action"] == "revision.update" and e["entityId"] == empty["id"]
    )
    assert route_update["before"]["routeSpec"] == []
    assert route_update["after"]["routeSpec"] == [{**ROUTE, "priority": 0, "status": 1}]
    clone_entry = next(e for e in log["items"] if e["action"] == "revision.clone")
    assert "from revision 1" in clone_entry["summary"]
    delete_entry = next(e for e in log["items"] if e["action"] == "revision.delete")
    assert delete_entry["before"]["number"] == 2


async def test_active_revisions_cannot_change_or_go(
    client: httpx.AsyncClient, database: Database, org: Org, admin: Account
) -> None:
    api = await make_api(client, org, admin)
    live = await make_revision(client, org, admin, api["id"], routeSpec=[ROUTE])
    idle = await make_revision(client, org, admin, api["id"])
    env = await make_env(client, org, admin, "prod")
    await deploy(database, org, live, env["id"])

    got = (
        await client.get(revisions(org, api["id"], f"/{live['id']}"), headers=admin.headers)
    ).json()
    assert got["status"] == "ACTIVE" and got["deployedTo"] == [env["id"]]
    for suffix, body in (
        ("/service-spec", {"serviceSpec": {"name": "x"}}),
        ("/route-spec", {"routeSpec": []}),
    ):
        refused = await client.put(
            revisions(org, api["id"], f"/{live['id']}{suffix}"), json=body, headers=admin.headers
        )
        assert refused.status_code == 409, refused.text
        assert refused.json()["detail"] == "Only INACTIVE revisions can be updated"
    deleting = await client.delete(
        revisions(org, api["id"], f"/{live['id']}"), headers=admin.headers
    )
    assert deleting.status_code == 409
    assert deleting.json()["detail"] == "Only INACTIVE revisions can be deleted"
    unchanged = await client.get(revisions(org, api["id"], f"/{live['id']}"), headers=admin.headers)
    assert unchanged.json() == got

    # a live revision is the usual source of a clone, which is INACTIVE and editable
    clone = (
        await client.post(revisions(org, api["id"], f"/{live['id']}/clone"), headers=admin.headers)
    ).json()
    assert clone["status"] == "INACTIVE" and clone["routeSpec"] == live["routeSpec"]

    async def numbers(query: str) -> list[int]:
        response = await client.get(revisions(org, api["id"]) + query, headers=admin.headers)
        assert response.status_code == 200, response.text
        return [r["number"] for r in response.json()["items"]]

    assert await numbers("?status=ACTIVE") == [1]
    assert await numbers("?status=INACTIVE") == [3, 2]
    assert await numbers("?sort=number") == [1, 2, 3]
    assert await numbers("?sort=createdAt&size=2&page=2") == [3]
    for bad, parameter in (
        ("?status=active", "status"),
        ("?status=LIVE", "status"),
        ("?sort=name", "sort"),
        ("?number=1", "number"),
    ):
        response = await client.get(revisions(org, api["id"]) + bad, headers=admin.headers)
        assert response.status_code == 400, bad
        assert response.json()["errors"][0]["parameter"] == parameter

    # undeployed, it is INACTIVE again: editable and deletable
    await undeploy(database, live)
    edited = await client.put(
        revisions(org, api["id"], f"/{live['id']}/route-spec"),
        json={"routeSpec": []},
        headers=admin.headers,
    )
    assert edited.status_code == 200 and edited.json()["status"] == "INACTIVE"
    assert (
        await client.delete(revisions(org, api["id"], f"/{idle['id']}"), headers=admin.headers)
    ).status_code == 204


async def test_concurrent_creates_get_distinct_numbers(
    client: httpx.AsyncClient, org: Org, admin: Account
) -> None:
    api = await make_api(client, org, admin)
    responses = await asyncio.gather(
        *(client.post(revisions(org, api["id"]), json={}, headers=admin.headers) for _ in range(5))
    )
    assert [r.status_code for r in responses] == [201] * 5, [r.text for r in responses]
    assert sorted(r.json()["number"] for r in responses) == [1, 2, 3, 4, 5]


async def test_permissions_tenancy_and_unknown_ids(
    client: httpx.AsyncClient,
    database: Database,
    factory: Factory,
    org: Org,
    admin: Account,
    viewer: Account,
) -> None:
    api = await make_api(client, org, admin)
    other_api = await make_api(client, org, admin, "billing")
    revision = await make_revision(client, org, admin, api["id"], routeSpec=[ROUTE])
    one = revisions(org, api["id"], f"/{revision['id']}")

    assert (await client.get(revisions(org, api["id"]), headers=viewer.headers)).status_code == 200
    assert (await client.get(one, headers=viewer.headers)).status_code == 200
    for method, target, body, permission in (
        ("POST", revisions(org, api["id"]), {}, "api.update"),
        ("PUT", one + "/service-spec", {"serviceSpec": {}}, "api.update"),
        ("PUT", one + "/route-spec", {"routeSpec": []}, "api.update"),
        ("POST", one + "/clone", None, "api.update"),
        ("PATCH", one + "/upstream-bindings", {"environmentUpstreams": []}, "api.update"),
        ("PATCH", one + "/upstream-bindings/add", {"environmentUpstreams": []}, "api.update"),
        ("DELETE", one, None, "api.delete"),
    ):
        denied = await client.request(method, target, json=body, headers=viewer.headers)
        assert denied.status_code == 403, (method, target, denied.text)
        assert denied.json()["detail"] == f"missing permission '{permission}'"
        assert (await client.request(method, target, json=body)).status_code == 401

    other_org = await factory.org()
    outsider = await factory.user(other_org, roles=("Administrator",))
    outsider_api = await make_api(client, other_org, outsider)
    paths = {
        "through another API": revisions(org, other_api["id"], f"/{revision['id']}"),
        "through another org": revisions(other_org, api["id"], f"/{revision['id']}"),
        "another org's API": revisions(other_org, outsider_api["id"], f"/{revision['id']}"),
        "unknown revision": revisions(org, api["id"], f"/{uuid.uuid4()}"),
        "unknown API": revisions(org, str(uuid.uuid4()), f"/{revision['id']}"),
        "non-UUID revision": revisions(org, api["id"], "/not-a-uuid"),
        "non-UUID API": revisions(org, "not-a-uuid", f"/{revision['id']}"),
    }
    for label, path in paths.items():
        who = outsider if str(other_org.id) in path else admin
        for method, suffix, body in (
            ("GET", "", None),
            ("PUT", "/route-spec", {"routeSpec": []}),
            ("PUT", "/service-spec", {"serviceSpec": {}}),
            ("POST", "/clone", None),
            ("PATCH", "/upstream-bindings", {"environmentUpstreams": []}),
            ("PATCH", "/upstream-bindings/add", {"environmentUpstreams": []}),
            ("DELETE", "", None),
        ):
            response = await client.request(method, path + suffix, json=body, headers=who.headers)
            assert response.status_code == 404, (label, method, suffix, response.text)
    for path in (
        revisions(org, str(uuid.uuid4())),
        revisions(org, "not-a-uuid"),
        revisions(other_org, api["id"]),
    ):
        who = outsider if str(other_org.id) in path else admin
        assert (await client.get(path, headers=who.headers)).status_code == 404
        assert (await client.post(path, json={}, headers=who.headers)).status_code == 404

    # nothing above changed anything
    assert (await client.get(one, headers=admin.headers)).json() == revision
    async with database.session() as session:
        assert await session.scalar(select(func.count()).select_from(Revision)) == 1
    assert await audit_actions(client, org, admin, revision["id"]) == ["revision.create"]
