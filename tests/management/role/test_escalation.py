"""Nobody grants permissions they do not hold: not by defining a role, not by giving a role
to a group with members, not by adding members to a group with roles."""

from __future__ import annotations

import httpx

from tests.conftest import Account, Factory, Org

DENIED = "cannot grant permissions you do not hold: "


async def limited_manager(
    client: httpx.AsyncClient, factory: Factory, org: Org, admin: Account
) -> Account:
    role = await client.post(
        f"/api/orgs/{org.id}/roles",
        json={
            "name": "Role managers",
            "permissions": ["role.read", "role.manage", "environment.read"],
        },
        headers=admin.headers,
    )
    assert role.status_code == 201, role.text
    manager = await factory.user(org, roles=())
    group = await client.post(
        f"/api/orgs/{org.id}/groups",
        json={"name": "Managers", "roleIds": [role.json()["id"]], "memberIds": [str(manager.id)]},
        headers=admin.headers,
    )
    assert group.status_code == 201, group.text
    return manager


async def test_roles_cannot_define_more_than_their_author_holds(
    client: httpx.AsyncClient, factory: Factory, org: Org, admin: Account
) -> None:
    manager = await limited_manager(client, factory, org, admin)
    roles = f"/api/orgs/{org.id}/roles"
    refused = await client.post(
        roles,
        json={"name": "Deployers", "permissions": ["api.deploy", "environment.read"]},
        headers=manager.headers,
    )
    assert refused.status_code == 403
    assert refused.json()["detail"] == DENIED + "api.deploy"
    allowed = await client.post(
        roles,
        json={"name": "Readers", "permissions": ["environment.read"]},
        headers=manager.headers,
    )
    assert allowed.status_code == 201

    deployers = await client.post(
        roles, json={"name": "Deployers", "permissions": ["api.deploy"]}, headers=admin.headers
    )
    role_url = f"{roles}/{deployers.json()['id']}"
    # editing what is already there is not a grant ...
    renamed = await client.patch(role_url, json={"description": "ship it"}, headers=manager.headers)
    assert renamed.status_code == 200
    # ... adding to it is
    widened = await client.patch(
        role_url, json={"permissions": ["api.deploy", "user.manage"]}, headers=manager.headers
    )
    assert widened.status_code == 403
    assert widened.json()["detail"] == DENIED + "user.manage"


async def test_groups_cannot_hand_out_more_than_their_editor_holds(
    client: httpx.AsyncClient, factory: Factory, org: Org, admin: Account
) -> None:
    manager = await limited_manager(client, factory, org, admin)
    roles = (
        await client.get(f"/api/orgs/{org.id}/roles?name=Administrator", headers=admin.headers)
    ).json()
    administrator = roles["items"][0]["id"]
    groups = f"/api/orgs/{org.id}/groups"

    self_promotion = await client.post(
        groups,
        json={"name": "Admins", "roleIds": [administrator], "memberIds": [str(manager.id)]},
        headers=manager.headers,
    )
    assert self_promotion.status_code == 403
    assert self_promotion.json()["detail"].startswith(DENIED)

    empty = await client.post(
        groups, json={"name": "Admins", "roleIds": [administrator]}, headers=manager.headers
    )
    assert empty.status_code == 201  # a group without members grants nothing
    joined = await client.patch(
        f"{groups}/{empty.json()['id']}",
        json={"memberIds": [str(manager.id)]},
        headers=manager.headers,
    )
    assert joined.status_code == 403

    mine = (await client.get(f"{groups}?name=Managers", headers=admin.headers)).json()["items"][0]
    widened = await client.patch(
        f"{groups}/{mine['id']}",
        json={"roleIds": [*mine["roleIds"], administrator]},
        headers=manager.headers,
    )
    assert widened.status_code == 403
    me = (await client.get("/api/me", headers=manager.headers)).json()
    assert "user.manage" not in me["orgs"][0]["permissions"]
