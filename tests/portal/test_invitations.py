"""``POST /invitations/accept``: an organisation's invitation (sent by the admin API's
``/organisations/{group}/members/invite``) becomes an active membership; an account the
invitation created chooses its password and can then sign in. A wrong or used token gets
one answer that says nothing more."""

from __future__ import annotations

import uuid

import httpx

from portico.core.account import AccountStatus, User
from portico.core.audit import AuditEntry
from portico.core.db.engine import Database
from portico.core.outbox import OutboxEmail
from portico.core.settings import Settings
from portico.marketplace.organisation.models import MembershipStatus, OrganisationMembership
from tests.conftest import TEST_PASSWORD
from tests.marketplace.auth.conftest import enable_issuance
from tests.marketplace.conftest import SiteAccount, SiteFactory
from tests.portal.conftest import Catalogue, Rows, url

INVITE_LINK = "/portal/invitations/"
NEW_PASSWORD = "a brand new passphrase"


async def invite(
    client: httpx.AsyncClient, rows: Rows, admin: SiteAccount, organisation: uuid.UUID, email: str
) -> str:
    """Invite ``email`` as an administrator would; the token the email carries."""
    response = await client.post(
        f"/api/admin/v1/organisations/{organisation}/members/invite",
        json={"emails": [email]},
        headers=admin.headers,
    )
    assert response.status_code == 200, response.text
    assert response.json()["meta"]["failed"] == []
    # the latest invitation to the address (an earlier one may be of another organisation)
    sent = await rows(OutboxEmail, OutboxEmail.to_address == email)
    email_row = max(sent, key=lambda row: row.created_at)
    return str(email_row.body_text.split(INVITE_LINK)[1].split()[0])


async def accept(
    client: httpx.AsyncClient, headers: dict[str, str] | None = None, **body: object
) -> httpx.Response:
    return await client.post(url("/invitations/accept"), json=body, headers=headers or {})


async def test_an_invited_new_account_sets_its_password_and_signs_in(
    client: httpx.AsyncClient,
    database: Database,
    settings: Settings,
    site: SiteFactory,
    catalogue: Catalogue,
    rows: Rows,
) -> None:
    admin = await site.account(platform_admin=True)
    acme = await catalogue.organisation("Acme")
    token = await invite(client, rows, admin, acme, "new@example.com")

    wrong = await accept(client, token="not-the-token", password=NEW_PASSWORD)
    assert wrong.status_code == 404
    assert wrong.headers["content-type"] == "application/problem+json"
    no_password = await accept(client, token=token)
    assert no_password.status_code == 400
    assert [e["pointer"] for e in no_password.json()["errors"]] == ["/password"]
    short = await accept(client, token=token, password="short")
    assert short.status_code == 400

    accepted = await accept(client, token=token, password=NEW_PASSWORD, display_name=" Nova ")
    assert accepted.status_code == 200, accepted.text
    data = accepted.json()["data"]
    assert data["organisation"] == str(acme) and data["organisation_name"] == "Acme"
    assert data["account_status"] == "active"
    [user] = await rows(User, User.email == "new@example.com")
    assert user.status is AccountStatus.ACTIVE and user.display_name == "Nova"
    [membership] = await rows(OrganisationMembership, OrganisationMembership.user_id == user.id)
    assert membership.status is MembershipStatus.ACTIVE
    assert membership.invitation_token_hash is None
    assert str(membership.id) == data["relationship"]
    [event] = await rows(AuditEntry, AuditEntry.action == "membership.accept")
    assert event.actor_id == user.id and event.entity_id == str(membership.id)
    assert event.before["status"] == "invited" and event.after["status"] == "active"
    [account_event] = await rows(AuditEntry, AuditEntry.action == "user.accept_invitation")
    assert account_event.after["status"] == "active"
    assert NEW_PASSWORD not in str(account_event.after) + str(account_event.before)

    # used: the same answer as a token that never was
    reused = await accept(client, token=token, password=NEW_PASSWORD)
    assert reused.status_code == 404
    assert reused.json() == wrong.json()

    await enable_issuance(database, settings)
    signed_in = await client.post(
        url("/auth/token"), json={"email": "new@example.com", "password": NEW_PASSWORD}
    )
    assert signed_in.status_code == 200, signed_in.text
    bearer = {"Authorization": f"Bearer {signed_in.json()['data']['id_token']}"}
    me = await client.get(url("/me"), headers=bearer)
    assert [(o["name"], o["status"]) for o in me.json()["data"]["organisations"]] == [
        ("Acme", "active")
    ]


async def test_an_existing_account_proves_it_is_its_owner(
    client: httpx.AsyncClient, site: SiteFactory, catalogue: Catalogue, rows: Rows
) -> None:
    admin = await site.account(platform_admin=True)
    acme = await catalogue.organisation("Acme")
    globex = await catalogue.organisation("Globex")
    known = await site.account(email="known@example.com")
    token = await invite(client, rows, admin, acme, "known@example.com")

    # the inviter saw the token too: it alone does not let anyone in
    for body in ({}, {"password": "not the password"}):
        refused = await accept(client, token=token, **body)
        assert refused.status_code == 401, body
    someone_else = await site.account()
    assert (await accept(client, someone_else.headers, token=token)).status_code == 401

    with_password = await accept(client, token=token, password=TEST_PASSWORD)
    assert with_password.status_code == 200, with_password.text
    assert with_password.json()["data"]["account_status"] == "active"
    # nothing about the account changed, so no account event
    assert await rows(AuditEntry, AuditEntry.action == "user.accept_invitation") == []

    # signed in as the invited account, no password is needed
    other = await invite(client, rows, admin, globex, "known@example.com")
    signed_in = await accept(client, known.headers, token=other)
    assert signed_in.status_code == 200, signed_in.text
    memberships = await rows(OrganisationMembership, OrganisationMembership.user_id == known.id)
    assert {m.status for m in memberships} == {MembershipStatus.ACTIVE}


async def test_a_blocked_account_cannot_accept(
    client: httpx.AsyncClient,
    database: Database,
    site: SiteFactory,
    catalogue: Catalogue,
    rows: Rows,
) -> None:
    admin = await site.account(platform_admin=True)
    acme = await catalogue.organisation("Acme")
    blocked = await site.account(email="blocked@example.com")
    token = await invite(client, rows, admin, acme, "blocked@example.com")
    async with database.session() as session, session.begin():
        user = await session.get(User, blocked.id)
        assert user is not None
        user.status = AccountStatus.BLOCKED
    response = await accept(client, token=token, password=TEST_PASSWORD)
    assert response.status_code == 404
