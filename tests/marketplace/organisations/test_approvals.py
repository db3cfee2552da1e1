"""Partner approvals: the queue (``GET .../approvals``), approval (the approval email, the
pending account activated), rejection (reason required and emailed; the account deleted
only when asked, and only one that was never let in); each audited, each refused from the
wrong state."""

from __future__ import annotations

import uuid

import httpx
import pytest

from portico.core.account import AccountStatus, User
from portico.core.audit import AuditEntry
from portico.core.clock import Clock
from portico.core.db.engine import Database
from portico.core.outbox import OutboxEmail
from portico.marketplace.notification.models import Notification
from portico.marketplace.organisation.models import MembershipStatus, OrganisationMembership
from tests.marketplace.conftest import SiteAccount
from tests.marketplace.organisations.conftest import Portal, Rows, call, deliver


async def test_the_queue_lists_pending_registrations_oldest_first(
    client: httpx.AsyncClient, manager: SiteAccount, portal: Portal, partner: uuid.UUID
) -> None:
    await portal.registration(partner, "zed@example.com")
    await portal.registration(partner, "amy@example.com")
    await portal.member(partner, "member@example.com")
    await portal.registration(await portal.organisation("Elsewhere"), "other@example.com")
    base = f"/organisations/{partner}/approvals"

    queue = await call(client, manager, "GET", base)
    assert queue.status_code == 200, queue.text
    assert [m["user"]["email"] for m in queue.json()["data"]] == [
        "zed@example.com",
        "amy@example.com",
    ]
    assert {m["status"] for m in queue.json()["data"]} == {"pending"}
    by_email = await call(client, manager, "GET", f"{base}?sort=email&filter[email]=example")
    assert [m["user"]["email"] for m in by_email.json()["data"]] == [
        "amy@example.com",
        "zed@example.com",
    ]
    refused = await call(client, manager, "GET", f"{base}?filter[status]=active")
    assert refused.status_code == 400
    assert refused.json()["errors"][0]["parameter"] == "filter[status]"


async def test_approve_activates_and_sends_the_approval_email(
    client: httpx.AsyncClient,
    database: Database,
    clock: Clock,
    manager: SiteAccount,
    portal: Portal,
    partner: uuid.UUID,
    rows: Rows,
) -> None:
    person, relationship = await portal.registration(partner, "bob@example.com")
    path = f"/organisations/{partner}/approvals/{relationship}/approve"
    approved = await call(client, manager, "POST", path)
    assert approved.status_code == 200, approved.text
    data = approved.json()["data"]
    assert data["status"] == "active" and data["user"]["status"] == "active"
    [account] = await rows(User, User.id == person.id)
    assert account.status is AccountStatus.ACTIVE  # the partner can sign in now

    [message] = await deliver(database, clock, 1)
    assert message["To"] == "bob@example.com"
    assert message["Subject"] == "Your registration with Partner is approved"
    assert "https://portal.example.com/portal/sign-in" in message.get_content()
    [notification] = await rows(Notification)
    assert notification.type == "partner_approved" and notification.recipient_user_id == person.id
    [event] = await rows(AuditEntry, AuditEntry.action == "membership.approve")
    assert event.before["status"] == "pending" and event.after == data

    again = await call(client, manager, "POST", path)
    assert again.status_code == 409
    assert again.json()["detail"] == (
        "cannot approve this relationship: it is active, and only pending registrations are decided"
    )
    assert len(await rows(OutboxEmail)) == 1


async def test_reject_keeps_the_account_and_emails_the_reason(
    client: httpx.AsyncClient,
    database: Database,
    clock: Clock,
    manager: SiteAccount,
    portal: Portal,
    partner: uuid.UUID,
    rows: Rows,
) -> None:
    person, relationship = await portal.registration(partner, "bob@example.com")
    path = f"/organisations/{partner}/approvals/{relationship}/reject"
    rejected = await call(client, manager, "POST", path, {"reason": "  Not a partner of ours.  "})
    assert rejected.status_code == 200, rejected.text
    data = rejected.json()["data"]
    assert data["status"] == "rejected" and data["account_deleted"] is False
    assert data["status_reason"] == "Not a partner of ours."
    [account] = await rows(User, User.id == person.id)
    assert account.status is AccountStatus.PENDING  # untouched

    [message] = await deliver(database, clock, 1)
    assert message["Subject"] == "Your registration with Partner was not approved"
    assert "Reason: Not a partner of ours." in message.get_content()
    assert "not affected" in message.get_content()
    [event] = await rows(AuditEntry, AuditEntry.action == "membership.reject")
    assert event.after["status_reason"] == "Not a partner of ours."

    again = await call(client, manager, "POST", path, {"reason": "again"})
    assert again.status_code == 409
    # still listed among the members, as rejected
    listed = await call(client, manager, "GET", f"/organisations/{partner}/members")
    assert [m["status"] for m in listed.json()["data"]] == ["rejected"]


async def test_reject_deletes_the_account_when_asked(
    client: httpx.AsyncClient,
    database: Database,
    clock: Clock,
    manager: SiteAccount,
    portal: Portal,
    partner: uuid.UUID,
    rows: Rows,
) -> None:
    person, relationship = await portal.registration(partner, "bob@example.com")
    rejected = await call(
        client,
        manager,
        "POST",
        f"/organisations/{partner}/approvals/{relationship}/reject",
        {"reason": "Spam.", "delete_account": True},
    )
    assert rejected.status_code == 200, rejected.text
    assert rejected.json()["data"]["account_deleted"] is True
    assert await rows(User, User.id == person.id) == []
    assert await rows(OrganisationMembership) == []

    [message] = await deliver(database, clock, 1)
    assert message["To"] == "bob@example.com"
    assert "Reason: Spam." in message.get_content()
    assert "has been deleted" in message.get_content()
    [notification] = await rows(Notification)
    assert notification.recipient_user_id is None
    assert notification.recipient_email == "bob@example.com"
    assert notification.data["reason"] == "Spam."
    [deleted] = await rows(AuditEntry, AuditEntry.action == "user.delete")
    assert deleted.entity_id == str(person.id) and deleted.before["email"] == "bob@example.com"


@pytest.mark.parametrize("why", ["active account", "another organisation"])
async def test_an_account_that_must_stay_is_not_deleted_and_nothing_changes(
    client: httpx.AsyncClient,
    manager: SiteAccount,
    portal: Portal,
    partner: uuid.UUID,
    rows: Rows,
    why: str,
) -> None:
    if why == "active account":
        person, relationship = await portal.registration(
            partner, "bob@example.com", account=AccountStatus.ACTIVE
        )
    else:
        person, relationship = await portal.registration(partner, "bob@example.com")
        other = await portal.organisation("Third")
        async with portal.database.session() as session, session.begin():
            session.add(
                OrganisationMembership(
                    organisation_id=other, user_id=person.id, status=MembershipStatus.ACTIVE
                )
            )
    refused = await call(
        client,
        manager,
        "POST",
        f"/organisations/{partner}/approvals/{relationship}/reject",
        {"reason": "no", "delete_account": True},
    )
    assert refused.status_code == 409, refused.text
    assert "reject without delete_account" in refused.json()["detail"]
    [membership] = await rows(OrganisationMembership, OrganisationMembership.id == relationship)
    assert membership.status is MembershipStatus.PENDING
    assert len(await rows(User, User.id == person.id)) == 1
    assert await rows(OutboxEmail) == []


async def test_decisions_on_ids_that_name_nothing_or_another_organisation_are_404(
    client: httpx.AsyncClient, manager: SiteAccount, portal: Portal, partner: uuid.UUID, rows: Rows
) -> None:
    _, theirs = await portal.registration(await portal.organisation("Elsewhere"), "x@example.com")
    for relationship in (theirs, uuid.uuid4(), "nope"):
        for action, body in (("approve", None), ("reject", {"reason": "no"})):
            path = f"/organisations/{partner}/approvals/{relationship}/{action}"
            missing = await call(client, manager, "POST", path, body)
            assert missing.status_code == 404, (relationship, action)
            assert missing.json()["detail"] == "relationship not found"
    [membership] = await rows(OrganisationMembership)
    assert membership.status is MembershipStatus.PENDING


@pytest.mark.parametrize(
    ("body", "pointer"),
    [
        (None, None),
        ({}, "/reason"),
        ({"reason": "   "}, "/reason"),
        ({"reason": 5}, "/reason"),
        ({"reason": "x" * 1001}, "/reason"),
        ({"reason": "no", "delete_account": "yes"}, "/delete_account"),
        ({"reason": "no", "why": "?"}, "/why"),
    ],
)
async def test_a_rejection_needs_a_reason(
    client: httpx.AsyncClient,
    manager: SiteAccount,
    portal: Portal,
    partner: uuid.UUID,
    rows: Rows,
    body: object,
    pointer: str | None,
) -> None:
    _, relationship = await portal.registration(partner, "bob@example.com")
    path = f"/organisations/{partner}/approvals/{relationship}/reject"
    refused = await call(client, manager, "POST", path, body)
    assert refused.status_code == 400, refused.text
    if pointer is not None:
        assert pointer in [e.get("pointer") for e in refused.json()["errors"]]
    [membership] = await rows(OrganisationMembership)
    assert membership.status is MembershipStatus.PENDING
