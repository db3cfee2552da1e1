"""Invitations (``POST .../members/invite``: accounts created as needed, an email with a
link whose token only the email holds, per-address failures) and removal (``DELETE
.../members/{relationship}``: the account stays); each audited."""

from __future__ import annotations

import uuid

import httpx

from portico.core.account import AccountStatus, User
from portico.core.audit import AuditEntry
from portico.core.clock import Clock
from portico.core.db.engine import Database
from portico.core.outbox import OutboxEmail
from portico.core.tokens import hash_opaque_token
from portico.marketplace.notification.models import Notification
from portico.marketplace.organisation.models import OrganisationMembership, TeamMembership
from tests.marketplace.conftest import SiteAccount, SiteFactory
from tests.marketplace.organisations.conftest import Portal, Rows, call, deliver

LINK = "https://portal.example.com/portal/invitations/"


async def test_invitations_are_emailed_with_a_link_only_the_email_holds(
    client: httpx.AsyncClient,
    database: Database,
    clock: Clock,
    manager: SiteAccount,
    site: SiteFactory,
    portal: Portal,
    partner: uuid.UUID,
    rows: Rows,
) -> None:
    red = await portal.team(partner, "Red")
    known = await site.account(email="known@example.com")
    response = await call(
        client,
        manager,
        "POST",
        f"/organisations/{partner}/members/invite",
        {
            "emails": ["New@Example.com", "known@example.com", "new@example.com"],
            "teams": [str(red)],
        },
    )
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["meta"] == {"count": 2, "failed": []}
    invited = {m["user"]["email"]: m for m in body["data"]}
    assert set(invited) == {"new@example.com", "known@example.com"}
    for member in invited.values():
        assert member["status"] == "invited" and member["invited_by"] == str(manager.id)
        assert member["teams"] == [{"id": str(red), "name": "Red"}]
    # an address without an account gets one, invited and without a password
    [created] = await rows(User, User.email == "new@example.com")
    assert created.status is AccountStatus.INVITED and created.password_hash is None
    assert invited["known@example.com"]["user"]["status"] == "active"  # untouched

    messages = await deliver(database, clock, 2)
    by_address = {m["To"]: m for m in messages}
    assert set(by_address) == {"new@example.com", "known@example.com"}
    text = by_address["known@example.com"].get_content()
    assert by_address["known@example.com"]["Subject"] == "You are invited to join Partner"
    assert LINK in text
    token = text.split(LINK)[1].split()[0]
    [membership] = await rows(OrganisationMembership, OrganisationMembership.user_id == known.id)
    assert membership.invitation_token_hash == hash_opaque_token(token)
    # the notification administrators read does not carry the token
    notifications = await rows(Notification, Notification.type == "organisation_invitation")
    assert len(notifications) == 2 and all(token not in n.body for n in notifications)

    events = await rows(AuditEntry, AuditEntry.action == "membership.invite")
    assert {e.after["user"]["email"] for e in events} == set(invited)
    assert all(e.module == "organisation" and e.entity_type == "membership" for e in events)

    # inviting again sends a new link; the old one stops working
    again = await call(
        client,
        manager,
        "POST",
        f"/organisations/{partner}/members/invite",
        {"emails": ["known@example.com"]},
    )
    assert again.status_code == 200 and again.json()["meta"]["count"] == 1
    [membership] = await rows(OrganisationMembership, OrganisationMembership.user_id == known.id)
    assert membership.invitation_token_hash not in (None, hash_opaque_token(token))
    assert len(await rows(TeamMembership)) == 2  # the team was not given twice


async def test_who_cannot_be_invited_is_reported_and_the_others_are_invited(
    client: httpx.AsyncClient,
    manager: SiteAccount,
    site: SiteFactory,
    portal: Portal,
    partner: uuid.UUID,
    rows: Rows,
) -> None:
    await portal.member(partner, "member@example.com")
    await portal.registration(partner, "waiting@example.com")
    await site.account(email="blocked@example.com", status=AccountStatus.BLOCKED)
    response = await call(
        client,
        manager,
        "POST",
        f"/organisations/{partner}/members/invite",
        {
            "emails": [
                "member@example.com",
                "waiting@example.com",
                "blocked@example.com",
                "fresh@example.com",
            ]
        },
    )
    assert response.status_code == 200, response.text
    body = response.json()
    assert [m["user"]["email"] for m in body["data"]] == ["fresh@example.com"]
    assert body["meta"]["failed"] == [
        {
            "id": "member@example.com",
            "status": 409,
            "detail": "member@example.com: already a member",
        },
        {
            "id": "waiting@example.com",
            "status": 409,
            "detail": "waiting@example.com: a registration awaits approval; approve it instead",
        },
        {
            "id": "blocked@example.com",
            "status": 409,
            "detail": "blocked@example.com: the account is blocked",
        },
    ]
    assert [e.to_address for e in await rows(OutboxEmail)] == ["fresh@example.com"]


async def test_bad_invitations_are_400_naming_the_field_and_write_nothing(
    client: httpx.AsyncClient, manager: SiteAccount, portal: Portal, partner: uuid.UUID, rows: Rows
) -> None:
    theirs = await portal.team(await portal.organisation("Elsewhere"), "Theirs")
    path = f"/organisations/{partner}/members/invite"
    cases = [
        ({}, "/emails"),
        ({"emails": []}, "/emails"),
        ({"emails": ["ok@example.com", "not an address"]}, "/emails/1"),
        ({"emails": ["ada@localhost"]}, "/emails/0"),
        ({"emails": "ok@example.com"}, "/emails"),
        ({"emails": ["ok@example.com"], "teams": ["nope"]}, "/teams/0"),
        ({"emails": ["ok@example.com"], "teams": [str(theirs)]}, "/teams/0"),
        ({"emails": ["ok@example.com"], "colour": "red"}, "/colour"),
    ]
    for body, pointer in cases:
        response = await call(client, manager, "POST", path, body)
        assert response.status_code == 400, (body, response.text)
        assert response.headers["content-type"] == "application/problem+json"
        assert pointer in [e.get("pointer") for e in response.json()["errors"]], body
    assert await rows(OrganisationMembership) == [] and await rows(OutboxEmail) == []


async def test_removing_a_member_keeps_the_account(
    client: httpx.AsyncClient,
    manager: SiteAccount,
    portal: Portal,
    partner: uuid.UUID,
    rows: Rows,
) -> None:
    red = await portal.team(partner, "Red")
    ada, relationship = await portal.member(partner, "ada@example.com", red)
    other = await portal.organisation("Elsewhere")
    _, theirs = await portal.member(other, "bob@example.com")

    # a relationship of another organisation is not found through this one
    for missing in (theirs, uuid.uuid4(), "nope"):
        refused = await call(
            client, manager, "DELETE", f"/organisations/{partner}/members/{missing}"
        )
        assert refused.status_code == 404, missing
        assert refused.json()["detail"] == "relationship not found"
    assert len(await rows(OrganisationMembership)) == 2

    removed = await call(
        client, manager, "DELETE", f"/organisations/{partner}/members/{relationship}"
    )
    assert removed.status_code == 204, removed.text
    assert await rows(OrganisationMembership, OrganisationMembership.id == relationship) == []
    assert await rows(TeamMembership) == []  # out of its teams too
    [account] = await rows(User, User.id == ada.id)
    assert account.status is AccountStatus.ACTIVE
    [event] = await rows(AuditEntry, AuditEntry.action == "membership.remove")
    assert event.entity_id == str(relationship)
    assert event.before["user"]["email"] == "ada@example.com" and event.after is None

    gone = await call(client, manager, "DELETE", f"/organisations/{partner}/members/{relationship}")
    assert gone.status_code == 404
