"""Reading organisations, their members and teams: ``/organisations``,
``/organisations/{group}``, ``.../members``, ``.../teams``, ``.../teams/{team}/members``;
the permissions that guard them, 404s for ids that name nothing or another organisation's,
and ``member_organisations`` (what the portal's visibility filter will ask)."""

from __future__ import annotations

import uuid

import httpx
import pytest

from portico.core.account import AccountStatus
from portico.core.db.engine import Database
from portico.marketplace.organisation import service as organisation_service
from portico.marketplace.organisation.models import (
    PORTAL_OWNER,
    MembershipStatus,
    OrganisationMembership,
)
from tests.marketplace.conftest import SiteAccount, SiteFactory
from tests.marketplace.organisations.conftest import Portal, call

MEMBER_FIELDS = {
    "id",
    "organisation_id",
    "user",
    "status",
    "status_reason",
    "status_changed_at",
    "teams",
    "invited_by",
    "created_at",
}


def emails(response: httpx.Response) -> list[str]:
    assert response.status_code == 200, response.text
    return [m["user"]["email"] for m in response.json()["data"]]


async def test_organisations_with_their_counts(
    client: httpx.AsyncClient, manager: SiteAccount, portal: Portal, partner: uuid.UUID
) -> None:
    red = await portal.team(partner, "Red")
    await portal.team(partner, "Blue")
    await portal.member(partner, "ada@example.com", red)
    await portal.registration(partner, "bob@example.com")

    listed = await call(client, manager, "GET", "/organisations")
    assert listed.status_code == 200, listed.text
    body = listed.json()
    assert [o["name"] for o in body["data"]] == ["Partner", PORTAL_OWNER]
    assert body["meta"] == {"count": 2, "page": 1, "limit": 50, "pages": 1}
    one = body["data"][0]
    assert one["domains"] == ["partner.example.com"]
    assert (one["members"], one["pending_approvals"], one["teams"]) == (1, 1, 2)

    named = await call(client, manager, "GET", "/organisations?filter[name]=OWN&sort=-name")
    assert [o["name"] for o in named.json()["data"]] == [PORTAL_OWNER]

    got = await call(client, manager, "GET", f"/organisations/{partner}")
    assert got.status_code == 200
    assert got.json()["data"] == one

    for bad, parameter in (
        ("/organisations?filter[colour]=red", "filter[colour]"),
        ("/organisations?sort=colour", "sort"),
        ("/organisations?filter[name]=%20", "filter[name]"),  # would match everything
    ):
        refused = await call(client, manager, "GET", bad)
        assert refused.status_code == 400, bad
        assert refused.json()["errors"][0]["parameter"] == parameter


async def test_members_list_filters_and_sorts(
    client: httpx.AsyncClient, manager: SiteAccount, portal: Portal, partner: uuid.UUID
) -> None:
    red = await portal.team(partner, "Red")
    blue = await portal.team(partner, "Blue")
    _, ada = await portal.member(partner, "ada@example.com", red, blue)
    await portal.member(partner, "carol@example.com")
    await portal.registration(partner, "bob@example.com")
    other = await portal.organisation("Elsewhere")
    await portal.member(other, "dave@example.com")
    base = f"/organisations/{partner}/members"

    listed = await call(client, manager, "GET", base)
    assert emails(listed) == ["ada@example.com", "bob@example.com", "carol@example.com"]
    first = listed.json()["data"][0]
    assert set(first) == MEMBER_FIELDS
    assert first["id"] == str(ada) and first["status"] == "active"
    assert [t["name"] for t in first["teams"]] == ["Blue", "Red"]
    assert first["user"]["status"] == "active"

    assert emails(await call(client, manager, "GET", f"{base}?filter[status]=pending")) == [
        "bob@example.com"
    ]
    assert emails(await call(client, manager, "GET", f"{base}?filter[team]={red}")) == [
        "ada@example.com"
    ]
    assert emails(await call(client, manager, "GET", f"{base}?filter[email]=CAR")) == [
        "carol@example.com"
    ]
    assert emails(await call(client, manager, "GET", f"{base}?sort=-email&limit=1")) == [
        "carol@example.com"
    ]

    refused = await call(client, manager, "GET", f"{base}?filter[status]=asleep&filter[team]=nope")
    assert refused.status_code == 400
    assert {e["parameter"] for e in refused.json()["errors"]} == {
        "filter[status]",
        "filter[team]",
    }


async def test_teams_and_team_members(
    client: httpx.AsyncClient, manager: SiteAccount, portal: Portal, partner: uuid.UUID
) -> None:
    red = await portal.team(partner, "Red")
    await portal.team(partner, "Blue")
    await portal.member(partner, "ada@example.com", red)
    await portal.member(partner, "carol@example.com", red)
    await portal.member(partner, "bob@example.com")
    other = await portal.organisation("Elsewhere")
    theirs = await portal.team(other, "Theirs")

    teams = await call(client, manager, "GET", f"/organisations/{partner}/teams")
    assert teams.status_code == 200, teams.text
    assert [(t["name"], t["members"]) for t in teams.json()["data"]] == [("Blue", 0), ("Red", 2)]
    assert teams.json()["data"][1]["organisation_id"] == str(partner)
    named = await call(client, manager, "GET", f"/organisations/{partner}/teams?filter[name]=re")
    assert [t["name"] for t in named.json()["data"]] == ["Red"]

    members = await call(client, manager, "GET", f"/organisations/{partner}/teams/{red}/members")
    assert emails(members) == ["ada@example.com", "carol@example.com"]
    # another organisation's team is not found through this one
    for team in (theirs, uuid.uuid4(), "not-a-uuid"):
        missing = await call(
            client, manager, "GET", f"/organisations/{partner}/teams/{team}/members"
        )
        assert missing.status_code == 404, team
        assert missing.json()["detail"] == "team not found"


@pytest.mark.parametrize(
    ("method", "path", "permission"),
    [
        ("GET", "/organisations", "administer marketplace organisations"),
        ("GET", "/organisations/{group}", "administer marketplace organisations"),
        ("GET", "/organisations/{group}/members", "manage org members"),
        ("POST", "/organisations/{group}/members/invite", "manage org members"),
        ("DELETE", "/organisations/{group}/members/{relationship}", "manage org members"),
        ("GET", "/organisations/{group}/teams", "manage org teams"),
        ("GET", "/organisations/{group}/teams/{team}/members", "manage org teams"),
        ("GET", "/organisations/{group}/approvals", "manage org members"),
        ("POST", "/organisations/{group}/approvals/{relationship}/approve", "manage org members"),
        ("POST", "/organisations/{group}/approvals/{relationship}/reject", "manage org members"),
    ],
)
async def test_each_endpoint_needs_its_permission(
    client: httpx.AsyncClient,
    site: SiteFactory,
    portal: Portal,
    partner: uuid.UUID,
    method: str,
    path: str,
    permission: str,
) -> None:
    team = await portal.team(partner, "Red")
    _, relationship = await portal.registration(partner, "bob@example.com")
    concrete = path.format(group=partner, relationship=relationship, team=team)
    body = {"emails": ["x@example.com"]} if path.endswith("/invite") else None
    body = {"reason": "no"} if path.endswith("/reject") else body
    # an API manager holds the baseline, and none of the organisation permissions
    api_manager = await site.account("api_manager")
    refused = await call(client, api_manager, method, concrete, body)
    assert refused.status_code == 403, refused.text
    assert refused.json()["detail"] == f"missing permission '{permission}'"
    anonymous = await client.request(method, "/api/admin/v1" + concrete, json=body)
    assert anonymous.status_code == 401


@pytest.mark.parametrize(
    ("method", "suffix"),
    [
        ("GET", ""),
        ("GET", "/members"),
        ("GET", "/teams"),
        ("GET", "/approvals"),
        ("POST", "/members/invite"),
    ],
)
async def test_organisation_ids_that_name_nothing_are_404(
    client: httpx.AsyncClient, manager: SiteAccount, method: str, suffix: str
) -> None:
    body = {"emails": ["x@example.com"]} if suffix.endswith("invite") else None
    for group in (uuid.uuid4(), "not-a-uuid"):
        missing = await call(client, manager, method, f"/organisations/{group}{suffix}", body)
        assert missing.status_code == 404, (group, missing.text)
        assert missing.json()["detail"] == "organisation not found"


async def test_member_organisations_counts_active_memberships_only(
    database: Database, portal: Portal, partner: uuid.UUID
) -> None:
    red = await portal.team(partner, "Red")
    blue = await portal.team(partner, "Blue")
    other = await portal.organisation("Elsewhere")
    third = await portal.organisation("Third")
    ada, _ = await portal.member(partner, "ada@example.com", red, blue)
    async with database.session() as session, session.begin():
        session.add(
            OrganisationMembership(
                organisation_id=other, user_id=ada.id, status=MembershipStatus.ACTIVE
            )
        )
        session.add(
            OrganisationMembership(
                organisation_id=third, user_id=ada.id, status=MembershipStatus.INVITED
            )
        )
    bob, _ = await portal.registration(partner, "bob@example.com", account=AccountStatus.ACTIVE)

    async with database.session() as session:
        assert await organisation_service.member_organisations(session, ada.id) == {
            partner: {red, blue},
            other: set(),
        }
        assert await organisation_service.member_organisations(session, bob.id) == {}
