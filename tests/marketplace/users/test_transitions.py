"""Account transitions: approve (activation email + notification, atomically), reject
(reason required), block (refresh tokens revoked), unblock (silently), and severing the
identity-provider link; each audited, each refused from the wrong state."""

from __future__ import annotations

import uuid
from typing import Any

import httpx
import pytest

from portico.core.account import AccountStatus, User
from portico.core.audit import AuditEntry
from portico.core.db.engine import Database
from portico.core.errors import Conflict
from portico.core.outbox import EmailStatus, OutboxEmail
from portico.core.refresh import RefreshToken
from portico.marketplace.access import SiteCaller
from portico.marketplace.notification.models import Notification
from portico.marketplace.user.models import ExternalIdentity
from tests.marketplace.conftest import SiteAccount, SiteFactory, marketplace_app, url
from tests.marketplace.users.conftest import Rows


async def post(
    client: httpx.AsyncClient, who: SiteAccount, path: str, body: Any = None
) -> httpx.Response:
    return await client.post(url(path), json=body, headers=who.headers)


async def events(rows: Rows, action: str) -> list[AuditEntry]:
    found: list[AuditEntry] = await rows(AuditEntry, AuditEntry.action == action)
    return found


async def test_approve_queues_the_activation_email_with_a_notification(
    client: httpx.AsyncClient, site: SiteFactory, site_admin: SiteAccount, rows: Rows
) -> None:
    pending = await site.account(status=AccountStatus.PENDING, email="new@example.com")
    response = await post(client, site_admin, f"/users/{pending.id}/approve")
    assert response.status_code == 200, response.text
    data = response.json()["data"]
    assert data["status"] == "active" and data["status_changed_at"] is not None

    [email] = await rows(OutboxEmail)
    assert email.kind == "activation" and email.to_address == "new@example.com"
    assert email.status is EmailStatus.PENDING
    assert "https://portal.example.com/portal/sign-in" in email.body_text
    assert email.subject == "Your developer portal account is active"
    [notification] = await rows(Notification)
    assert notification.type == "user_activated" and notification.audience == "user"
    assert notification.recipient_user_id == pending.id
    assert notification.recipient_email == "new@example.com"
    assert notification.email_id == email.id
    assert notification.entity_type == "user" and notification.entity_id == str(pending.id)
    [event] = await events(rows, "user.approve")
    assert event.surface == "marketplace" and event.module == "user"
    assert event.entity_type == "user" and event.entity_id == str(pending.id)
    assert event.actor_id == site_admin.id and event.actor_email == site_admin.email
    assert event.before["status"] == "pending" and event.after == data

    # the account can now use its token
    mine = await client.get(url("/openapi.json"), headers=pending.headers)
    assert mine.status_code == 403  # signed in; only the baseline is missing

    again = await post(client, site_admin, f"/users/{pending.id}/approve")
    assert again.status_code == 409
    assert again.headers["content-type"] == "application/problem+json"
    assert again.json()["detail"] == (
        "cannot approve this account: it is active, and only pending accounts can be approved"
    )
    assert len(await rows(OutboxEmail)) == 1


async def test_a_failed_approval_writes_nothing(
    client: httpx.AsyncClient,
    site: SiteFactory,
    site_admin: SiteAccount,
    rows: Rows,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    pending = await site.account(status=AccountStatus.PENDING)

    async def refuse(*_args: object, **_kwargs: object) -> None:
        raise Conflict("the audit log refused the event")

    # the audit event is the last write: everything before it must roll back with it
    monkeypatch.setattr(SiteCaller, "audit", refuse)
    response = await post(client, site_admin, f"/users/{pending.id}/approve")
    assert response.status_code == 409
    assert await rows(OutboxEmail) == []
    assert await rows(Notification) == []
    assert await rows(AuditEntry, AuditEntry.action == "user.approve") == []
    [user] = await rows(User, User.id == pending.id)
    assert user.status is AccountStatus.PENDING and user.status_changed_at is None


async def test_reject_needs_a_reason(
    client: httpx.AsyncClient, site: SiteFactory, site_admin: SiteAccount, rows: Rows
) -> None:
    pending = await site.account(status=AccountStatus.PENDING)
    path = f"/users/{pending.id}/reject"
    for body, pointer, detail in (
        (None, "", "request body is required"),
        ({}, "/reason", "required property 'reason' not found"),
        ({"reason": "   "}, "/reason", "$.reason: must not be blank"),
        ({"reason": "x" * 1001}, "/reason", "$.reason: must be at most 1000 characters long"),
        ({"reason": 5}, "/reason", "$.reason: string expected"),
        ({"reason": "ok", "notify": True}, "/notify", "property 'notify' is not allowed"),
        ({"reason": "a\x00b"}, "/reason", "$.reason: must not contain NUL characters"),
    ):
        response = await post(client, site_admin, path, body)
        assert response.status_code == 400, body
        assert response.json()["errors"] == [{"pointer": pointer, "detail": detail}], body
    response = await post(client, site_admin, path, {"reason": "  Not a company address  "})
    assert response.status_code == 200, response.text
    data = response.json()["data"]
    assert data["status"] == "rejected"
    assert data["status_reason"] == "Not a company address"
    [event] = await events(rows, "user.reject")
    assert event.after["status_reason"] == "Not a company address"
    assert await rows(OutboxEmail) == [] and await rows(Notification) == []

    for action in ("reject", "approve", "block", "unblock"):
        refused = await post(client, site_admin, f"/users/{pending.id}/{action}", {"reason": "x"})
        assert refused.status_code == 409, action
        assert "it is rejected" in refused.json()["detail"]


async def test_block_revokes_refresh_tokens_and_unblock_is_silent(
    client: httpx.AsyncClient,
    site: SiteFactory,
    site_admin: SiteAccount,
    rows: Rows,
    database: Database,
    app: Any,
) -> None:
    member = await site.account("api_manager")
    other = await site.account()
    store = marketplace_app(app).state.refresh_tokens  # type: ignore[no-untyped-call]
    async with database.session() as session, session.begin():
        await store.issue(session, subject_id=member.id)
        await store.issue(session, subject_id=member.id)
        await store.issue(session, subject_id=other.id)
    assert (await client.get(url("/openapi.json"), headers=member.headers)).status_code == 200

    blocked = await post(client, site_admin, f"/users/{member.id}/block", {"reason": "abuse"})
    assert blocked.status_code == 200, blocked.text
    assert blocked.json()["data"]["status"] == "blocked"
    assert blocked.json()["data"]["status_reason"] == "abuse"
    tokens = await rows(RefreshToken)
    assert {t.subject_id for t in tokens if t.revoked_at is not None} == {member.id}
    assert len([t for t in tokens if t.revoked_at is not None]) == 2
    # its ID token stops working at once
    assert (await client.get(url("/openapi.json"), headers=member.headers)).status_code == 401
    [event] = await events(rows, "user.block")
    assert event.before["status"] == "active" and event.after["status"] == "blocked"
    again = await post(client, site_admin, f"/users/{member.id}/block")
    assert again.status_code == 409
    assert again.json()["detail"] == (
        "cannot block this account: it is blocked, and only active accounts can be blocked"
    )

    unblocked = await post(client, site_admin, f"/users/{member.id}/unblock")
    assert unblocked.status_code == 200, unblocked.text
    assert unblocked.json()["data"]["status"] == "active"
    assert unblocked.json()["data"]["status_reason"] is None
    assert await rows(OutboxEmail) == [] and await rows(Notification) == []
    [event] = await events(rows, "user.unblock")
    assert event.before["status"] == "blocked"
    assert (await client.get(url("/openapi.json"), headers=member.headers)).status_code == 200
    assert (await post(client, site_admin, f"/users/{member.id}/unblock")).status_code == 409

    # no body at all, or an empty reason: blocked without a reason
    for body in (None, {"reason": ""}, {"reason": None}):
        plain = await post(client, site_admin, f"/users/{other.id}/block", body)
        assert plain.status_code == 200, body
        assert plain.json()["data"]["status_reason"] is None
        await post(client, site_admin, f"/users/{other.id}/unblock")


async def test_block_refusals(
    client: httpx.AsyncClient, site: SiteFactory, site_admin: SiteAccount, rows: Rows
) -> None:
    manager = await site.account("marketplace_admin")
    pending = await site.account(status=AccountStatus.PENDING)
    cases: list[tuple[SiteAccount, uuid.UUID, Any, int, str]] = [
        (manager, manager.id, None, 409, "you cannot block your own account"),
        (manager, site_admin.id, None, 409, "the bootstrap administrator cannot be blocked"),
        (site_admin, site_admin.id, None, 409, "you cannot block your own account"),
        (site_admin, pending.id, None, 409, "cannot block this account: it is pending"),
        (site_admin, manager.id, {"reason": 5}, 400, "$.reason: string expected"),
        (site_admin, manager.id, {"why": "x"}, 400, "property 'why' is not allowed"),
        (site_admin, manager.id, [], 400, "request body must be a JSON object"),
    ]
    for who, target, body, status, detail in cases:
        response = await post(client, who, f"/users/{target}/block", body)
        assert response.status_code == status, (target, body, response.text)
        assert response.json()["detail"].startswith(detail), response.json()
    assert await events(rows, "user.block") == []


async def test_sever_the_identity_provider_link(
    client: httpx.AsyncClient,
    site: SiteFactory,
    site_admin: SiteAccount,
    rows: Rows,
    database: Database,
) -> None:
    linked = await site.account()
    async with database.session() as session, session.begin():
        session.add(
            ExternalIdentity(
                id=uuid.uuid4(), user_id=linked.id, provider="firebase", subject="uid-123"
            )
        )
    path = url(f"/users/{linked.id}/firebase-identity")
    response = await client.delete(path, headers=site_admin.headers)
    assert response.status_code == 204 and response.content == b""
    assert await rows(ExternalIdentity) == []
    assert len(await rows(User, User.id == linked.id)) == 1  # the account stays
    [event] = await events(rows, "user.identity_unlink")
    assert event.before["provider"] == "firebase" and event.before["subject"] == "uid-123"
    assert event.after is None and event.entity_id == str(linked.id)
    gone = await client.delete(path, headers=site_admin.headers)
    assert gone.status_code == 404
    assert gone.json()["detail"] == "the account has no identity-provider link"
