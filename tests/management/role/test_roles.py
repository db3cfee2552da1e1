"""Roles and the permission catalogue over HTTP: success, bad input, predefined roles,
permissions, tenancy, audit."""

from __future__ import annotations

import uuid
from typing import Any

import httpx
import pytest
from sqlalchemy import insert, select

from portico.core.db.engine import Database
from portico.management.org.models import Membership
from portico.management.role.models import group_roles, membership_roles
from portico.management.role.permissions import PERMISSIONS, PREDEFINED_ROLES
from tests.conftest import Account, Factory, Org


def url(org: Org, suffix: str = "") -> str:
    return f"/api/orgs/{org.id}/roles{suffix}"


async def create(
    client: httpx.AsyncClient, org: Org, who: Account, **body: object
) -> httpx.Response:
    body.setdefault("permissions", [])
    return await client.post(url(org), json=body, headers=who.headers)


async def roles_by_name(
    client: httpx.AsyncClient, org: Org, who: Account
) -> dict[str, dict[str, Any]]:
    listed = (await client.get(url(org) + "?size=100", headers=who.headers)).json()
    return {r["name"]: r for r in listed["items"]}


async def audit_actions(
    client: httpx.AsyncClient, org: Org, who: Account, entity: str
) -> list[dict[str, Any]]:
    log = (await client.get(f"/api/orgs/{org.id}/audit-log", headers=who.headers)).json()
    return [e for e in log["items"] if e["entityId"] == entity]


async def test_permission_catalogue(
    client: httpx.AsyncClient, org: Org, viewer: Account, factory: Factory
) -> None:
    response = await client.get(f"/api/orgs/{org.id}/permissions", headers=viewer.headers)
    assert response.status_code == 200, response.text
    items = response.json()["items"]
    assert [i["key"] for i in items] == list(PERMISSIONS)
    assert {"key": "api.create", "label": PERMISSIONS["api.create"]} in items
    for key in ("environment.manage", "force-delete", "role.manage", "audit.read"):
        assert key in [i["key"] for i in items]

    bad = await client.get(f"/api/orgs/{org.id}/permissions?page=2", headers=viewer.headers)
    assert bad.status_code == 400
    assert bad.json()["errors"] == [
        {"parameter": "page", "detail": "page: unknown query parameter"}
    ]

    assert (await client.get(f"/api/orgs/{org.id}/permissions")).status_code == 401
    nobody = await factory.user(org, roles=())
    denied = await client.get(f"/api/orgs/{org.id}/permissions", headers=nobody.headers)
    assert denied.status_code == 403
    assert denied.json()["detail"] == "missing permission 'role.read'"
    outsider = await factory.user(await factory.org(), roles=("Administrator",))
    foreign = await client.get(f"/api/orgs/{org.id}/permissions", headers=outsider.headers)
    assert foreign.status_code == 404


async def test_predefined_roles_are_listed_and_immutable(
    client: httpx.AsyncClient, org: Org, admin: Account
) -> None:
    roles = await roles_by_name(client, org, admin)
    assert set(roles) == set(PREDEFINED_ROLES)
    viewer_role = roles["Viewer"]
    assert viewer_role["predefined"] is True and viewer_role["orgId"] == str(org.id)
    assert viewer_role["permissions"] == sorted(PREDEFINED_ROLES["Viewer"][1])

    for role in roles.values():
        patched = await client.patch(
            url(org, f"/{role['id']}"), json={"description": "mine now"}, headers=admin.headers
        )
        assert patched.status_code == 409
        assert patched.json()["detail"] == "predefined roles cannot be changed"
        deleted = await client.delete(url(org, f"/{role['id']}"), headers=admin.headers)
        assert deleted.status_code == 409
        assert deleted.json()["detail"] == "predefined roles cannot be changed"
    assert await roles_by_name(client, org, admin) == roles
    log = (await client.get(f"/api/orgs/{org.id}/audit-log", headers=admin.headers)).json()
    assert not [e for e in log["items"] if e["action"].startswith("role.")]


async def test_create_read_list_update_delete_with_audit(
    client: httpx.AsyncClient, org: Org, admin: Account
) -> None:
    created = await create(
        client,
        org,
        admin,
        name="Operators",
        description="run the gateways",
        permissions=["upstream.manage", "environment.manage", "api.read"],
    )
    assert created.status_code == 201, created.text
    role = created.json()
    assert role["name"] == "Operators" and role["orgId"] == str(org.id)
    assert role["permissions"] == ["api.read", "environment.manage", "upstream.manage"]
    assert role["predefined"] is False and role["description"] == "run the gateways"
    assert set(role) == {
        "id",
        "orgId",
        "name",
        "description",
        "permissions",
        "predefined",
        "createdAt",
        "updatedAt",
    }

    got = await client.get(url(org, f"/{role['id']}"), headers=admin.headers)
    assert got.status_code == 200 and got.json() == role

    patched = await client.patch(
        url(org, f"/{role['id']}"),
        json={"name": "Ops", "permissions": ["audit.read"]},
        headers=admin.headers,
    )
    assert patched.status_code == 200, patched.text
    assert patched.json()["name"] == "Ops"
    assert patched.json()["permissions"] == ["audit.read"]
    assert patched.json()["description"] == "run the gateways"
    # an empty permission set is a valid (if useless) role
    emptied = await client.patch(
        url(org, f"/{role['id']}"), json={"permissions": []}, headers=admin.headers
    )
    assert emptied.status_code == 200 and emptied.json()["permissions"] == []

    deleted = await client.delete(url(org, f"/{role['id']}"), headers=admin.headers)
    assert deleted.status_code == 204 and deleted.content == b""
    assert (await client.get(url(org, f"/{role['id']}"), headers=admin.headers)).status_code == 404

    entries = await audit_actions(client, org, admin, role["id"])
    assert [e["action"] for e in entries] == [
        "role.delete",
        "role.update",
        "role.update",
        "role.create",
    ]
    delete, _, first_update, create_entry = entries
    assert create_entry["after"]["permissions"] == role["permissions"]
    assert first_update["before"]["name"] == "Operators"
    assert first_update["after"]["name"] == "Ops"
    assert delete["before"]["name"] == "Ops" and delete["after"] is None
    assert delete["actor"]["email"] == admin.email


async def test_deleting_a_role_removes_it_from_members_and_groups(
    client: httpx.AsyncClient, database: Database, factory: Factory, org: Org, admin: Account
) -> None:
    role = (await create(client, org, admin, name="Deployers", permissions=["api.deploy"])).json()
    user = await factory.user(org, roles=())
    group = await client.post(
        f"/api/orgs/{org.id}/groups",
        json={"name": "release", "roleIds": [role["id"]], "memberIds": [str(user.id)]},
        headers=admin.headers,
    )
    assert group.status_code == 201, group.text
    # user endpoints are another domain: grant the role directly in the store, to both the
    # user and the admin performing the delete (whose membership the request has loaded)
    async with database.session() as session, session.begin():
        memberships = (
            await session.scalars(
                select(Membership.id).where(Membership.user_id.in_([user.id, admin.id]))
            )
        ).all()
        await session.execute(
            insert(membership_roles),
            [{"membership_id": m, "role_id": uuid.UUID(role["id"])} for m in memberships],
        )
    me = (await client.get("/api/me", headers=user.headers)).json()
    assert "api.deploy" in me["orgs"][0]["permissions"]

    deleted = await client.delete(url(org, f"/{role['id']}"), headers=admin.headers)
    assert deleted.status_code == 204, deleted.text

    group_now = (
        await client.get(f"/api/orgs/{org.id}/groups/{group.json()['id']}", headers=admin.headers)
    ).json()
    assert group_now["roleIds"] == []
    assert group_now["memberIds"] == [str(user.id)]
    async with database.session() as session:
        for table in (membership_roles, group_roles):
            rows = await session.execute(
                select(table).where(table.c.role_id == uuid.UUID(role["id"]))
            )
            assert rows.all() == []
    me = (await client.get("/api/me", headers=user.headers)).json()
    assert me["orgs"][0]["permissions"] == []
    (entry,) = [
        e
        for e in await audit_actions(client, org, admin, role["id"])
        if e["action"] == "role.delete"
    ]
    assert entry["summary"] == "role 'Deployers' removed from 2 member(s) and 1 group(s)"


@pytest.mark.parametrize(
    ("body", "pointer", "detail"),
    [
        ({}, "/name", "required property 'name' not found"),
        ({"name": "r"}, "/permissions", "required property 'permissions' not found"),
        ({"name": 5, "permissions": []}, "/name", "$.name: string expected"),
        ({"name": "", "permissions": []}, "/name", "$.name: must be at least 1 characters long"),
        ({"name": " r", "permissions": []}, "/name", None),
        ({"name": "r", "permissions": "api.read"}, "/permissions", "$.permissions: array expected"),
        ({"name": "r", "permissions": [1]}, "/permissions/0", "$.permissions[0]: string expected"),
        (
            {"name": "r", "permissions": ["api.read", "api.destroy"]},
            "/permissions/1",
            "$.permissions[1]: unknown permission 'api.destroy'",
        ),
        (
            {"name": "r", "permissions": ["api.read", "audit.read", "api.read"]},
            "/permissions/2",
            "$.permissions[2]: duplicate permission 'api.read'",
        ),
        (
            {"name": "r", "permissions": [], "predefined": True},
            "/predefined",
            "property 'predefined' is not allowed",
        ),
        (
            {"name": "r", "permissions": [], "description": "x" * 1001},
            "/description",
            "$.description: must be at most 1000 characters long",
        ),
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
    response = await client.post(url(org), json=body, headers=admin.headers)
    assert response.status_code == 400, response.text
    assert response.headers["content-type"] == "application/problem+json"
    problem = response.json()
    assert pointer in [e["pointer"] for e in problem["errors"]]
    if detail is not None:
        assert problem["detail"] == detail
    assert set(await roles_by_name(client, org, admin)) == set(PREDEFINED_ROLES)


async def test_bad_update_changes_nothing(
    client: httpx.AsyncClient, org: Org, admin: Account
) -> None:
    role = (await create(client, org, admin, name="r", permissions=["api.read"])).json()
    response = await client.patch(
        url(org, f"/{role['id']}"),
        json={"name": "r2", "permissions": ["api.read", "nope"]},
        headers=admin.headers,
    )
    assert response.status_code == 400
    assert response.json()["errors"] == [
        {"pointer": "/permissions/1", "detail": "$.permissions[1]: unknown permission 'nope'"}
    ]
    assert (await client.get(url(org, f"/{role['id']}"), headers=admin.headers)).json() == role
    assert [e["action"] for e in await audit_actions(client, org, admin, role["id"])] == [
        "role.create"
    ]


async def test_names_are_unique_within_an_org(
    client: httpx.AsyncClient, factory: Factory, org: Org, admin: Account
) -> None:
    first = (await create(client, org, admin, name="Ops")).json()
    again = await create(client, org, admin, name="Ops")
    assert again.status_code == 409
    assert again.json()["detail"] == "a role named 'Ops' already exists"
    predefined = await create(client, org, admin, name="Viewer")
    assert predefined.status_code == 409
    other = (await create(client, org, admin, name="Other")).json()
    renamed = await client.patch(
        url(org, f"/{other['id']}"), json={"name": "Ops"}, headers=admin.headers
    )
    assert renamed.status_code == 409
    # renaming to its own name is not a conflict
    same = await client.patch(
        url(org, f"/{first['id']}"), json={"name": "Ops"}, headers=admin.headers
    )
    assert same.status_code == 200
    # another organisation may use the same name
    other_org = await factory.org()
    other_admin = await factory.user(other_org, roles=("Administrator",))
    assert (await create(client, other_org, other_admin, name="Ops")).status_code == 201


async def test_listing_sorts_filters_and_rejects_unknown_parameters(
    client: httpx.AsyncClient, org: Org, admin: Account
) -> None:
    for name in ("b-custom", "a-custom"):
        await create(client, org, admin, name=name)
    names = lambda r: [e["name"] for e in r.json()["items"]]  # noqa: E731
    everything = await client.get(url(org), headers=admin.headers)
    assert names(everything) == sorted(["a-custom", "b-custom", *PREDEFINED_ROLES])
    assert everything.json()["total"] == 2 + len(PREDEFINED_ROLES)
    custom = await client.get(url(org) + "?predefined=false", headers=admin.headers)
    assert names(custom) == ["a-custom", "b-custom"]
    predefined = await client.get(url(org) + "?predefined=true&sort=-name", headers=admin.headers)
    assert names(predefined) == sorted(PREDEFINED_ROLES, reverse=True)
    assert names(await client.get(url(org) + "?name=Viewer", headers=admin.headers)) == ["Viewer"]
    paged = (await client.get(url(org) + "?size=2&page=3&sort=name", headers=admin.headers)).json()
    assert [e["name"] for e in paged["items"]] == names(everything)[4:6]
    by_creation = await client.get(url(org) + "?sort=-createdAt", headers=admin.headers)
    assert by_creation.status_code == 200
    assert len(names(by_creation)) == 2 + len(PREDEFINED_ROLES)
    for bad, parameter in (
        ("?predefined=yes", "predefined"),
        ("?colour=red", "colour"),
        ("?sort=permissions", "sort"),
        ("?size=0", "size"),
    ):
        response = await client.get(url(org) + bad, headers=admin.headers)
        assert response.status_code == 400, bad
        assert response.json()["errors"][0]["parameter"] == parameter


async def test_permissions_and_tenancy(
    client: httpx.AsyncClient, factory: Factory, org: Org, admin: Account, viewer: Account
) -> None:
    role = (await create(client, org, admin, name="Ops")).json()
    one = url(org, f"/{role['id']}")
    assert (await client.get(url(org), headers=viewer.headers)).status_code == 200
    assert (await client.get(one, headers=viewer.headers)).status_code == 200
    for response in (
        await create(client, org, viewer, name="nope"),
        await client.patch(one, json={"description": "x"}, headers=viewer.headers),
        await client.delete(one, headers=viewer.headers),
    ):
        assert response.status_code == 403
        assert response.json()["detail"] == "missing permission 'role.manage'"
    nobody = await factory.user(org, roles=())
    denied = await client.get(url(org), headers=nobody.headers)
    assert denied.status_code == 403
    assert denied.json()["detail"] == "missing permission 'role.read'"

    other_org = await factory.org()
    outsider = await factory.user(other_org, roles=("Administrator",))
    swapped = f"/api/orgs/{other_org.id}/roles/{role['id']}"
    assert (await client.get(swapped, headers=outsider.headers)).status_code == 404
    assert (
        await client.patch(swapped, json={"name": "mine"}, headers=outsider.headers)
    ).status_code == 404
    assert (await client.delete(swapped, headers=outsider.headers)).status_code == 404
    assert (await client.get(url(org), headers=outsider.headers)).status_code == 404
    for missing in (str(uuid.uuid4()), "not-a-uuid"):
        response = await client.get(url(org, f"/{missing}"), headers=admin.headers)
        assert response.status_code == 404
        assert response.json()["detail"] == "role not found"
        assert (
            await client.delete(url(org, f"/{missing}"), headers=admin.headers)
        ).status_code == 404
    assert (await client.get(url(org))).status_code == 401
    assert (await client.get(one, headers=admin.headers)).json()["name"] == "Ops"
