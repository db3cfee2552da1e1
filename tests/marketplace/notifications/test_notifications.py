"""Site-wide notifications: ``notify`` (record + outbox email in the caller's transaction),
and ``GET /notifications``, ``/notifications/summary``, ``/notifications/{notification}``."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest
from sqlalchemy import func, select

from portico.core.account import User
from portico.core.clock import Clock
from portico.core.db.engine import Database
from portico.core.mailer import Mailer
from portico.core.outbox import OutboxEmail
from portico.marketplace.notification import service as notification_service
from tests.marketplace.conftest import SiteAccount, SiteFactory, url
from tests.support.smtpserver import SmtpServer

PERMISSION = "administer marketplace notifications"
# an id that names nothing; fixed, not drawn at import: it is part of test ids, which every
# xdist worker must collect alike
UNKNOWN_ID = "b03c1acc-378b-465b-bb7c-9c98d3223910"
T0 = datetime(2025, 3, 1, 12, 0, tzinfo=UTC)


async def notify(
    database: Database,
    *,
    user_id: uuid.UUID | None = None,
    email_kind: str | None = None,
    now: datetime = T0,
    **fields: Any,
) -> uuid.UUID:
    async with database.session() as session, session.begin():
        recipient = await session.get(User, user_id) if user_id is not None else None
        notification = await notification_service.notify(
            session,
            type=fields.pop("type", "user_activated"),
            audience=fields.pop("audience", "user"),
            subject=fields.pop("subject", "Your account is active"),
            body=fields.pop("body", "Welcome to the portal."),
            recipient=recipient,
            email_kind=email_kind,
            now=now,
            **fields,
        )
    return notification.id


@pytest.fixture
async def seeded(database: Database, site: SiteFactory) -> dict[str, Any]:
    """Four notifications over three days, one with an email."""
    ada = await site.account(email="Ada@Example.com")
    ids = {
        "activated": await notify(
            database, user_id=ada.id, email_kind="activation", now=T0, entity_type="user"
        ),
        "rejected": await notify(
            database,
            type="subscription_rejected",
            to="bob@example.com",
            subject="Subscription rejected",
            now=T0 + timedelta(days=1),
            data={"reason": "no quota"},
        ),
        "admins": await notify(
            database,
            type="user_registered",
            audience="administrators",
            subject="A registration awaits",
            now=T0 + timedelta(days=2),
        ),
        "org": await notify(
            database,
            type="subscription_rejected",
            audience="organisation",
            now=T0 + timedelta(days=2, hours=1),
        ),
    }
    return {"ids": ids, "ada": ada}


async def test_notify_writes_the_record_and_queues_the_email(
    database: Database, site: SiteFactory, clock: Clock
) -> None:
    ada = await site.account(email="ada@example.com")
    notification_id = await notify(
        database,
        user_id=ada.id,
        email_kind="activation",
        body="Your account is active.",
        email_body="Set your password: https://portal.example.com/set?token=abc",
        entity_type="user",
        entity_id=ada.id,
    )
    async with database.session() as session:
        emails = list(await session.scalars(select(OutboxEmail)))
    [email] = emails
    assert (email.kind, email.to_address) == ("activation", "ada@example.com")
    assert "token=abc" in email.body_text  # the email carries the link...
    with SmtpServer() as server:
        await Mailer(database, clock, smtp_url=server.url).deliver_due()
        [message] = await server.wait_for(1)
    assert message["Subject"] == "Your account is active"
    assert notification_id


async def test_notify_without_an_address_or_email_kind_sends_nothing(
    database: Database, site: SiteFactory
) -> None:
    ada = await site.account()
    await notify(database, user_id=ada.id)  # no email_kind
    await notify(database, audience="administrators", email_kind="digest")  # no address
    async with database.session() as session:
        assert await session.scalar(select(func.count()).select_from(OutboxEmail)) == 0
    with pytest.raises(ValueError, match="audience"):
        await notify(database, audience="everyone")


async def test_list_newest_first_with_the_email_state(
    client: httpx.AsyncClient, site_admin: SiteAccount, seeded: dict[str, Any]
) -> None:
    ids = seeded["ids"]
    response = await client.get(url("/notifications"), headers=site_admin.headers)
    assert response.status_code == 200
    body = response.json()
    assert [n["id"] for n in body["data"]] == [
        str(ids[k]) for k in ("org", "admins", "rejected", "activated")
    ]
    assert body["meta"] == {"count": 4, "page": 1, "limit": 50, "pages": 1}
    assert body["links"]["next"] is None
    activated = body["data"][-1]
    assert activated["recipient_user_id"] == str(seeded["ada"].id)
    assert activated["recipient_email"] == "Ada@Example.com"
    assert activated["email"]["status"] == "pending"
    assert activated["email"]["attempts"] == 0
    assert body["data"][0]["email"] is None
    rejected = body["data"][2]
    assert rejected["data"] == {"reason": "no quota"}
    assert rejected["email"] is None  # an address, but no email kind


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("filter[type]=subscription_rejected", ["org", "rejected"]),
        ("filter[audience]=administrators", ["admins"]),
        ("filter[recipient]=ada@example.COM", ["activated"]),
        ("filter[recipient]=bob@example.com", ["rejected"]),
        ("filter[from]=2025-03-02&filter[to]=2025-03-02", ["rejected"]),
        ("filter[from]=2025-03-03T12:30:00Z", ["org"]),
        ("filter[to]=2025-03-01T12:00:00%2B00:00", ["activated"]),
        ("filter[type]=user_activated&filter[audience]=organisation", []),
        ("sort=type,created_at&limit=2", ["rejected", "org"]),
    ],
)
async def test_list_filters(
    client: httpx.AsyncClient,
    site_admin: SiteAccount,
    seeded: dict[str, Any],
    query: str,
    expected: list[str],
) -> None:
    response = await client.get(url(f"/notifications?{query}"), headers=site_admin.headers)
    assert response.status_code == 200, response.text
    assert [n["id"] for n in response.json()["data"]] == [str(seeded["ids"][k]) for k in expected]


async def test_filter_by_recipient_id(
    client: httpx.AsyncClient, site_admin: SiteAccount, seeded: dict[str, Any]
) -> None:
    response = await client.get(
        url(f"/notifications?filter[recipient]={seeded['ada'].id}"), headers=site_admin.headers
    )
    assert [n["id"] for n in response.json()["data"]] == [str(seeded["ids"]["activated"])]


async def test_summary_counts_the_matched_set(
    client: httpx.AsyncClient, site_admin: SiteAccount, seeded: dict[str, Any]
) -> None:
    everything = await client.get(url("/notifications/summary"), headers=site_admin.headers)
    assert everything.status_code == 200
    assert everything.json() == {
        "data": {
            "total": 4,
            "by_type": {"user_activated": 1, "subscription_rejected": 2, "user_registered": 1},
            "by_audience": {"user": 2, "administrators": 1, "organisation": 1},
        }
    }
    matched = await client.get(
        url("/notifications/summary?filter[type]=subscription_rejected"),
        headers=site_admin.headers,
    )
    assert matched.json()["data"] == {
        "total": 2,
        "by_type": {"subscription_rejected": 2},
        "by_audience": {"user": 1, "organisation": 1},
    }
    empty = await client.get(
        url("/notifications/summary?filter[from]=2030-01-01"), headers=site_admin.headers
    )
    assert empty.json()["data"] == {"total": 0, "by_type": {}, "by_audience": {}}


async def test_one_notification_with_its_delivered_email(
    client: httpx.AsyncClient,
    site_admin: SiteAccount,
    seeded: dict[str, Any],
    database: Database,
    clock: Clock,
) -> None:
    ids = seeded["ids"]
    with SmtpServer() as server:
        await Mailer(database, clock, smtp_url=server.url).deliver_due()
        await server.wait_for(1)
    response = await client.get(
        url(f"/notifications/{ids['activated']}"), headers=site_admin.headers
    )
    assert response.status_code == 200
    data = response.json()["data"]
    assert data["type"] == "user_activated"
    assert data["entity_type"] == "user"
    email = data["email"]
    assert (email["status"], email["attempts"], email["last_error"]) == ("sent", 1, None)
    assert email["sent_at"] is not None
    assert email["to_address"] == "Ada@Example.com"
    plain = await client.get(url(f"/notifications/{ids['admins']}"), headers=site_admin.headers)
    assert plain.json()["data"]["email"] is None


async def test_a_marketplace_admin_reads_notifications(
    client: httpx.AsyncClient, site: SiteFactory
) -> None:
    admin = await site.account("marketplace_admin")
    response = await client.get(url("/notifications"), headers=admin.headers)
    assert response.status_code == 200


@pytest.mark.parametrize(
    "path", ["/notifications", "/notifications/summary", f"/notifications/{UNKNOWN_ID}"]
)
async def test_authentication_and_permission(
    client: httpx.AsyncClient, site: SiteFactory, path: str
) -> None:
    assert (await client.get(url(path))).status_code == 401
    manager = await site.account("api_manager")  # the baseline, not this permission
    denied = await client.get(url(path), headers=manager.headers)
    assert denied.status_code == 403
    assert denied.json()["detail"] == f"missing permission '{PERMISSION}'"
    editor = await site.account("content_editor")  # not even the baseline
    refused = await client.get(url(path), headers=editor.headers)
    assert refused.status_code == 403
    assert refused.json()["detail"] == "missing permission 'access marketplace admin api'"


@pytest.mark.parametrize("notification", [UNKNOWN_ID, "not-a-uuid", "1"])
async def test_unknown_notifications_are_404(
    client: httpx.AsyncClient, site_admin: SiteAccount, notification: str
) -> None:
    response = await client.get(url(f"/notifications/{notification}"), headers=site_admin.headers)
    assert response.status_code == 404
    assert response.headers["content-type"] == "application/problem+json"
    assert response.json()["detail"] == "notification not found"


@pytest.mark.parametrize(
    ("path", "parameter"),
    [
        ("/notifications?filter[colour]=red", "filter[colour]"),
        ("/notifications?sort=colour", "sort"),
        ("/notifications?page=0", "page"),
        ("/notifications?limit=501", "limit"),
        ("/notifications?colour=red", "colour"),
        ("/notifications?filter[audience]=everyone", "filter[audience]"),
        ("/notifications?filter[recipient]=nobody", "filter[recipient]"),
        ("/notifications?filter[from]=yesterday", "filter[from]"),
        ("/notifications?filter[to]=2025-13-01", "filter[to]"),
        ("/notifications/summary?filter[colour]=red", "filter[colour]"),
        ("/notifications/summary?filter[from]=soon", "filter[from]"),
        ("/notifications/summary?page=2", "page"),
        ("/notifications/summary?sort=type", "sort"),
    ],
)
async def test_bad_queries_are_400_naming_the_parameter(
    client: httpx.AsyncClient, site_admin: SiteAccount, path: str, parameter: str
) -> None:
    response = await client.get(url(path), headers=site_admin.headers)
    assert response.status_code == 400, response.text
    assert response.headers["content-type"] == "application/problem+json"
    assert [e["parameter"] for e in response.json()["errors"]] == [parameter]


async def test_the_api_description_covers_the_notification_endpoints(
    client: httpx.AsyncClient, site_admin: SiteAccount
) -> None:
    document = (await client.get(url("/openapi.json"), headers=site_admin.headers)).json()
    for path in ("/notifications", "/notifications/summary", "/notifications/{notification}"):
        schema = document["paths"][path]["get"]["responses"]["200"]["content"]
        assert "$ref" in schema["application/json"]["schema"]
