"""The admin API's subscription endpoints without a gateway: portal-native nodes (nothing to
provision: approval makes them active at once), the state table's 409s, reasons in the
notifications and the outbox, the approval queue's order and filters, permissions and
unknown ids."""

from __future__ import annotations

import uuid

import httpx
import pytest
from sqlalchemy import select

from portico.core.db.engine import Database
from portico.core.outbox import OutboxEmail
from portico.core.settings import Settings
from portico.marketplace.developer_app.service import DeveloperAppNotFound
from portico.marketplace.node.models import Bundle
from portico.marketplace.subscription.service import (
    AlreadySubscribed,
    SubscribableNotFound,
    TransitionRefused,
)
from tests.marketplace.conftest import SiteAccount, SiteFactory, url
from tests.marketplace.subscriptions.conftest import DECIDER, OUTSIDER
from tests.marketplace.subscriptions.harness import (
    cancel_subscription,
    developer_app,
    published_node,
    request_subscription,
)

ENDPOINTS = [
    ("GET", "/subscriptions/{id}", None),
    ("GET", "/subscriptions/{id}/analytics", None),
    ("POST", "/subscriptions/{id}/approve", None),
    ("POST", "/subscriptions/{id}/reject", {"reason": "no"}),
    ("POST", "/subscriptions/{id}/revoke", {"reason": "no"}),
]


async def call(
    client: httpx.AsyncClient,
    who: SiteAccount,
    method: str,
    path: str,
    body: dict[str, str] | None = None,
) -> httpx.Response:
    return await client.request(method, url(path), json=body, headers=who.headers)


async def test_a_portal_native_node_is_active_at_once_and_the_state_table_decides(
    client: httpx.AsyncClient,
    database: Database,
    settings: Settings,
    native_node: uuid.UUID,
    manager: SiteAccount,
    developer: SiteAccount,
) -> None:
    app_id, _ = await developer_app(database, settings, developer.id)
    subscription_id = await request_subscription(database, developer.id, app_id, native_node)
    base = f"/subscriptions/{subscription_id}"

    # only pending ones are revoked: no
    refused = await call(client, manager, "POST", f"{base}/revoke", {"reason": "why not"})
    assert refused.status_code == 409, refused.text
    assert refused.json()["detail"] == (
        "cannot revoke a subscription that is pending (only one that is active or provisioning)"
    )
    approved = await call(client, manager, "POST", f"{base}/approve")
    assert approved.status_code == 200, approved.text
    data = approved.json()["data"]
    assert data["status"] == "active"
    assert data["provisioning"] == {
        "connection_id": None,
        "pending": "none",
        "attempts": 0,
        "last_error": None,
        "last_attempt_at": None,
        "next_attempt_at": None,
    }
    assert data["decided_by"] == str(manager.id)
    for action, body in (("approve", None), ("reject", {"reason": "late"})):
        again = await call(client, manager, "POST", f"{base}/{action}", body)
        assert again.status_code == 409, again.text
        assert again.headers["content-type"] == "application/problem+json"
        assert again.json()["detail"].startswith(f"cannot {action} a subscription that is active")

    # nothing on a gateway to report on
    assert (await call(client, manager, "GET", f"{base}/analytics")).status_code == 409

    revoked = await call(client, manager, "POST", f"{base}/revoke", {"reason": "abuse"})
    assert revoked.status_code == 200, revoked.text
    assert revoked.json()["data"]["status"] == "revoked"
    for action, body in (
        ("approve", None),
        ("reject", {"reason": "x"}),
        ("revoke", {"reason": "x"}),
    ):
        assert (await call(client, manager, "POST", f"{base}/{action}", body)).status_code == 409
    with pytest.raises(TransitionRefused):
        await cancel_subscription(database, developer.id, subscription_id)


async def test_rejection_tells_the_developer_why(
    client: httpx.AsyncClient,
    database: Database,
    settings: Settings,
    native_node: uuid.UUID,
    manager: SiteAccount,
    site_admin: SiteAccount,
    developer: SiteAccount,
) -> None:
    app_id, _ = await developer_app(database, settings, developer.id, "scraper")
    subscription_id = await request_subscription(database, developer.id, app_id, native_node)
    rejected = await call(
        client,
        manager,
        "POST",
        f"/subscriptions/{subscription_id}/reject",
        {"reason": "tell us what the app is for"},
    )
    assert rejected.status_code == 200, rejected.text
    assert rejected.json()["data"]["status"] == "rejected"
    assert rejected.json()["data"]["reason"] == "tell us what the app is for"

    notices = await client.get(
        url("/notifications"),
        params={"filter[type]": "subscription_rejected"},
        headers=site_admin.headers,
    )
    (notice,) = notices.json()["data"]
    assert "tell us what the app is for" in notice["body"]
    async with database.session() as session:
        (email,) = await session.scalars(
            select(OutboxEmail).where(
                OutboxEmail.to_address == developer.email,
                OutboxEmail.kind == "subscription_rejected",
            )
        )
    assert "scraper" in email.subject
    assert "Reason: tell us what the app is for" in email.body_text

    # the app may ask again once rejected; twice while live is refused
    again = await request_subscription(database, developer.id, app_id, native_node)
    with pytest.raises(AlreadySubscribed):
        await request_subscription(database, developer.id, app_id, native_node)
    assert again != subscription_id


@pytest.mark.parametrize("reason", [None, "", "   ", 42])
async def test_reject_and_revoke_need_a_reason(
    client: httpx.AsyncClient,
    database: Database,
    settings: Settings,
    native_node: uuid.UUID,
    manager: SiteAccount,
    developer: SiteAccount,
    reason: object,
) -> None:
    app_id, _ = await developer_app(database, settings, developer.id)
    subscription_id = await request_subscription(database, developer.id, app_id, native_node)
    for action in ("reject", "revoke"):
        body = {} if reason is None else {"reason": reason}
        answer = await client.post(
            url(f"/subscriptions/{subscription_id}/{action}"), json=body, headers=manager.headers
        )
        assert answer.status_code == 400, answer.text
        assert answer.json()["errors"][0]["pointer"] == "/reason"


async def test_the_queue_lists_pending_first_and_filters(
    client: httpx.AsyncClient,
    database: Database,
    settings: Settings,
    native_node: uuid.UUID,
    manager: SiteAccount,
    developer: SiteAccount,
) -> None:
    other_node = await published_node(
        database, bundle=Bundle.API_PRODUCTS, title="bundle", connection_id=None, remote_id=None
    )
    ids = []
    for name in ("a", "b", "c"):
        app_id, _ = await developer_app(database, settings, developer.id, name)
        ids.append(await request_subscription(database, developer.id, app_id, native_node))
    approved = await call(client, manager, "POST", f"/subscriptions/{ids[0]}/approve")
    assert approved.status_code == 200
    last_app, _ = await developer_app(database, settings, developer.id, "d")
    ids.append(await request_subscription(database, developer.id, last_app, other_node))

    listed = await client.get(url("/subscriptions"), headers=manager.headers)
    assert listed.status_code == 200, listed.text
    body = listed.json()
    assert [s["id"] for s in body["data"]] == [str(ids[1]), str(ids[2]), str(ids[3]), str(ids[0])]
    assert body["meta"] == {"count": 4, "page": 1, "limit": 50, "pages": 1}

    newest = await client.get(
        url("/subscriptions"), params={"sort": "-requested_at"}, headers=manager.headers
    )
    assert [s["id"] for s in newest.json()["data"]] == [
        str(ids[3]),
        str(ids[2]),
        str(ids[1]),
        str(ids[0]),
    ]
    for params, expected in (
        ({"filter[status]": "active"}, [ids[0]]),
        ({"filter[node]": str(other_node)}, [ids[3]]),
        ({"filter[app]": str(last_app)}, [ids[3]]),
        ({"filter[status]": "pending", "filter[node]": str(native_node)}, [ids[1], ids[2]]),
    ):
        found = await client.get(url("/subscriptions"), params=params, headers=manager.headers)
        assert found.status_code == 200, found.text
        assert [s["id"] for s in found.json()["data"]] == [str(i) for i in expected], params

    for params, parameter in (
        ({"filter[status]": "paused"}, "filter[status]"),
        ({"filter[app]": "not-an-id"}, "filter[app]"),
        ({"filter[colour]": "red"}, "filter[colour]"),
        ({"sort": "colour"}, "sort"),
        ({"limit": "501"}, "limit"),
    ):
        bad = await client.get(url("/subscriptions"), params=params, headers=manager.headers)
        assert bad.status_code == 400, bad.text
        assert bad.json()["errors"][0]["parameter"] == parameter


async def test_permissions(
    client: httpx.AsyncClient,
    database: Database,
    settings: Settings,
    native_node: uuid.UUID,
    site: SiteFactory,
    developer: SiteAccount,
) -> None:
    app_id, _ = await developer_app(database, settings, developer.id)
    subscription_id = await request_subscription(database, developer.id, app_id, native_node)
    outsider = await site.account(OUTSIDER)
    decider = await site.account(DECIDER)
    for method, path, body in [("GET", "/subscriptions", None), *ENDPOINTS]:
        answer = await call(client, outsider, method, path.format(id=subscription_id), body)
        assert answer.status_code == 403, (method, path, answer.text)
        needed = (
            "view api analytics"
            if path.endswith("analytics")
            else ("administer apim subscriptions")
        )
        assert needed in answer.json()["detail"]
    # the developer holds no admin API permission at all
    denied = await call(client, developer, "GET", "/subscriptions")
    assert denied.status_code == 403
    # deciding does not include reading analytics
    analytics = await call(client, decider, "GET", f"/subscriptions/{subscription_id}/analytics")
    assert analytics.status_code == 403
    assert "view api analytics" in analytics.json()["detail"]
    assert (
        await call(client, decider, "GET", f"/subscriptions/{subscription_id}")
    ).status_code == 200
    unauthenticated = await client.get(url(f"/subscriptions/{subscription_id}"))
    assert unauthenticated.status_code == 401


async def test_unknown_ids_are_not_found(client: httpx.AsyncClient, manager: SiteAccount) -> None:
    for raw in ("not-a-uuid", str(uuid.uuid4())):
        for method, path, body in ENDPOINTS:
            answer = await call(client, manager, method, path.format(id=raw), body)
            assert answer.status_code == 404, (method, path, answer.text)
            assert answer.json()["detail"] == "subscription not found"


async def test_only_published_apis_and_products_can_be_subscribed_to(
    database: Database,
    settings: Settings,
    developer: SiteAccount,
    site: SiteFactory,
) -> None:
    app_id, _ = await developer_app(database, settings, developer.id)
    page = await published_node(
        database, bundle=Bundle.PAGE, title="about", connection_id=None, remote_id=None
    )
    for node_id in (page, uuid.uuid4()):
        with pytest.raises(SubscribableNotFound):
            await request_subscription(database, developer.id, app_id, node_id)
    someone_else = await site.account()
    native = await published_node(
        database, bundle=Bundle.APIS, title="x", connection_id=None, remote_id=None
    )
    with pytest.raises(DeveloperAppNotFound):  # another account's app is not found
        await request_subscription(database, someone_else.id, app_id, native)
