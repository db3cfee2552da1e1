"""Signing in on the portal: the admin API's token exchange (same bodies, answers, budgets
and problems), its tokens good on both surfaces, and ``GET /me``."""

from __future__ import annotations

import httpx
from sqlalchemy import select

from portico.core.account import AccountStatus
from portico.core.audit import AuditEntry
from portico.core.db.engine import Database
from portico.core.settings import Settings
from portico.marketplace.organisation.models import (
    MemberRole,
    MembershipStatus,
    OrganisationMembership,
    TeamRole,
)
from tests.conftest import TEST_PASSWORD
from tests.marketplace.auth.conftest import enable_issuance
from tests.marketplace.conftest import SiteFactory
from tests.portal.conftest import Catalogue, Rows, url

ADMIN = "/api/admin/v1"


async def sign_in(client: httpx.AsyncClient, email: str, password: str) -> httpx.Response:
    return await client.post(url("/auth/token"), json={"email": email, "password": password})


async def test_sign_in_refresh_and_me(
    client: httpx.AsyncClient,
    database: Database,
    settings: Settings,
    site: SiteFactory,
    catalogue: Catalogue,
    rows: Rows,
) -> None:
    acme = await catalogue.organisation("Acme")
    red = await catalogue.team(acme, "Red")
    person = await site.account(email="dev@example.com")
    await catalogue.member(acme, red, who=person)
    globex = await catalogue.organisation("Globex")
    await catalogue.member(globex, who=person, status=MembershipStatus.INVITED)

    # issuance is off until an operator sets the web API key: as on the admin API
    disabled = await sign_in(client, "dev@example.com", TEST_PASSWORD)
    assert disabled.status_code == 503
    assert disabled.json()["type"].endswith("/token-issuance-disabled")
    await enable_issuance(database, settings)

    wrong = await sign_in(client, "dev@example.com", "not the password")
    unknown = await sign_in(client, "nobody@example.com", TEST_PASSWORD)
    assert wrong.status_code == unknown.status_code == 401
    assert wrong.json()["detail"] == unknown.json()["detail"] == "invalid email or password"

    signed_in = await sign_in(client, "DEV@example.com", TEST_PASSWORD)
    assert signed_in.status_code == 200, signed_in.text
    assert signed_in.headers["cache-control"] == "no-store"
    tokens = signed_in.json()["data"]
    assert set(tokens) == {"id_token", "refresh_token", "token_type", "expires_in"}
    bearer = {"Authorization": f"Bearer {tokens['id_token']}"}

    me = await client.get(url("/me"), headers=bearer)
    assert me.status_code == 200, me.text
    data = me.json()["data"]
    assert data["id"] == str(person.id) and data["email"] == "dev@example.com"
    assert data["display_name"] == "dev" and data["status"] == "active"
    [acme_row, globex_row] = data["organisations"]
    assert acme_row["id"] == str(acme) and acme_row["name"] == "Acme"
    assert acme_row["status"] == "active"
    assert acme_row["teams"] == [{"id": str(red), "name": "Red"}]
    assert acme_row["roles"] == [] and acme_row["permissions"] == []
    assert globex_row["status"] == "invited" and globex_row["roles"] == []

    # the same token is good on the admin API (which then asks for its own permissions)
    admin = await client.get(ADMIN + "/users", headers=bearer)
    assert admin.status_code == 403

    refreshed = await client.post(
        url("/auth/token/refresh"), json={"refresh_token": tokens["refresh_token"]}
    )
    assert refreshed.status_code == 200, refreshed.text
    again = refreshed.json()["data"]
    assert (
        await client.get(url("/me"), headers={"Authorization": f"Bearer {again['id_token']}"})
    ).status_code == 200
    # a used refresh token revokes its family, on either surface
    reused = await client.post(
        url("/auth/token/refresh"), json={"refresh_token": tokens["refresh_token"]}
    )
    assert reused.status_code == 401
    successor = await client.post(
        ADMIN + "/auth/token/refresh", json={"refresh_token": again["refresh_token"]}
    )
    assert successor.status_code == 401
    actions = [e.action for e in await rows(AuditEntry, AuditEntry.entity_id == str(person.id))]
    assert {"auth.sign_in", "auth.refresh", "auth.refresh_reuse"} <= set(actions)
    assert TEST_PASSWORD not in str([e.after for e in await rows(AuditEntry)])

    # an account that can no longer sign in is refused with the token it holds
    blocked = await site.account(status=AccountStatus.BLOCKED)
    assert (await client.get(url("/me"), headers=blocked.headers)).status_code == 401


async def test_bad_bodies_are_400_naming_the_field(
    client: httpx.AsyncClient, database: Database, settings: Settings
) -> None:
    await enable_issuance(database, settings)
    response = await client.post(url("/auth/token"), json={"email": "a@example.com"})
    assert response.status_code == 400
    assert [e["pointer"] for e in response.json()["errors"]] == ["/password"]
    extra = await client.post(url("/auth/token/refresh"), json={"refresh_token": "x", "more": 1})
    assert extra.status_code == 400


async def test_sign_in_attempts_share_the_admin_api_budget(
    client: httpx.AsyncClient, database: Database, settings: Settings
) -> None:
    await enable_issuance(database, settings)
    body = {"email": "nobody@example.com", "password": "wrong"}
    for attempt in range(10):
        path = url("/auth/token") if attempt % 2 else ADMIN + "/auth/token"
        assert (await client.post(path, json=body)).status_code == 401
    limited = await client.post(url("/auth/token"), json=body)
    assert limited.status_code == 429
    assert int(limited.headers["retry-after"]) > 0


async def test_me_names_the_roles_held_directly_and_through_teams(
    client: httpx.AsyncClient, database: Database, site: SiteFactory, catalogue: Catalogue
) -> None:
    acme = await catalogue.organisation("Acme")
    red = await catalogue.team(acme, "Red")
    person = await catalogue.member(acme, red)
    async with database.session() as session, session.begin():
        [membership] = await session.scalars(
            select(OrganisationMembership).where(OrganisationMembership.user_id == person.id)
        )
        session.add(MemberRole(membership_id=membership.id, role="org-member"))
        session.add(TeamRole(team_id=red, role="org-admin"))
    me = await client.get(url("/me"), headers=person.headers)
    assert me.status_code == 200, me.text
    [acme_row] = me.json()["data"]["organisations"]
    assert {(r["id"], r["predefined"]) for r in acme_row["roles"]} == {
        ("org-member", True),
        ("org-admin", True),
    }
    assert "invite members" in acme_row["permissions"]
