"""A registration on the portal that names an organisation (a partner registration): the new
account also waits in the organisation's approvals, where approving it lets it in."""

from __future__ import annotations

import uuid

import httpx

from portico.core.account import AccountStatus, User
from portico.core.audit import AuditEntry
from portico.marketplace.organisation.models import MembershipStatus, OrganisationMembership
from tests.marketplace.conftest import SiteFactory
from tests.portal.conftest import Catalogue, Rows, url

PASSWORD = "a long enough passphrase"


async def register(client: httpx.AsyncClient, email: str, organisation: object) -> httpx.Response:
    return await client.post(
        url("/registrations"),
        json={
            "email": email,
            "password": PASSWORD,
            "display_name": "Partner person",
            "organisation": organisation,
        },
    )


async def test_a_partner_registration_waits_in_the_organisations_approvals(
    client: httpx.AsyncClient, site: SiteFactory, catalogue: Catalogue, rows: Rows
) -> None:
    admin = await site.account(platform_admin=True)
    acme = await catalogue.organisation("Acme")
    response = await register(client, "partner@example.com", str(acme))
    assert response.status_code == 202, response.text
    assert response.json() == {"data": {"status": "pending"}}
    [user] = await rows(User, User.email == "partner@example.com")
    assert user.status is AccountStatus.PENDING
    [membership] = await rows(OrganisationMembership, OrganisationMembership.user_id == user.id)
    assert membership.organisation_id == acme and membership.status is MembershipStatus.PENDING
    [event] = await rows(AuditEntry, AuditEntry.action == "user.register")
    assert event.after["organisation"] == str(acme)
    assert event.after["relationship"] == str(membership.id)

    approvals = await client.get(
        f"/api/admin/v1/organisations/{acme}/approvals", headers=admin.headers
    )
    assert approvals.status_code == 200, approvals.text
    assert [m["user"]["email"] for m in approvals.json()["data"]] == ["partner@example.com"]
    approved = await client.post(
        f"/api/admin/v1/organisations/{acme}/approvals/{membership.id}/approve",
        headers=admin.headers,
    )
    assert approved.status_code == 200, approved.text
    [user] = await rows(User, User.id == user.id)
    assert user.status is AccountStatus.ACTIVE


async def test_an_existing_account_is_not_enrolled_and_an_unknown_organisation_is_400(
    client: httpx.AsyncClient, site: SiteFactory, catalogue: Catalogue, rows: Rows
) -> None:
    acme = await catalogue.organisation("Acme")
    known = await site.account(email="known@example.com")
    response = await register(client, "known@example.com", str(acme))
    assert response.status_code == 202 and response.json() == {"data": {"status": "pending"}}
    assert await rows(OrganisationMembership, OrganisationMembership.user_id == known.id) == []

    for organisation, pointer in ((str(uuid.uuid4()), "/organisation"), ("acme", "/organisation")):
        refused = await register(client, "new@example.com", organisation)
        assert refused.status_code == 400, organisation
        assert [e["pointer"] for e in refused.json()["errors"]] == [pointer]
    assert await rows(User, User.email == "new@example.com") == []
