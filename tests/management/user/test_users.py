"""Org users over HTTP: reading, changing roles and groups, removal, bad input, permissions,
tenancy, the last-Administrator guard and the audit trail."""

from __future__ import annotations

import uuid

import httpx
from sqlalchemy import func, select

from portico.core.account import AccountStatus, User
from portico.core.db.engine import Database
from portico.management.group.models import Group
from portico.management.org.models import Membership
from portico.management.user.models import Invitation
from tests.conftest import Account, Factory, Org
from tests.management.user.support import MakeGroup, MakeRole, RoleId

LAST_ADMINISTRATOR = "the organisation must keep at least one Administrator"


def url(org: Org, suffix: str = "") -> str:
    return f"/api/orgs/{org.id}/users{suffix}"


async def invite(
    client: httpx.AsyncClient, org: Org, who: Account, **body: object
) -> httpx.Response:
    return await client.post(url(org), json=body, headers=who.headers)


async def group_member_ids(database: Database, group_id: uuid.UUID) -> set[uuid.UUID]:
    async with database.session() as session:
        group = await session.get(Group, group_id)
        assert group is not None
        return {m.user_id for m in group.members}


async def test_invite_read_list_update_remove(
    client: httpx.AsyncClient,
    org: Org,
    admin: Account,
    role_id: RoleId,
    make_group: MakeGroup,
    database: Database,
) -> None:
    viewer_role, publisher_role = await role_id(org, "Viewer"), await role_id(org, "API Publisher")
    ops, dev = await make_group(org, "ops"), await make_group(org, "dev")
    created = await invite(
        client,
        org,
        admin,
        email="bob@example.com",
        roleIds=[str(viewer_role)],
        groupIds=[str(ops), str(dev)],
        displayName="Bob",
    )
    assert created.status_code == 201, created.text
    bob = created.json()
    assert bob["displayName"] == "Bob"
    assert bob["groupIds"] == [str(dev), str(ops)]  # ordered by group name
    assert await group_member_ids(database, ops) == {uuid.UUID(bob["id"])}
    assert (await invite(client, org, admin, email="alice@example.com")).status_code == 201

    def emails(response: httpx.Response) -> list[str]:
        assert response.status_code == 200, response.text
        return [u["email"] for u in response.json()["items"]]

    listed = await client.get(url(org), headers=admin.headers)
    assert emails(listed) == ["admin@acme.example.com", "alice@example.com", "bob@example.com"]
    assert listed.json()["total"] == 3 and listed.json()["size"] == 20
    listed_bob = listed.json()["items"][2]
    assert "invitation" not in listed_bob
    administrator = listed.json()["items"][0]
    assert [r["name"] for r in administrator["roles"]] == ["Administrator"]
    assert administrator["invitedAt"] is None and administrator["status"] == "active"

    async def query(suffix: str) -> list[str]:
        return emails(await client.get(url(org) + suffix, headers=admin.headers))

    assert await query("?email=BOB@example.com") == ["bob@example.com"]
    assert await query("?status=invited") == ["alice@example.com", "bob@example.com"]
    assert await query("?status=active&sort=-email") == ["admin@acme.example.com"]
    assert await query("?sort=-email&size=1&page=2") == ["alice@example.com"]
    assert (await query("?sort=createdAt"))[0] == "admin@acme.example.com"
    assert (await query("?sort=-createdAt"))[-1] == "admin@acme.example.com"
    for bad, parameter in (("?status=gone", "status"), ("?role=x", "role"), ("?sort=name", "sort")):
        response = await client.get(url(org) + bad, headers=admin.headers)
        assert response.status_code == 400, bad
        assert response.json()["errors"][0]["parameter"] == parameter

    got = await client.get(url(org, f"/{bob['id']}"), headers=admin.headers)
    assert got.status_code == 200 and got.json() == listed_bob
    assert {k: v for k, v in bob.items() if k != "invitation"} == listed_bob

    patched = await client.patch(
        url(org, f"/{bob['id']}"),
        json={"roleIds": [str(publisher_role)], "groupIds": [str(ops)], "displayName": "Robert"},
        headers=admin.headers,
    )
    assert patched.status_code == 200, patched.text
    assert patched.json()["roles"] == [{"id": str(publisher_role), "name": "API Publisher"}]
    assert patched.json()["groupIds"] == [str(ops)]
    assert patched.json()["displayName"] == "Robert"
    assert await group_member_ids(database, dev) == set()
    unchanged = await client.patch(url(org, f"/{bob['id']}"), json={}, headers=admin.headers)
    assert unchanged.json() == patched.json()
    cleared = await client.patch(
        url(org, f"/{bob['id']}"), json={"roleIds": [], "groupIds": []}, headers=admin.headers
    )
    assert cleared.json()["roles"] == [] and cleared.json()["groupIds"] == []
    await client.patch(
        url(org, f"/{bob['id']}"), json={"groupIds": [str(ops)]}, headers=admin.headers
    )

    removed = await client.delete(url(org, f"/{bob['id']}"), headers=admin.headers)
    assert removed.status_code == 204
    missing = await client.get(url(org, f"/{bob['id']}"), headers=admin.headers)
    assert missing.status_code == 404
    assert missing.headers["content-type"] == "application/problem+json"
    assert missing.json()["detail"] == "user not found"
    assert await group_member_ids(database, ops) == set()
    async with database.session() as session:
        account = await session.get(User, uuid.UUID(bob["id"]))
        invitations = await session.scalar(
            select(func.count())
            .select_from(Invitation)
            .where(Invitation.user_id == uuid.UUID(bob["id"]))
        )
    assert account is not None and account.status is AccountStatus.INVITED  # the account stays
    assert invitations == 0  # its pending invitation went with the membership

    # the remaining account is reused when invited again
    again = await invite(client, org, admin, email="bob@example.com")
    assert again.status_code == 201 and again.json()["id"] == bob["id"]
    assert again.json()["roles"] == [] and again.json()["groupIds"] == []


async def test_bad_input_is_a_400_naming_the_field_and_stores_nothing(
    client: httpx.AsyncClient,
    factory: Factory,
    org: Org,
    admin: Account,
    role_id: RoleId,
    make_group: MakeGroup,
    database: Database,
) -> None:
    viewer = str(await role_id(org, "Viewer"))
    other_org = await factory.org()
    foreign_role = str(await role_id(other_org, "Viewer"))
    foreign_group = str(await make_group(other_org, "theirs"))
    email = "someone@example.com"
    cases: list[tuple[dict[str, object], str, str | None]] = [
        ({}, "/email", "required property 'email' not found"),
        ({"email": 5}, "/email", "$.email: string expected"),
        ({"email": "not-an-email"}, "/email", None),
        ({"email": "someone@localhost"}, "/email", None),
        ({"email": "a" * 250 + "@example.com"}, "/email", None),
        ({"email": email, "roleIds": viewer}, "/roleIds", "$.roleIds: array expected"),
        ({"email": email, "roleIds": ["nope"]}, "/roleIds/0", None),
        ({"email": email, "roleIds": [5]}, "/roleIds/0", None),
        ({"email": email, "roleIds": [viewer, viewer]}, "/roleIds", None),
        ({"email": email, "roleIds": [viewer, str(uuid.uuid4())]}, "/roleIds/1", None),
        ({"email": email, "roleIds": [foreign_role]}, "/roleIds/0", None),
        ({"email": email, "groupIds": [foreign_group]}, "/groupIds/0", None),
        ({"email": email, "displayName": "x" * 201}, "/displayName", None),
        ({"email": email, "role_ids": []}, "/role_ids", "property 'role_ids' is not allowed"),
        ({"email": email, "admin": True}, "/admin", "property 'admin' is not allowed"),
    ]
    for body, pointer, detail in cases:
        response = await invite(client, org, admin, **body)
        assert response.status_code == 400, (body, response.text)
        assert response.headers["content-type"] == "application/problem+json"
        problem = response.json()
        assert pointer in [e["pointer"] for e in problem["errors"]], (body, problem)
        if detail is not None:
            assert problem["detail"] == detail

    member = (await invite(client, org, admin, email="member@example.com")).json()
    member.pop("invitation")
    patches: list[tuple[dict[str, object], str]] = [
        ({"roleIds": ["nope"]}, "/roleIds/0"),
        ({"roleIds": [str(uuid.uuid4())]}, "/roleIds/0"),
        ({"groupIds": [foreign_group]}, "/groupIds/0"),
        ({"email": "x@example.com"}, "/email"),
        ({"status": "active"}, "/status"),
        ({"displayName": None, "roles": []}, "/roles"),
    ]
    for patch, pointer in patches:
        response = await client.patch(
            url(org, f"/{member['id']}"), json=patch, headers=admin.headers
        )
        assert response.status_code == 400, (patch, response.text)
        assert pointer in [e["pointer"] for e in response.json()["errors"]]
    after = await client.get(url(org, f"/{member['id']}"), headers=admin.headers)
    assert after.json() == member

    async with database.session() as session:
        assert await session.scalar(select(User).where(User.email == email)) is None
        memberships = await session.scalar(
            select(func.count()).select_from(Membership).where(Membership.org_id == org.id)
        )
        invitations = await session.scalar(select(func.count()).select_from(Invitation))
    assert memberships == 2 and invitations == 1  # the admin and member@, nothing else


async def test_permissions_and_tenancy(
    client: httpx.AsyncClient,
    factory: Factory,
    org: Org,
    admin: Account,
    viewer: Account,
    make_role: MakeRole,
) -> None:
    member = (await invite(client, org, admin, email="member@example.com")).json()
    one = url(org, f"/{member['id']}")
    assert (await client.get(url(org), headers=viewer.headers)).status_code == 200
    assert (await client.get(one, headers=viewer.headers)).status_code == 200
    for method, path, body in [
        ("POST", url(org), {"email": "x@example.com"}),
        ("PATCH", one, {"displayName": "x"}),
        ("DELETE", one, None),
        ("POST", one + "/invitation", None),
    ]:
        denied = await client.request(method, path, json=body, headers=viewer.headers)
        assert denied.status_code == 403, (method, path)
        assert denied.json()["detail"] == "missing permission 'user.manage'"
    await make_role(org, "Nothing", [])
    nobody = await factory.user(org, roles=("Nothing",))
    denied = await client.get(url(org), headers=nobody.headers)
    assert denied.status_code == 403
    assert denied.json()["detail"] == "missing permission 'user.read'"
    assert (await client.get(url(org))).status_code == 401
    assert (await client.post(url(org), json={"email": "x@example.com"})).status_code == 401

    other_org = await factory.org()
    outsider = await factory.user(other_org, roles=("Administrator",))
    for path in (
        url(org, f"/{uuid.uuid4()}"),
        url(org, "/not-a-uuid"),
        url(org, f"/{outsider.id}"),  # an account that exists, in another organisation
        url(other_org, f"/{member['id']}"),  # our member, through the outsider's own org
    ):
        who = outsider if path.startswith(url(other_org)) else admin
        for method in ("GET", "PATCH", "DELETE"):
            body = {} if method == "PATCH" else None
            response = await client.request(method, path, json=body, headers=who.headers)
            assert response.status_code == 404, (method, path, response.text)
        reissue = await client.post(path + "/invitation", headers=who.headers)
        assert reissue.status_code == 404, path
    assert (await client.get(url(org), headers=outsider.headers)).status_code == 404
    assert (await client.get(one, headers=admin.headers)).status_code == 200  # untouched


async def test_the_last_administrator_stays(
    client: httpx.AsyncClient, org: Org, admin: Account, role_id: RoleId
) -> None:
    administrator, viewer_role = await role_id(org, "Administrator"), await role_id(org, "Viewer")
    me = url(org, f"/{admin.id}")
    demote = await client.patch(me, json={"roleIds": [str(viewer_role)]}, headers=admin.headers)
    assert demote.status_code == 409
    assert demote.json()["detail"] == LAST_ADMINISTRATOR
    leave = await client.delete(me, headers=admin.headers)
    assert leave.status_code == 409 and leave.json()["detail"] == LAST_ADMINISTRATOR
    both = await client.patch(
        me,
        json={"roleIds": [str(viewer_role), str(administrator)], "displayName": "Boss"},
        headers=admin.headers,
    )
    assert both.status_code == 200, both.text
    assert both.json()["displayName"] == "Boss"

    # an invited Administrator who has not accepted yet does not count
    second = (
        await invite(client, org, admin, email="second@example.com", roleIds=[str(administrator)])
    ).json()
    refused = await client.patch(me, json={"roleIds": []}, headers=admin.headers)
    assert refused.status_code == 409
    accepted = await client.post(
        "/api/auth/accept-invitation",
        json={"token": second["invitation"]["token"], "password": "a long enough passphrase"},
    )
    assert accepted.status_code == 200
    second_headers = {"Authorization": f"Bearer {accepted.json()['token']}"}

    assert (await client.patch(me, json={"roleIds": []}, headers=admin.headers)).status_code == 200
    # the first one can no longer manage users; the second is now the last Administrator
    assert (await client.delete(me, headers=admin.headers)).status_code == 403
    own = url(org, f"/{second['id']}")
    last = await client.delete(own, headers=second_headers)
    assert last.status_code == 409 and last.json()["detail"] == LAST_ADMINISTRATOR
    assert (await client.delete(me, headers=second_headers)).status_code == 204
    demote_self = await client.patch(own, json={"roleIds": []}, headers=second_headers)
    assert demote_self.status_code == 409


async def test_a_caller_may_leave_when_another_administrator_remains(
    client: httpx.AsyncClient, factory: Factory, org: Org, admin: Account
) -> None:
    await factory.user(org, roles=("Administrator",))
    assert (await client.delete(url(org, f"/{admin.id}"), headers=admin.headers)).status_code == 204
    assert (await client.get(url(org), headers=admin.headers)).status_code == 404


async def test_no_one_grants_permissions_they_do_not_hold(
    client: httpx.AsyncClient,
    factory: Factory,
    org: Org,
    admin: Account,
    role_id: RoleId,
    make_role: MakeRole,
    make_group: MakeGroup,
    database: Database,
) -> None:
    await make_role(org, "People manager", ["user.read", "user.manage", "environment.read"])
    env_reader = await make_role(org, "Env reader", ["environment.read"])
    administrator = await role_id(org, "Administrator")
    admins = await make_group(org, "admins", (administrator,))
    manager = await factory.user(org, roles=("People manager",))

    for body in ({"roleIds": [str(administrator)]}, {"groupIds": [str(admins)]}):
        denied = await invite(client, org, manager, email="climber@example.com", **body)
        assert denied.status_code == 403, denied.text
        assert denied.json()["detail"].startswith("cannot grant permissions you do not hold: ")
        assert "role.manage" in denied.json()["detail"]
    async with database.session() as session:
        assert await session.scalar(select(User).where(User.email == "climber@example.com")) is None

    ok = await invite(client, org, manager, email="reader@example.com", roleIds=[str(env_reader)])
    assert ok.status_code == 201, ok.text
    promote = await client.patch(
        url(org, f"/{manager.id}"), json={"roleIds": [str(administrator)]}, headers=manager.headers
    )
    assert promote.status_code == 403
    # roles already held are not "granted" again: the manager may still edit an Administrator
    kept = await client.patch(
        url(org, f"/{admin.id}"),
        json={"roleIds": [str(administrator)], "displayName": "Chief"},
        headers=manager.headers,
    )
    assert kept.status_code == 200, kept.text


async def test_every_change_is_audited_without_the_token(
    client: httpx.AsyncClient, org: Org, admin: Account, role_id: RoleId
) -> None:
    viewer_role = await role_id(org, "Viewer")
    invited = (await invite(client, org, admin, email="audited@example.com")).json()
    user_id = invited["id"]
    reissued = (await client.post(url(org, f"/{user_id}/invitation"), headers=admin.headers)).json()
    await client.patch(
        url(org, f"/{user_id}"), json={"roleIds": [str(viewer_role)]}, headers=admin.headers
    )
    await client.delete(url(org, f"/{user_id}"), headers=admin.headers)

    response = await client.get(
        f"/api/orgs/{org.id}/audit-log?entityId={user_id}", headers=admin.headers
    )
    log = response.json()["items"]
    assert [e["action"] for e in log] == [
        "user.remove",
        "user.update",
        "user.reinvite",
        "user.invite",
    ]
    assert all(e["actor"]["email"] == admin.email for e in log)
    assert all(e["entityType"] == "user" for e in log)
    remove, update, _reinvite, create = log
    assert create["before"] is None and create["after"]["email"] == "audited@example.com"
    assert "invitation" not in create["after"]
    assert update["before"]["roleIds"] == [] and update["after"]["roleIds"] == [str(viewer_role)]
    assert remove["before"]["id"] == user_id and remove["after"] is None
    for token in (invited["invitation"]["token"], reissued["token"]):
        assert token not in response.text
