"""``GET /notifications``: the notices addressed to the caller, and no one else's, newest
first, paginated."""

from __future__ import annotations

from datetime import timedelta

import httpx

from portico.core.account import User
from portico.core.clock import utcnow
from portico.core.db.engine import Database
from portico.marketplace.notification import service as notification_service
from tests.marketplace.conftest import SiteAccount, SiteFactory
from tests.portal.conftest import get


async def _notify(
    database: Database, who: SiteAccount | None, subject: str, *, age: int, type_: str = "x"
) -> None:
    async with database.session() as session, session.begin():
        recipient = None if who is None else await session.get(User, who.id)
        await notification_service.notify(
            session,
            type=type_,
            audience="user" if who else "administrators",
            subject=subject,
            body=f"{subject}.",
            recipient=recipient,
            email_kind=None,
            now=utcnow() - timedelta(seconds=age),
            entity_type="subscription",
            entity_id="42",
            data={"reason": "because"},
        )


async def test_the_caller_reads_its_own_notifications_newest_first(
    client: httpx.AsyncClient, database: Database, site: SiteFactory
) -> None:
    ada = await site.account(email="ada@example.com")
    grace = await site.account(email="grace@example.com")
    await _notify(database, ada, "Oldest", age=30, type_="subscription_rejected")
    await _notify(database, ada, "Middle", age=20)
    await _notify(database, ada, "Newest", age=10, type_="subscription_rejected")
    await _notify(database, grace, "For Grace", age=5)
    await _notify(database, None, "For administrators", age=1)

    mine = await get(client, "/notifications", ada)
    assert mine.status_code == 200, mine.text
    body = mine.json()
    assert [n["subject"] for n in body["data"]] == ["Newest", "Middle", "Oldest"]
    assert body["meta"] == {"count": 3, "page": 1, "limit": 50, "pages": 1}
    first = body["data"][0]
    assert first["data"] == {"reason": "because"} and first["type"] == "subscription_rejected"
    assert first["entity_type"] == "subscription" and first["body"] == "Newest."
    assert "recipient_email" not in first and "email" not in first

    paged = await get(client, "/notifications", ada, limit=2, page=2)
    assert [n["subject"] for n in paged.json()["data"]] == ["Oldest"]
    oldest_first = await get(client, "/notifications", ada, sort="created_at")
    assert [n["subject"] for n in oldest_first.json()["data"]] == ["Oldest", "Middle", "Newest"]
    rejected = await get(client, "/notifications", ada, **{"filter[type]": "subscription_rejected"})
    assert [n["subject"] for n in rejected.json()["data"]] == ["Newest", "Oldest"]

    theirs = await get(client, "/notifications", grace)
    assert [n["subject"] for n in theirs.json()["data"]] == ["For Grace"]
    assert (await get(client, "/notifications")).status_code == 401
