"""Subscriptions against a real management service and a real gateway: approval gives the
app's key access through the gateway's route, revocation, node deletion and cancellation
take it away, and a management service that is down makes the approval wait in
``provisioning`` and succeed by itself once it is back."""

from __future__ import annotations

import uuid
from typing import Any

import httpx
from sqlalchemy import select

from portico.core.audit import AuditEntry
from portico.core.db.engine import Database
from portico.core.job_worker import JobWorker
from portico.core.outbox import OutboxEmail
from portico.core.settings import Settings
from tests.marketplace.conftest import SiteAccount, url
from tests.marketplace.subscriptions.harness import (
    RemoteSide,
    cancel_subscription,
    developer_app,
    request_subscription,
)
from tests.support.waiting import eventually

REFUSED = (401, 403)


async def subscription(
    client: httpx.AsyncClient, who: SiteAccount, subscription_id: uuid.UUID
) -> dict[str, Any]:
    answer = await client.get(url(f"/subscriptions/{subscription_id}"), headers=who.headers)
    assert answer.status_code == 200, answer.text
    data: dict[str, Any] = answer.json()["data"]
    return data


async def status_of(client: httpx.AsyncClient, who: SiteAccount, subscription_id: uuid.UUID) -> str:
    return str((await subscription(client, who, subscription_id))["status"])


async def decide(
    client: httpx.AsyncClient,
    who: SiteAccount,
    subscription_id: uuid.UUID,
    action: str,
    reason: str | None = None,
) -> httpx.Response:
    body = None if reason is None else {"reason": reason}
    return await client.post(
        url(f"/subscriptions/{subscription_id}/{action}"), json=body, headers=who.headers
    )


async def admitted(remote: RemoteSide, key: str) -> bool:
    return await remote.through_gateway(key) == 200


async def refused(remote: RemoteSide, key: str) -> bool:
    return await remote.through_gateway(key) in REFUSED


async def test_approval_admits_the_key_and_revocation_refuses_it(
    client: httpx.AsyncClient,
    database: Database,
    settings: Settings,
    remote: RemoteSide,
    api_node: uuid.UUID,
    manager: SiteAccount,
    site_admin: SiteAccount,
    developer: SiteAccount,
    workers: JobWorker,
) -> None:
    app_id, key = await developer_app(database, settings, developer.id, "orders client")
    subscription_id = await request_subscription(database, developer.id, app_id, api_node)
    assert await status_of(client, manager, subscription_id) == "pending"
    assert await remote.through_gateway(key) == 401  # no such key on the gateway yet

    approved = await decide(client, manager, subscription_id, "approve")
    assert approved.status_code == 200, approved.text
    assert approved.json()["data"]["status"] in ("provisioning", "active")
    assert approved.json()["data"]["provisioning"]["connection_id"] is not None

    async def active() -> bool:
        return await status_of(client, manager, subscription_id) == "active"

    await eventually(active, 90, what="the subscription to become active")
    await eventually(lambda: admitted(remote, key), 60, what="the gateway to admit the key")
    shown = await subscription(client, manager, subscription_id)
    assert shown["provisioning"]["pending"] == "none"
    assert shown["provisioning"]["last_error"] is None

    # what the management service holds: the developer, the app with the key, the API's
    # implied product (unlimited, deployed where the API is live)
    developers = await remote.call("GET", "/developers", params={"email": developer.email})
    (remote_developer,) = developers["items"]
    implied = await remote.call("GET", "/products", params={"name": f"portal-{remote.api_id}"})
    (product,) = implied["items"]
    assert product["apiIds"] == [remote.api_id]
    assert product["quota"]["limit"] == -1
    assert product["environments"] == [remote.env_id]
    apps = await remote.call(
        "GET", f"/developers/{remote_developer['id']}/envs/{remote.env_id}/apps"
    )
    (remote_app,) = apps["items"]
    assert remote_app["name"] == "orders client"
    assert remote_app["products"] == {product["id"]: 0}
    assert remote_app["credentials"]["key-auth"]["keyHint"] == key[:4]

    revoked = await decide(client, manager, subscription_id, "revoke", "unpaid invoices")
    assert revoked.status_code == 200, revoked.text
    assert revoked.json()["data"]["status"] == "revoked"  # at once, in the portal
    assert revoked.json()["data"]["reason"] == "unpaid invoices"
    await eventually(lambda: refused(remote, key), 60, what="the gateway to refuse the key")
    remote_app = await remote.call("GET", f"/apps/{remote_app['id']}")
    assert remote_app["products"] == {} and remote_app["status"] == "revoked"

    # told, with the reason, by notification and by email; every decision audited
    notices = await client.get(
        url("/notifications"),
        params={"filter[type]": "subscription_revoked"},
        headers=site_admin.headers,  # the administrator reads site notifications
    )
    assert notices.status_code == 200, notices.text
    (notice,) = notices.json()["data"]
    assert "unpaid invoices" in notice["body"]
    async with database.session() as session:
        emails = list(
            await session.scalars(
                select(OutboxEmail).where(OutboxEmail.to_address == developer.email)
            )
        )
        actions = set(
            await session.scalars(
                select(AuditEntry.action).where(AuditEntry.entity_id == str(subscription_id))
            )
        )
    assert {e.kind for e in emails} == {"subscription_approved", "subscription_revoked"}
    (revocation,) = [e for e in emails if e.kind == "subscription_revoked"]
    assert "unpaid invoices" in revocation.body_text
    assert actions == {"subscription.request", "subscription.approve", "subscription.revoke"}


async def test_a_product_subscription_grants_the_product(
    client: httpx.AsyncClient,
    database: Database,
    settings: Settings,
    remote: RemoteSide,
    product_node: uuid.UUID,
    manager: SiteAccount,
    developer: SiteAccount,
    workers: JobWorker,
) -> None:
    app_id, key = await developer_app(database, settings, developer.id)
    subscription_id = await request_subscription(database, developer.id, app_id, product_node)
    assert (await decide(client, manager, subscription_id, "approve")).status_code == 200

    async def active() -> bool:
        # the gateway may admit the key a moment before the worker records the success
        return await status_of(client, manager, subscription_id) == "active"

    await eventually(active, 90, what="the subscription to become active")
    await eventually(lambda: admitted(remote, key), 60, what="the gateway to admit the key")
    developers = await remote.call("GET", "/developers", params={"email": developer.email})
    apps = await remote.call(
        "GET", f"/developers/{developers['items'][0]['id']}/envs/{remote.env_id}/apps"
    )
    assert apps["items"][0]["products"] == {remote.product_id: 0}

    # its traffic, as the gateway connection reports it
    for _ in range(3):
        assert await remote.through_gateway(key) == 200

    async def reported() -> dict[str, Any] | None:
        answer = await client.get(
            url(f"/subscriptions/{subscription_id}/analytics"),
            params={"window": "1h"},
            headers=manager.headers,
        )
        assert answer.status_code == 200, answer.text
        data: dict[str, Any] = answer.json()["data"]
        return data if data["requests"] >= 4 else None

    await eventually(reported, 90, what="the traffic to reach the analytics")
    usage = await reported()
    assert usage is not None
    assert usage["window"] == "1h"
    assert usage["quota"]["limit"] == 1000 and usage["quota"]["used"] >= 4
    assert usage["errors"] == 0
    assert set(usage["latency_ms"]) == {"p50", "p95", "p99"}
    assert usage["latency_ms"]["p50"] is not None
    bad_window = await client.get(
        url(f"/subscriptions/{subscription_id}/analytics"),
        params={"window": "1y"},
        headers=manager.headers,
    )
    assert bad_window.status_code == 400, bad_window.text

    # the developer cancels: the access goes too
    await cancel_subscription(database, developer.id, subscription_id)
    assert await status_of(client, manager, subscription_id) == "cancelled"
    await eventually(lambda: refused(remote, key), 60, what="the gateway to refuse the key")


async def test_the_management_service_down_leaves_it_provisioning_until_it_is_back(
    client: httpx.AsyncClient,
    database: Database,
    settings: Settings,
    remote: RemoteSide,
    api_node: uuid.UUID,
    manager: SiteAccount,
    developer: SiteAccount,
    workers: JobWorker,
) -> None:
    app_id, key = await developer_app(database, settings, developer.id)
    subscription_id = await request_subscription(database, developer.id, app_id, api_node)
    await remote.management.stop()

    approved = await decide(client, manager, subscription_id, "approve")
    assert approved.status_code == 200, approved.text
    assert approved.json()["data"]["status"] == "provisioning"

    async def failed_twice() -> bool:
        shown = await subscription(client, manager, subscription_id)
        return bool(shown["provisioning"]["attempts"] >= 2)

    await eventually(failed_twice, 90, what="two failed attempts to be recorded")
    shown = await subscription(client, manager, subscription_id)
    assert shown["status"] == "provisioning"  # never reported active before it is
    assert shown["provisioning"]["pending"] == "grant"
    assert "cannot connect" in shown["provisioning"]["last_error"]
    assert shown["provisioning"]["next_attempt_at"] is not None
    assert await remote.through_gateway(key) == 401

    # the management service comes back; nobody acts, the worker retries and succeeds
    await remote.management.start()

    async def active() -> bool:
        return await status_of(client, manager, subscription_id) == "active"

    await eventually(active, 120, what="the subscription to become active by itself")
    await eventually(lambda: admitted(remote, key), 60, what="the gateway to admit the key")
    shown = await subscription(client, manager, subscription_id)
    assert shown["provisioning"]["last_error"] is None


async def test_deleting_the_api_node_revokes_its_subscriptions(
    client: httpx.AsyncClient,
    database: Database,
    settings: Settings,
    remote: RemoteSide,
    api_node: uuid.UUID,
    manager: SiteAccount,
    site_admin: SiteAccount,
    developer: SiteAccount,
    workers: JobWorker,
) -> None:
    app_id, key = await developer_app(database, settings, developer.id, "first")
    other_app, _ = await developer_app(database, settings, developer.id, "second")
    active_id = await request_subscription(database, developer.id, app_id, api_node)
    pending_id = await request_subscription(database, developer.id, other_app, api_node)
    assert (await decide(client, manager, active_id, "approve")).status_code == 200
    await eventually(lambda: admitted(remote, key), 90, what="the gateway to admit the key")

    deleted = await client.delete(url(f"/apis/{api_node}"), headers=site_admin.headers)
    assert deleted.status_code == 204, deleted.text
    for subscription_id in (active_id, pending_id):
        shown = await subscription(client, manager, subscription_id)
        assert shown["status"] == "revoked"
        assert shown["reason"] == "the API 'orders' was deleted"
        assert shown["node"] == {"id": None, "bundle": "apis", "title": "orders"}
    await eventually(lambda: refused(remote, key), 60, what="the gateway to refuse the key")
