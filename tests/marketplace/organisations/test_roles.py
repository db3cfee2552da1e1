"""Organisation roles: the permission catalogue, predefined roles (immutable: 409), custom
roles (create, read, change, delete with their assignments), and a member's roles — direct,
team-inherited, the effective union — replaced, assigned and unassigned; each audited."""

from __future__ import annotations

import uuid
from typing import Any

import httpx
import pytest

from portico.core.audit import AuditEntry
from portico.marketplace.organisation.models import MemberRole, OrganisationRole, TeamRole
from tests.marketplace.conftest import SiteAccount, SiteFactory
from tests.marketplace.organisations.conftest import Portal, Rows, call


async def create_role(
    client: httpx.AsyncClient,
    who: SiteAccount,
    group: uuid.UUID,
    label: str,
    permissions: list[str],
) -> dict[str, Any]:
    response = await call(
        client,
        who,
        "POST",
        f"/organisations/{group}/roles",
        {"label": label, "permissions": permissions},
    )
    assert response.status_code == 201, response.text
    data: dict[str, Any] = response.json()["data"]
    return data


async def test_the_permission_catalogue_by_category(
    client: httpx.AsyncClient, manager: SiteAccount
) -> None:
    response = await call(client, manager, "GET", "/organisations/permissions")
    assert response.status_code == 200, response.text
    categories = response.json()["data"]
    assert [c["category"] for c in categories] == [
        "Organisation",
        "Members",
        "Teams",
        "Apps and subscriptions",
    ]
    members = categories[1]["permissions"]
    assert {"key": "invite members", "title": "Invite people to the organisation"} in members


async def test_custom_roles_are_created_read_changed_and_deleted(
    client: httpx.AsyncClient, manager: SiteAccount, partner: uuid.UUID, rows: Rows
) -> None:
    base = f"/organisations/{partner}/roles"
    response = await call(
        client,
        manager,
        "POST",
        base,
        {"label": " Billing ", "permissions": ["view analytics", "view apps", "view apps"]},
    )
    assert response.status_code == 201, response.text
    role = response.json()["data"]
    assert response.headers["location"] == f"/api/admin/v1{base}/{role['id']}"
    assert role["label"] == "Billing" and role["predefined"] is False
    assert role["permissions"] == ["view apps", "view analytics"]  # catalogue order, once
    assert role["organisation_id"] == str(partner)

    listed = await call(client, manager, "GET", base)
    assert listed.status_code == 200
    catalogue = listed.json()["data"]
    assert [(r["id"], r["predefined"]) for r in catalogue["roles"]] == [
        ("org-admin", True),
        ("org-member", True),
        (role["id"], False),
    ]
    assert "invite members" in catalogue["available_permissions"]
    assert (await call(client, manager, "GET", f"{base}/{role['id']}")).json()["data"] == role

    changed = await call(
        client, manager, "PATCH", f"{base}/{role['id']}", {"permissions": ["manage apps"]}
    )
    assert changed.status_code == 200, changed.text
    assert changed.json()["data"]["permissions"] == ["manage apps"]
    assert changed.json()["data"]["label"] == "Billing"

    taken = await call(client, manager, "POST", base, {"label": "Billing"})
    assert taken.status_code == 409
    assert taken.json()["detail"] == "the organisation has a role with this label"

    deleted = await call(client, manager, "DELETE", f"{base}/{role['id']}")
    assert deleted.status_code == 204
    assert (await call(client, manager, "GET", f"{base}/{role['id']}")).status_code == 404
    actions = [e.action for e in await rows(AuditEntry) if e.entity_type == "organisation_role"]
    assert sorted(actions) == [
        "organisation_role.create",
        "organisation_role.delete",
        "organisation_role.update",
    ]


@pytest.mark.parametrize("role", ["org-admin", "org-member"])
async def test_predefined_roles_are_read_but_never_changed(
    client: httpx.AsyncClient, manager: SiteAccount, partner: uuid.UUID, role: str
) -> None:
    path = f"/organisations/{partner}/roles/{role}"
    got = await call(client, manager, "GET", path)
    assert got.status_code == 200
    assert got.json()["data"]["predefined"] is True
    for method, body in (("PATCH", {"label": "Mine"}), ("DELETE", None)):
        refused = await call(client, manager, method, path, body)
        assert refused.status_code == 409, method
        assert refused.json()["detail"] == (
            f"{role} is a predefined role: it cannot be edited or deleted"
        )


async def test_bad_role_bodies_are_400_naming_the_field(
    client: httpx.AsyncClient, manager: SiteAccount, partner: uuid.UUID, rows: Rows
) -> None:
    base = f"/organisations/{partner}/roles"
    for body, pointer in [
        ({}, "/label"),
        ({"label": "  "}, "/label"),
        ({"label": "x", "permissions": ["fly"]}, "/permissions/0"),
        ({"label": "x", "permissions": "view apps"}, "/permissions"),
        ({"label": "x", "grants": []}, "/grants"),
    ]:
        refused = await call(client, manager, "POST", base, body)
        assert refused.status_code == 400, body
        assert pointer in [e.get("pointer") for e in refused.json()["errors"]], body
    assert await rows(OrganisationRole) == []


async def test_roles_of_other_organisations_or_no_role_are_404(
    client: httpx.AsyncClient, manager: SiteAccount, portal: Portal, partner: uuid.UUID
) -> None:
    other = await portal.organisation("Elsewhere")
    theirs = await create_role(client, manager, other, "Theirs", [])
    for role in (theirs["id"], str(uuid.uuid4()), "org-owner"):
        for method, body in (("GET", None), ("PATCH", {}), ("DELETE", None)):
            missing = await call(
                client, manager, method, f"/organisations/{partner}/roles/{role}", body
            )
            assert missing.status_code == 404, (role, method)
            assert missing.json()["detail"] == "role not found"
    nowhere = await call(client, manager, "GET", f"/organisations/{uuid.uuid4()}/roles")
    assert nowhere.status_code == 404


async def test_direct_team_inherited_and_effective_permissions(
    client: httpx.AsyncClient, manager: SiteAccount, portal: Portal, partner: uuid.UUID
) -> None:
    billing = await create_role(client, manager, partner, "Billing", ["view analytics"])
    red = await portal.team(partner, "Red")
    blue = await portal.team(partner, "Blue")
    _, relationship = await portal.member(partner, "ada@example.com", red, blue)
    async with portal.database.session() as session, session.begin():
        session.add(TeamRole(team_id=red, role="org-member"))
        session.add(TeamRole(team_id=red, role=billing["id"]))
        session.add(MemberRole(membership_id=relationship, role=billing["id"]))
    path = f"/organisations/{partner}/members/{relationship}/roles"

    response = await call(client, manager, "GET", path)
    assert response.status_code == 200, response.text
    roles = response.json()["data"]
    assert roles["relationship"] == str(relationship)
    assert roles["direct"] == [{"id": billing["id"], "label": "Billing", "predefined": False}]
    [inherited] = roles["inherited"]  # Blue gives no role
    assert inherited["team"] == {"id": str(red), "name": "Red"}
    assert {r["id"] for r in inherited["roles"]} == {"org-member", billing["id"]}
    assert roles["permissions"] == [
        "view organisation",
        "view members",
        "view teams",
        "view apps",
        "request subscriptions",
        "view analytics",
    ]


async def test_replace_assign_and_unassign_a_members_roles(
    client: httpx.AsyncClient,
    manager: SiteAccount,
    portal: Portal,
    partner: uuid.UUID,
    rows: Rows,
) -> None:
    billing = await create_role(client, manager, partner, "Billing", ["view analytics"])
    support = await create_role(client, manager, partner, "Support", ["view members"])
    theirs = await create_role(client, manager, await portal.organisation("Other"), "X", [])
    _, relationship = await portal.member(partner, "ada@example.com")
    member = f"/organisations/{partner}/members/{relationship}"

    replaced = await call(
        client, manager, "PATCH", f"{member}/roles", {"roles": ["org-admin", billing["id"]]}
    )
    assert replaced.status_code == 200, replaced.text
    assert [r["id"] for r in replaced.json()["data"]["direct"]] == sorted(
        ["org-admin", billing["id"]]
    )
    refused = await call(
        client, manager, "PATCH", f"{member}/roles", {"roles": ["org-member", theirs["id"], "boss"]}
    )
    assert refused.status_code == 400
    assert [e["pointer"] for e in refused.json()["errors"]] == ["/roles/1", "/roles/2"]

    assigned = await call(client, manager, "POST", f"{member}/custom-roles/{support['id']}")
    assert assigned.status_code == 200, assigned.text
    assert {r["id"] for r in assigned.json()["data"]["direct"]} == {
        "org-admin",
        billing["id"],
        support["id"],
    }
    again = await call(client, manager, "POST", f"{member}/custom-roles/{support['id']}")
    assert again.status_code == 200 and again.json()["data"] == assigned.json()["data"]
    predefined = await call(client, manager, "POST", f"{member}/custom-roles/org-member")
    assert predefined.status_code == 409

    removed = await call(client, manager, "DELETE", f"{member}/custom-roles/{support['id']}")
    assert removed.status_code == 204
    gone = await call(client, manager, "DELETE", f"{member}/custom-roles/{support['id']}")
    assert gone.status_code == 404
    assert gone.json()["detail"] == "the member does not hold this role directly"

    # deleting a role takes it from everyone who held it
    await call(client, manager, "DELETE", f"/organisations/{partner}/roles/{billing['id']}")
    assert [r.role for r in await rows(MemberRole)] == ["org-admin"]
    actions = sorted(e.action for e in await rows(AuditEntry) if e.action.startswith("membership."))
    assert actions == [
        "membership.role_assign",
        "membership.role_unassign",
        "membership.roles_replace",
    ]

    # another organisation's relationship is not found through this one
    _, elsewhere = await portal.member(await portal.organisation("Third"), "bob@example.com")
    missing = await call(
        client, manager, "GET", f"/organisations/{partner}/members/{elsewhere}/roles"
    )
    assert missing.status_code == 404
    assert missing.json()["detail"] == "relationship not found"


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("GET", "/organisations/permissions"),
        ("GET", "/organisations/{group}/roles"),
        ("POST", "/organisations/{group}/roles"),
        ("GET", "/organisations/{group}/roles/org-admin"),
        ("PATCH", "/organisations/{group}/roles/org-admin"),
        ("DELETE", "/organisations/{group}/roles/org-admin"),
        ("GET", "/organisations/{group}/members/{relationship}/roles"),
        ("PATCH", "/organisations/{group}/members/{relationship}/roles"),
        ("POST", "/organisations/{group}/members/{relationship}/custom-roles/org-admin"),
        ("DELETE", "/organisations/{group}/members/{relationship}/custom-roles/org-admin"),
    ],
)
async def test_each_role_endpoint_needs_manage_org_members(
    client: httpx.AsyncClient,
    site: SiteFactory,
    portal: Portal,
    partner: uuid.UUID,
    method: str,
    path: str,
) -> None:
    _, relationship = await portal.member(partner, "ada@example.com")
    concrete = path.format(group=partner, relationship=relationship)
    body = {"label": "x"} if method == "POST" and path.endswith("/roles") else None
    body = {"roles": []} if method == "PATCH" else body
    # an API manager holds the baseline, and none of the organisation permissions
    refused = await call(client, await site.account("api_manager"), method, concrete, body)
    assert refused.status_code == 403, refused.text
    assert refused.json()["detail"] == "missing permission 'manage org members'"
