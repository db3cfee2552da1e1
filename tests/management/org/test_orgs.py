"""Organisations: listing what the caller may see, creation by platform admins, renaming."""

from __future__ import annotations

import httpx

from tests.conftest import Account, Factory, Org


async def test_a_new_org_has_the_predefined_roles_and_its_creator_as_administrator(
    client: httpx.AsyncClient, factory: Factory
) -> None:
    platform = await factory.user(platform_admin=True)
    created = await client.post(
        "/api/orgs", json={"name": "Globex", "description": "d"}, headers=platform.headers
    )
    assert created.status_code == 201, created.text
    org = created.json()
    me = (await client.get("/api/me", headers=platform.headers)).json()
    mine = next(o for o in me["orgs"] if o["id"] == org["id"])
    assert mine["roles"] == ["Administrator"]
    duplicate = await client.post("/api/orgs", json={"name": "Globex"}, headers=platform.headers)
    assert duplicate.status_code == 409


async def test_rename_needs_org_manage_and_is_audited(
    client: httpx.AsyncClient, org: Org, admin: Account, viewer: Account
) -> None:
    url = f"/api/orgs/{org.id}"
    denied = await client.patch(url, json={"name": "Acme 2"}, headers=viewer.headers)
    assert denied.status_code == 403
    assert denied.json()["detail"] == "missing permission 'org.manage'"
    renamed = await client.patch(url, json={"name": "Acme 2"}, headers=admin.headers)
    assert renamed.status_code == 200
    assert renamed.json()["name"] == "Acme 2"
    bad = await client.patch(url, json={"name": ""}, headers=admin.headers)
    assert bad.status_code == 400
    assert bad.json()["errors"][0]["pointer"] == "/name"
    log = (await client.get(f"{url}/audit-log?action=org.update", headers=admin.headers)).json()
    assert log["total"] == 1
    assert log["items"][0]["before"]["name"] == "Acme"
    assert log["items"][0]["after"]["name"] == "Acme 2"


async def test_platform_admins_see_every_org_members_only_their_own(
    client: httpx.AsyncClient, factory: Factory, org: Org, admin: Account
) -> None:
    other = await factory.org("Zeta")
    platform = await factory.user(platform_admin=True)
    everything = (await client.get("/api/orgs", headers=platform.headers)).json()
    assert [o["name"] for o in everything["items"]] == ["Acme", "Zeta"]
    mine = (await client.get("/api/orgs", headers=admin.headers)).json()
    assert [o["name"] for o in mine["items"]] == ["Acme"]
    # a platform admin acts in any org with every permission, and it is audited as them
    created = await client.post(
        f"/api/orgs/{other.id}/envs", json={"name": "p"}, headers=platform.headers
    )
    assert created.status_code == 201
    sorted_desc = (await client.get("/api/orgs?sort=-name", headers=platform.headers)).json()
    assert [o["name"] for o in sorted_desc["items"]] == ["Zeta", "Acme"]
    assert (await client.get("/api/orgs?colour=1", headers=platform.headers)).status_code == 400
