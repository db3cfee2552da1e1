"""APIs over HTTP: success of every endpoint, bad input, conflicts, permissions, tenancy,
audit, the deployment status per environment, and the imported OpenAPI document."""

from __future__ import annotations

import uuid

import httpx
import pytest
from sqlalchemy import func, select, update

from portico.core.db.engine import Database
from portico.management.api.models import Api
from portico.management.revision.models import Revision, UpstreamBinding
from tests.conftest import Account, Factory, Org
from tests.management.revision.support import (
    ROUTE,
    apis,
    audit_actions,
    deploy,
    make_api,
    make_env,
    make_revision,
    make_upstream,
    undeploy,
)

DESC_TOO_LONG = "desc: must be at most 256 characters long"


async def test_create_read_list_update_delete(
    client: httpx.AsyncClient, org: Org, admin: Account
) -> None:
    created = await client.post(
        apis(org), json={"name": "orders", "desc": "Order service"}, headers=admin.headers
    )
    assert created.status_code == 201, created.text
    api = created.json()
    assert set(api) == {
        "id",
        "orgId",
        "name",
        "desc",
        "revisionCount",
        "deployments",
        "createdAt",
        "updatedAt",
    }
    assert api["name"] == "orders" and api["desc"] == "Order service"
    assert api["orgId"] == str(org.id)
    assert api["revisionCount"] == 0 and api["deployments"] == []

    got = await client.get(apis(org, f"/{api['id']}"), headers=admin.headers)
    assert got.status_code == 200 and got.json() == api

    listed = (await client.get(apis(org), headers=admin.headers)).json()
    assert listed["total"] == 1 and listed["items"] == [api]

    patched = await client.patch(
        apis(org, f"/{api['id']}"), json={"name": "orders-v2", "desc": ""}, headers=admin.headers
    )
    assert patched.status_code == 200, patched.text
    assert patched.json()["name"] == "orders-v2" and patched.json()["desc"] == ""
    unchanged = await client.patch(apis(org, f"/{api['id']}"), json={}, headers=admin.headers)
    assert unchanged.json()["name"] == "orders-v2"

    deleted = await client.delete(apis(org, f"/{api['id']}"), headers=admin.headers)
    assert deleted.status_code == 204
    missing = await client.get(apis(org, f"/{api['id']}"), headers=admin.headers)
    assert missing.status_code == 404
    assert missing.json()["detail"] == "API not found"

    assert await audit_actions(client, org, admin, api["id"]) == [
        "api.delete",
        "api.update",
        "api.update",
        "api.create",
    ]
    log = (await client.get(f"/api/orgs/{org.id}/audit-log", headers=admin.headers)).json()
    update_entry = next(e for e in log["items"] if e["action"] == "api.update")
    assert update_entry["after"]["name"] == "orders-v2"
    first_update = [e for e in log["items"] if e["action"] == "api.update"][-1]
    assert first_update["before"]["name"] == "orders"
    assert first_update["actor"]["email"] == admin.email


@pytest.mark.parametrize(
    ("body", "pointer", "detail"),
    [
        ({}, "/name", "required property 'name' not found"),
        ({"name": 5}, "/name", "$.name: string expected"),
        ({"name": ""}, "/name", "$.name: must be at least 1 characters long"),
        ({"name": " padded"}, "/name", None),
        ({"name": "x" * 101}, "/name", "$.name: must be at most 100 characters long"),
        ({"name": "tab\there"}, "/name", None),
        ({"name": "a", "desc": "x" * 257}, "/desc", DESC_TOO_LONG),
        ({"name": "a", "desc": 5}, "/desc", "$.desc: string expected"),
        ({"name": "a", "desc": "bell\x07"}, "/desc", None),
        (
            {"name": "a", "description": "x"},
            "/description",
            "property 'description' is not allowed",
        ),
        ({"name": "a\x00b"}, "/name", None),
    ],
)
async def test_bad_input_is_a_400_naming_the_field_and_stores_nothing(
    client: httpx.AsyncClient,
    org: Org,
    admin: Account,
    body: dict[str, object],
    pointer: str,
    detail: str | None,
) -> None:
    response = await client.post(apis(org), json=body, headers=admin.headers)
    assert response.status_code == 400, response.text
    assert response.headers["content-type"] == "application/problem+json"
    problem = response.json()
    assert pointer in [e["pointer"] for e in problem["errors"]]
    if detail is not None:
        assert problem["detail"] == detail
    assert (await client.get(apis(org), headers=admin.headers)).json()["total"] == 0


async def test_desc_limits_and_names_conflicts_on_update(
    client: httpx.AsyncClient, org: Org, admin: Account
) -> None:
    exactly = await make_api(client, org, admin, "orders", desc="é" * 256)
    assert exactly["desc"] == "é" * 256
    other = await make_api(client, org, admin, "billing")

    too_long = await client.patch(
        apis(org, f"/{exactly['id']}"), json={"desc": "x" * 257}, headers=admin.headers
    )
    assert too_long.status_code == 400
    assert too_long.json()["detail"] == DESC_TOO_LONG
    assert too_long.json()["errors"] == [{"pointer": "/desc", "detail": DESC_TOO_LONG}]

    taken = await client.post(apis(org), json={"name": "orders"}, headers=admin.headers)
    assert taken.status_code == 409 and "orders" in taken.json()["detail"]
    renamed = await client.patch(
        apis(org, f"/{other['id']}"), json={"name": "orders"}, headers=admin.headers
    )
    assert renamed.status_code == 409
    # renaming to its own name is no conflict
    same = await client.patch(
        apis(org, f"/{other['id']}"), json={"name": "billing"}, headers=admin.headers
    )
    assert same.status_code == 200
    stored = (await client.get(apis(org, f"/{exactly['id']}"), headers=admin.headers)).json()
    assert stored["desc"] == "é" * 256


async def test_names_are_unique_per_org_only(
    client: httpx.AsyncClient, factory: Factory, org: Org, admin: Account
) -> None:
    await make_api(client, org, admin, "orders")
    other_org = await factory.org()
    other_admin = await factory.user(other_org, roles=("Administrator",))
    await make_api(client, other_org, other_admin, "orders")


async def test_list_shows_revisions_and_deployments_per_environment(
    client: httpx.AsyncClient, database: Database, org: Org, admin: Account
) -> None:
    orders = await make_api(client, org, admin, "orders")
    await make_api(client, org, admin, "billing")
    first = await make_revision(client, org, admin, orders["id"], routeSpec=[ROUTE])
    second = await make_revision(client, org, admin, orders["id"])
    prod = await make_env(client, org, admin, "prod")
    test = await make_env(client, org, admin, "test")
    await deploy(database, org, first, prod["id"])
    await deploy(database, org, second, test["id"])

    listed = (await client.get(apis(org), headers=admin.headers)).json()
    assert [a["name"] for a in listed["items"]] == ["billing", "orders"]
    billing, entry = listed["items"]
    assert billing["revisionCount"] == 0 and billing["deployments"] == []
    assert entry["revisionCount"] == 2
    assert [
        {k: d[k] for k in ("environmentId", "environmentName", "revisionId", "revisionNumber")}
        for d in entry["deployments"]
    ] == [
        {
            "environmentId": prod["id"],
            "environmentName": "prod",
            "revisionId": first["id"],
            "revisionNumber": 1,
        },
        {
            "environmentId": test["id"],
            "environmentName": "test",
            "revisionId": second["id"],
            "revisionNumber": 2,
        },
    ]
    assert all(d["deployedAt"] for d in entry["deployments"])
    detail = (await client.get(apis(org, f"/{orders['id']}"), headers=admin.headers)).json()
    assert detail == entry

    # the API cannot go while deployed anywhere; once undeployed it goes with its revisions
    refused = await client.delete(apis(org, f"/{orders['id']}"), headers=admin.headers)
    assert refused.status_code == 409
    assert refused.json()["detail"] == "API is deployed; undeploy it first"
    await undeploy(database, first)
    assert (
        await client.delete(apis(org, f"/{orders['id']}"), headers=admin.headers)
    ).status_code == 409
    await undeploy(database, second)
    upstream = await make_upstream(client, org, admin, prod["id"])
    bound = await client.patch(
        f"/api/orgs/{org.id}/apis/{orders['id']}/revisions/{first['id']}/upstream-bindings/add",
        json={
            "environmentUpstreams": [{"environmentId": prod["id"], "upstreamId": upstream["id"]}]
        },
        headers=admin.headers,
    )
    assert bound.status_code == 200
    gone = await client.delete(apis(org, f"/{orders['id']}"), headers=admin.headers)
    assert gone.status_code == 204
    async with database.session() as session:
        assert await session.scalar(select(func.count()).select_from(Revision)) == 0
        assert await session.scalar(select(func.count()).select_from(UpstreamBinding)) == 0
    # the upstream itself stays
    kept = await client.get(
        f"/api/orgs/{org.id}/envs/{prod['id']}/upstreams/{upstream['id']}", headers=admin.headers
    )
    assert kept.status_code == 200


async def test_listing_sorts_filters_and_rejects_unknown_parameters(
    client: httpx.AsyncClient, org: Org, admin: Account
) -> None:
    for name in ("b", "c", "a"):
        await make_api(client, org, admin, name)

    async def names(query: str) -> list[str]:
        response = await client.get(apis(org) + query, headers=admin.headers)
        assert response.status_code == 200, response.text
        return [a["name"] for a in response.json()["items"]]

    assert await names("") == ["a", "b", "c"]
    assert await names("?sort=-name") == ["c", "b", "a"]
    assert await names("?sort=createdAt") == ["b", "c", "a"]
    assert await names("?sort=-updatedAt,name") == ["a", "c", "b"]
    assert await names("?name=b") == ["b"]
    paged = (await client.get(apis(org) + "?size=2&page=2", headers=admin.headers)).json()
    assert [a["name"] for a in paged["items"]] == ["c"] and paged["total"] == 3
    for bad, parameter in (
        ("?colour=red", "colour"),
        ("?sort=desc", "sort"),
        ("?size=0", "size"),
        ("?page=x", "page"),
    ):
        response = await client.get(apis(org) + bad, headers=admin.headers)
        assert response.status_code == 400, bad
        assert response.json()["errors"][0]["parameter"] == parameter


async def test_search_finds_names_containing_the_text_in_any_case(
    client: httpx.AsyncClient, factory: Factory, org: Org, admin: Account
) -> None:
    """``search`` (the console's search box): containment, any case, ``%`` and ``_`` as
    plain characters, paged and counted like any list, and within the organisation only."""
    for name in ("orders", "bulk-ORDERS", "stock", "100%_sure", "1000-sure"):
        await make_api(client, org, admin, name)
    other = await factory.org("elsewhere")
    stranger = await factory.user(other, roles=("Administrator",), email="x@elsewhere.example")
    await make_api(client, other, stranger, "orders-elsewhere")

    async def found(query: str) -> tuple[list[str], int]:
        response = await client.get(apis(org) + query, headers=admin.headers)
        assert response.status_code == 200, response.text
        return [a["name"] for a in response.json()["items"]], response.json()["total"]

    assert await found("?search=Order") == (["bulk-ORDERS", "orders"], 2)
    assert await found("?search=Order&sort=-name&size=1&page=2") == (["bulk-ORDERS"], 2)
    assert await found("?search=%25_") == (["100%_sure"], 1)  # not "anything, then one"
    assert await found("?search=nothing-like-it") == ([], 0)
    assert (await found("?search="))[1] == 5  # empty: no filter


async def test_the_imported_openapi_document(
    client: httpx.AsyncClient, database: Database, org: Org, admin: Account
) -> None:
    api = await make_api(client, org, admin)
    none = await client.get(apis(org, f"/{api['id']}/spec"), headers=admin.headers)
    assert none.status_code == 404
    assert none.json()["detail"] == "no OpenAPI document was imported for this API"
    document = {"openapi": "3.0.3", "info": {"title": "Orders", "version": "1"}, "paths": {}}
    async with database.session() as session, session.begin():
        await session.execute(
            update(Api).where(Api.id == uuid.UUID(api["id"])).values(spec_document=document)
        )
    got = await client.get(apis(org, f"/{api['id']}/spec"), headers=admin.headers)
    assert got.status_code == 200 and got.json() == document


async def test_permissions_and_tenancy(
    client: httpx.AsyncClient, factory: Factory, org: Org, admin: Account, viewer: Account
) -> None:
    api = await make_api(client, org, admin)
    path = apis(org, f"/{api['id']}")
    assert (await client.get(apis(org), headers=viewer.headers)).status_code == 200
    assert (await client.get(path, headers=viewer.headers)).status_code == 200
    assert (await client.get(path + "/spec", headers=viewer.headers)).status_code == 404
    for method, target, body, permission in (
        ("POST", apis(org), {"name": "x"}, "api.create"),
        ("PATCH", path, {"name": "x"}, "api.update"),
        ("DELETE", path, None, "api.delete"),
    ):
        denied = await client.request(method, target, json=body, headers=viewer.headers)
        assert denied.status_code == 403, (method, denied.text)
        assert denied.json()["detail"] == f"missing permission '{permission}'"

    # a publisher builds APIs; a member with no role sees nothing
    publisher = await factory.user(org, roles=("API Publisher",))
    assert (
        await client.post(apis(org), json={"name": "p"}, headers=publisher.headers)
    ).status_code == 201
    nobody = await factory.user(org, roles=())
    assert (await client.get(apis(org), headers=nobody.headers)).status_code == 403

    other_org = await factory.org()
    outsider = await factory.user(other_org, roles=("Administrator",))
    for method in ("GET", "PATCH", "DELETE"):
        swapped = await client.request(
            method,
            f"/api/orgs/{other_org.id}/apis/{api['id']}",
            json={} if method == "PATCH" else None,
            headers=outsider.headers,
        )
        assert swapped.status_code == 404, method
    assert (await client.get(apis(org), headers=outsider.headers)).status_code == 404
    for suffix in (f"/{uuid.uuid4()}", "/not-a-uuid", "/not-a-uuid/spec"):
        assert (await client.get(apis(org, suffix), headers=admin.headers)).status_code == 404
    assert (
        await client.patch(apis(org, "/not-a-uuid"), json={}, headers=admin.headers)
    ).status_code == 404
    assert (await client.get(apis(org))).status_code == 401
    assert (await client.post(apis(org), json={"name": "x"})).status_code == 401
    # the API is untouched by all of it
    assert (await client.get(path, headers=admin.headers)).json() == api
