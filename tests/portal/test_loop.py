"""The whole subscription loop by HTTP alone, against a real management service and a real
gateway (``tests/marketplace/subscriptions/harness.py``): an administrator imports and
publishes an API of the management service; a developer registers on the portal, is let
in, signs in, creates an app (its key), and subscribes; the approval lets the key through
the gateway, the app's usage shows its traffic (502 while the management service is down),
and the revocation refuses the key again and reaches the developer with its reason."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import httpx
import pytest
from pydantic import SecretStr

from portico.core.job_worker import JobWorker
from portico.core.settings import Settings
from tests.marketplace.conftest import SiteFactory
from tests.marketplace.connections.conftest import LOOPBACK, app_settings
from tests.marketplace.subscriptions.conftest import (  # noqa: F401  (fixtures)
    connection_id,
    remote,
    workers,
)
from tests.marketplace.subscriptions.harness import RemoteSide
from tests.support.waiting import eventually

ADMIN = "/api/admin/v1"
PORTAL = "/api/portal/v1"
EMAIL = "loop.developer@example.com"
PASSWORD = "a long enough passphrase"
REASON = "Your trial period is over"


@pytest.fixture
def settings(database_url: str, tmp_path: Path) -> Settings:
    """Loopback reachable (the remote side runs there) and token issuance on."""
    return app_settings(
        database_url,
        tmp_path,
        marketplace_egress_allow=[LOOPBACK],
        idp_web_api_key=SecretStr("loop-test-web-api-key"),
    )


async def ok(answer: httpx.Response, status: int = 200) -> Any:
    assert answer.status_code == status, answer.text
    return answer.json() if answer.content else None


async def test_the_developer_loop_by_http(
    client: httpx.AsyncClient,
    remote: RemoteSide,  # noqa: F811
    connection_id: uuid.UUID,  # noqa: F811
    workers: JobWorker,  # noqa: F811
    site: SiteFactory,
) -> None:
    # the installation's administrator (bootstrap makes it; not a developer step)
    admin = (await site.account(platform_admin=True)).headers

    # the administrator imports the management service's API and publishes it
    imported = await ok(
        await client.post(
            f"{ADMIN}/gateways/connections/{connection_id}/apis/import",
            json={"api_id": remote.api_id},
            headers=admin,
        ),
        201,
    )
    node = imported["data"]["id"]
    for transition in ("submit_for_review", "publish"):
        moved = await ok(
            await client.post(
                f"{ADMIN}/publishing/transitions",
                json={"nodes": [node], "transition": transition},
                headers=admin,
            )
        )
        assert moved["data"][0]["outcome"] == "applied", moved

    # a developer registers, is let in, and signs in on the portal
    await ok(
        await client.post(
            f"{PORTAL}/registrations",
            json={"email": EMAIL, "password": PASSWORD, "display_name": "Loop"},
        ),
        202,
    )
    pending = await ok(await client.get(f"{ADMIN}/users/pending", headers=admin))
    [user] = [u for u in pending["data"] if u["email"] == EMAIL]
    await ok(await client.post(f"{ADMIN}/users/{user['id']}/approve", headers=admin))
    tokens = await ok(
        await client.post(f"{PORTAL}/auth/token", json={"email": EMAIL, "password": PASSWORD})
    )
    developer = {"Authorization": f"Bearer {tokens['data']['id_token']}"}

    # it finds the API, creates an app (its key, once) and subscribes
    apis = await ok(await client.get(f"{PORTAL}/apis", headers=developer))
    assert [a["id"] for a in apis["data"]] == [node]
    app = (
        await ok(await client.post(f"{PORTAL}/apps", json={"name": "shop"}, headers=developer), 201)
    )["data"]
    [credential] = app["credentials"]
    key = credential["key"]
    subscribed = await ok(
        await client.post(
            f"{PORTAL}/apps/{app['id']}/subscriptions", json={"api": node}, headers=developer
        ),
        201,
    )
    subscription = subscribed["data"]["id"]
    assert subscribed["data"]["status"] == "pending"
    assert await remote.through_gateway(key) == 401  # nothing granted yet

    # the administrator approves: the gateway lets the key through
    await ok(await client.post(f"{ADMIN}/subscriptions/{subscription}/approve", headers=admin))

    async def admitted() -> bool:
        return await remote.through_gateway(key) == 200

    await eventually(admitted, 90, what="the gateway to admit the app's key")

    async def status() -> str:
        mine = await ok(
            await client.get(f"{PORTAL}/apps/{app['id']}/subscriptions", headers=developer)
        )
        return str(mine["data"][0]["status"])

    await eventually(lambda: _is(status, "active"), 90, what="the subscription to be active")

    # its usage shows the traffic, read from the management service
    async def traffic() -> dict[str, Any] | None:
        usage = await ok(
            await client.get(
                f"{PORTAL}/apps/{app['id']}/analytics", params={"window": "1h"}, headers=developer
            )
        )
        data: dict[str, Any] = usage["data"]
        return data if data["requests"] >= 1 else None

    await eventually(traffic, 90, what="the traffic to reach the app's usage")
    usage = await traffic()
    assert usage is not None and usage["window"] == "1h" and usage["errors"] == 0
    assert usage["quota"] == {"limit": None, "used": None}  # an API's implied product: unlimited
    assert usage["latency_ms"]["p50"] is not None

    # the management service cannot be read: 502, a problem, never a 500
    await remote.management.stop()
    down = await client.get(f"{PORTAL}/apps/{app['id']}/analytics", headers=developer)
    assert down.status_code == 502, down.text
    assert down.headers["content-type"] == "application/problem+json"
    assert down.json()["type"].endswith("/analytics-unavailable")
    await remote.management.start()

    # the administrator revokes with a reason: the key is refused, the developer told why
    await ok(
        await client.post(
            f"{ADMIN}/subscriptions/{subscription}/revoke", json={"reason": REASON}, headers=admin
        )
    )

    async def refused() -> bool:
        return await remote.through_gateway(key) in (401, 403)

    await eventually(refused, 90, what="the gateway to refuse the app's key")
    mine = await ok(await client.get(f"{PORTAL}/apps/{app['id']}/subscriptions", headers=developer))
    assert mine["data"][0]["status"] == "revoked" and mine["data"][0]["reason"] == REASON
    notices = await ok(await client.get(f"{PORTAL}/notifications", headers=developer))
    revoked = [n for n in notices["data"] if n["type"] == "subscription_revoked"]
    assert len(revoked) == 1, notices
    assert revoked[0]["data"]["reason"] == REASON and REASON in revoked[0]["body"]
    assert any(n["type"] == "subscription_approved" for n in notices["data"])


async def _is(read: Any, expected: str) -> bool:
    return bool(await read() == expected)
