"""Groups over HTTP: success, bad input, permissions, tenancy, audit — and the point of
groups: roles granted to a group apply to its members."""

from __future__ import annotations

import uuid
from typing import Any

import httpx
import pytest

from tests.conftest import Account, Factory, Org


def url(org: Org, suffix: str = "") -> str:
    return f"/api/orgs/{org.id}/groups{suffix}"


async def create(
    client: httpx.AsyncClient, org: Org, who: Account, **body: object
) -> httpx.Response:
    return await client.post(url(org), json=body, headers=who.headers)


async def role_ids(client: httpx.AsyncClient, org: Org, who: Account) -> dict[str, str]:
    listed = (await client.get(f"/api/orgs/{org.id}/roles", headers=who.headers)).json()
    return {r["name"]: r["id"] for r in listed["items"]}


async def group_entries(client: httpx.AsyncClient, org: Org, who: Account) -> list[dict[str, Any]]:
    log = (
        await client.get(f"/api/orgs/{org.id}/audit-log?entityType=group", headers=who.headers)
    ).json()
    return log["items"]


async def test_roles_granted_to_a_group_apply_to_its_members(
    client: httpx.AsyncClient, factory: Factory, org: Org, admin: Account
) -> None:
    user = await factory.user(org, roles=())
    envs = f"/api/orgs/{org.id}/envs"

    async def create_env(name: str) -> httpx.Response:
        return await client.post(envs, json={"name": name}, headers=user.headers)

    async def my_permissions() -> list[str]:
        me = (await client.get("/api/me", headers=user.headers)).json()
        (membership,) = me["orgs"]
        return list(membership["permissions"])

    denied = await create_env("before")
    assert denied.status_code == 403
    assert denied.json()["detail"] == "missing permission 'environment.manage'"
    assert await my_permissions() == []

    role = await client.post(
        f"/api/orgs/{org.id}/roles",
        json={"name": "Env admins", "permissions": ["environment.manage", "environment.read"]},
        headers=admin.headers,
    )
    assert role.status_code == 201, role.text
    group = await create(
        client, org, admin, name="platform", roleIds=[role.json()["id"]], memberIds=[str(user.id)]
    )
    assert group.status_code == 201, group.text
    assert group.json()["memberIds"] == [str(user.id)]

    assert (await create_env("during")).status_code == 201
    assert await my_permissions() == ["environment.manage", "environment.read"]

    # removing the user from the group takes the permission away again
    emptied = await client.patch(
        url(org, f"/{group.json()['id']}"), json={"memberIds": []}, headers=admin.headers
    )
    assert emptied.status_code == 200, emptied.text
    assert emptied.json()["memberIds"] == [] and emptied.json()["roleIds"] == [role.json()["id"]]
    again = await create_env("after")
    assert again.status_code == 403
    assert again.json()["detail"] == "missing permission 'environment.manage'"
    assert await my_permissions() == []

    # a predefined role granted through a group counts as much as a custom one
    viewer_role = (await role_ids(client, org, admin))["Viewer"]
    await client.patch(
        url(org, f"/{group.json()['id']}"),
        json={"memberIds": [str(user.id)], "roleIds": [viewer_role]},
        headers=admin.headers,
    )
    permissions = await my_permissions()
    assert "environment.read" in permissions and "environment.manage" not in permissions
    assert (await client.get(envs, headers=user.headers)).status_code == 200


async def test_create_read_list_update_delete_with_audit(
    client: httpx.AsyncClient, factory: Factory, org: Org, admin: Account
) -> None:
    roles = await role_ids(client, org, admin)
    alice = await factory.user(org, roles=("Viewer",))
    bob = await factory.user(org, roles=())
    created = await create(
        client,
        org,
        admin,
        name="reviewers",
        description="read-only folks",
        roleIds=[roles["Viewer"], roles["API Publisher"]],
        memberIds=[str(bob.id), str(alice.id)],
    )
    assert created.status_code == 201, created.text
    group = created.json()
    assert set(group) == {
        "id",
        "orgId",
        "name",
        "description",
        "roleIds",
        "memberIds",
        "createdAt",
        "updatedAt",
    }
    assert group["orgId"] == str(org.id) and group["description"] == "read-only folks"
    assert group["roleIds"] == sorted([roles["Viewer"], roles["API Publisher"]])
    assert group["memberIds"] == sorted([str(alice.id), str(bob.id)])

    got = await client.get(url(org, f"/{group['id']}"), headers=admin.headers)
    assert got.status_code == 200 and got.json() == group
    listed = (await client.get(url(org), headers=admin.headers)).json()
    assert listed["total"] == 1 and listed["items"] == [group]

    renamed = await client.patch(
        url(org, f"/{group['id']}"), json={"name": "reviewers-2"}, headers=admin.headers
    )
    assert renamed.status_code == 200, renamed.text
    assert renamed.json()["name"] == "reviewers-2"
    # lists that are not given stay as they were
    assert renamed.json()["roleIds"] == group["roleIds"]
    assert renamed.json()["memberIds"] == group["memberIds"]

    replaced = await client.patch(
        url(org, f"/{group['id']}"),
        json={"roleIds": [roles["Viewer"]], "memberIds": [str(alice.id)], "description": ""},
        headers=admin.headers,
    )
    assert replaced.status_code == 200, replaced.text
    assert replaced.json()["roleIds"] == [roles["Viewer"]]
    assert replaced.json()["memberIds"] == [str(alice.id)]
    assert replaced.json()["description"] == ""

    deleted = await client.delete(url(org, f"/{group['id']}"), headers=admin.headers)
    assert deleted.status_code == 204 and deleted.content == b""
    assert (await client.get(url(org, f"/{group['id']}"), headers=admin.headers)).status_code == 404
    # the members and roles themselves are untouched
    assert (await client.get("/api/me", headers=alice.headers)).json()["orgs"][0]["roles"] == [
        "Viewer"
    ]
    assert (await role_ids(client, org, admin)) == roles

    entries = [e for e in await group_entries(client, org, admin) if e["entityId"] == group["id"]]
    assert [e["action"] for e in entries] == [
        "group.delete",
        "group.update",
        "group.update",
        "group.create",
    ]
    delete, replace, rename, create_entry = entries
    assert create_entry["after"] == group
    assert rename["before"]["name"] == "reviewers" and rename["after"]["name"] == "reviewers-2"
    assert replace["before"]["memberIds"] == group["memberIds"]
    assert replace["after"]["memberIds"] == [str(alice.id)]
    assert delete["before"]["roleIds"] == [roles["Viewer"]] and delete["after"] is None
    assert delete["actor"]["email"] == admin.email


@pytest.mark.parametrize(
    ("body", "pointer", "detail"),
    [
        ({}, "/name", "required property 'name' not found"),
        ({"name": 1}, "/name", "$.name: string expected"),
        ({"name": ""}, "/name", "$.name: must be at least 1 characters long"),
        ({"name": "g", "members": []}, "/members", "property 'members' is not allowed"),
        ({"name": "g", "roleIds": "x"}, "/roleIds", "$.roleIds: array expected"),
        (
            {"name": "g", "roleIds": ["not-a-uuid"]},
            "/roleIds/0",
            "$.roleIds[0]: UUID string expected",
        ),
        ({"name": "g", "memberIds": [7]}, "/memberIds/0", "$.memberIds[0]: UUID string expected"),
        (
            {"name": "g", "roleIds": [str(uuid.uuid4())]},
            "/roleIds/0",
            "$.roleIds[0]: unknown role",
        ),
        (
            {"name": "g", "memberIds": [str(uuid.uuid4())]},
            "/memberIds/0",
            "$.memberIds[0]: not a member of this organisation",
        ),
    ],
)
async def test_bad_input_is_a_400_naming_the_field_and_stores_nothing(
    client: httpx.AsyncClient,
    org: Org,
    admin: Account,
    body: dict[str, object],
    pointer: str,
    detail: str,
) -> None:
    response = await create(client, org, admin, **body)
    assert response.status_code == 400, response.text
    assert response.headers["content-type"] == "application/problem+json"
    problem = response.json()
    assert pointer in [e["pointer"] for e in problem["errors"]]
    assert problem["detail"] == detail
    assert (await client.get(url(org), headers=admin.headers)).json()["total"] == 0


async def test_ids_must_belong_to_the_org_and_be_unique(
    client: httpx.AsyncClient, factory: Factory, org: Org, admin: Account
) -> None:
    roles = await role_ids(client, org, admin)
    member = await factory.user(org, roles=())
    other_org = await factory.org()
    other_admin = await factory.user(other_org, roles=("Administrator",))
    foreign_role = (await role_ids(client, other_org, other_admin))["Viewer"]
    stranger = await factory.user(None)

    response = await create(
        client,
        org,
        admin,
        name="g",
        roleIds=[roles["Viewer"], foreign_role],
        memberIds=[str(member.id), str(other_admin.id), str(stranger.id)],
    )
    assert response.status_code == 400
    assert response.json()["errors"] == [
        {"pointer": "/roleIds/1", "detail": "$.roleIds[1]: unknown role"},
        {"pointer": "/memberIds/1", "detail": "$.memberIds[1]: not a member of this organisation"},
        {"pointer": "/memberIds/2", "detail": "$.memberIds[2]: not a member of this organisation"},
    ]
    duplicates = await create(
        client, org, admin, name="g", memberIds=[str(member.id), str(member.id)]
    )
    assert duplicates.status_code == 400
    assert duplicates.json()["errors"] == [
        {"pointer": "/memberIds/1", "detail": f"$.memberIds[1]: duplicate member id '{member.id}'"}
    ]
    duplicate_roles = await create(
        client, org, admin, name="g", roleIds=[roles["Viewer"], roles["Viewer"]]
    )
    assert duplicate_roles.status_code == 400
    assert duplicate_roles.json()["errors"][0]["pointer"] == "/roleIds/1"
    assert (await client.get(url(org), headers=admin.headers)).json()["total"] == 0

    # the same checks guard an update, which then changes nothing
    group = (await create(client, org, admin, name="g", memberIds=[str(member.id)])).json()
    bad = await client.patch(
        url(org, f"/{group['id']}"),
        json={"name": "renamed", "memberIds": [str(other_admin.id)], "roleIds": [foreign_role]},
        headers=admin.headers,
    )
    assert bad.status_code == 400
    assert [e["pointer"] for e in bad.json()["errors"]] == ["/roleIds/0", "/memberIds/0"]
    assert (await client.get(url(org, f"/{group['id']}"), headers=admin.headers)).json() == group
    assert [e["action"] for e in await group_entries(client, org, admin)] == ["group.create"]


async def test_names_are_unique_within_an_org(
    client: httpx.AsyncClient, factory: Factory, org: Org, admin: Account
) -> None:
    first = (await create(client, org, admin, name="ops")).json()
    again = await create(client, org, admin, name="ops")
    assert again.status_code == 409
    assert again.json()["detail"] == "a group named 'ops' already exists"
    other = (await create(client, org, admin, name="devs")).json()
    clash = await client.patch(
        url(org, f"/{other['id']}"), json={"name": "ops"}, headers=admin.headers
    )
    assert clash.status_code == 409
    same = await client.patch(
        url(org, f"/{first['id']}"), json={"name": "ops"}, headers=admin.headers
    )
    assert same.status_code == 200
    other_org = await factory.org()
    other_admin = await factory.user(other_org, roles=("Administrator",))
    assert (await create(client, other_org, other_admin, name="ops")).status_code == 201


async def test_listing_sorts_filters_and_rejects_unknown_parameters(
    client: httpx.AsyncClient, org: Org, admin: Account
) -> None:
    for name in ("b", "c", "a"):
        await create(client, org, admin, name=name)
    names = lambda r: [e["name"] for e in r.json()["items"]]  # noqa: E731
    assert names(await client.get(url(org), headers=admin.headers)) == ["a", "b", "c"]
    assert names(await client.get(url(org) + "?sort=-name", headers=admin.headers)) == [
        "c",
        "b",
        "a",
    ]
    assert names(await client.get(url(org) + "?name=b", headers=admin.headers)) == ["b"]
    by_creation = await client.get(url(org) + "?sort=createdAt", headers=admin.headers)
    assert sorted(names(by_creation)) == ["a", "b", "c"]
    paged = (await client.get(url(org) + "?size=2&page=2", headers=admin.headers)).json()
    assert [e["name"] for e in paged["items"]] == ["c"] and paged["total"] == 3
    for bad in ("?colour=red", "?sort=roleIds", "?size=101", "?page=0"):
        response = await client.get(url(org) + bad, headers=admin.headers)
        assert response.status_code == 400, bad
        assert response.json()["errors"][0]["parameter"] in {"colour", "sort", "size", "page"}


async def test_permissions_and_tenancy(
    client: httpx.AsyncClient, factory: Factory, org: Org, admin: Account, viewer: Account
) -> None:
    group = (await create(client, org, admin, name="ops")).json()
    one = url(org, f"/{group['id']}")
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
    denied = await client.get(one, headers=nobody.headers)
    assert denied.status_code == 403
    assert denied.json()["detail"] == "missing permission 'role.read'"

    other_org = await factory.org()
    outsider = await factory.user(other_org, roles=("Administrator",))
    swapped = f"/api/orgs/{other_org.id}/groups/{group['id']}"
    assert (await client.get(swapped, headers=outsider.headers)).status_code == 404
    assert (
        await client.patch(swapped, json={"name": "mine"}, headers=outsider.headers)
    ).status_code == 404
    assert (await client.delete(swapped, headers=outsider.headers)).status_code == 404
    assert (await client.get(url(org), headers=outsider.headers)).status_code == 404
    for missing in (str(uuid.uuid4()), "not-a-uuid"):
        response = await client.get(url(org, f"/{missing}"), headers=admin.headers)
        assert response.status_code == 404
        assert response.json()["detail"] == "group not found"
        patched = await client.patch(url(org, f"/{missing}"), json={}, headers=admin.headers)
        assert patched.status_code == 404
    assert (await client.get(url(org))).status_code == 401
    assert (await client.post(url(org), json={"name": "x"})).status_code == 401
    assert (await client.get(one, headers=admin.headers)).json() == group
