"""``/apps/{app}/subscriptions``: asking for an API or a product the caller may see
(pending), refusing what it may not see (404) and malformed requests (400 naming the
field), listing with status and reason, and cancelling (409 once it cannot be)."""

from __future__ import annotations

import uuid
from typing import Any

import httpx

from portico.core.audit import AuditEntry
from portico.marketplace.node.models import Bundle, ModerationState, Visibility
from portico.marketplace.public import Usage
from portico.portal.apps.usage import app_analytics
from tests.marketplace.conftest import SiteAccount, SiteFactory
from tests.portal.conftest import Catalogue, Rows, url


async def new_app(client: httpx.AsyncClient, who: SiteAccount, name: str = "client") -> str:
    created = await client.post(url("/apps"), json={"name": name}, headers=who.headers)
    assert created.status_code == 201, created.text
    app_id: str = created.json()["data"]["id"]
    return app_id


async def ask(
    client: httpx.AsyncClient, who: SiteAccount, app_id: str, body: Any
) -> httpx.Response:
    return await client.post(url(f"/apps/{app_id}/subscriptions"), json=body, headers=who.headers)


async def listed(client: httpx.AsyncClient, who: SiteAccount, app_id: str) -> list[dict[str, Any]]:
    answer = await client.get(url(f"/apps/{app_id}/subscriptions"), headers=who.headers)
    assert answer.status_code == 200, answer.text
    data: list[dict[str, Any]] = answer.json()["data"]
    return data


async def test_subscribing_to_visible_published_nodes_is_pending(
    client: httpx.AsyncClient, site: SiteFactory, catalogue: Catalogue, rows: Rows
) -> None:
    ada = await site.account(email="ada@example.com")
    app_id = await new_app(client, ada)
    weather = await catalogue.node("Weather")
    bundle = await catalogue.node("Bundle", bundle=Bundle.API_PRODUCTS, apis=[weather])

    asked = await ask(client, ada, app_id, {"api": str(weather)})
    assert asked.status_code == 201, asked.text
    subscription = asked.json()["data"]
    location = f"/api/portal/v1/apps/{app_id}/subscriptions/{subscription['id']}"
    assert asked.headers["location"] == location
    assert subscription["status"] == "pending" and subscription["reason"] is None
    assert subscription["node"] == {"id": str(weather), "bundle": "apis", "title": "Weather"}
    assert "provisioning" not in subscription and "app" not in subscription
    again = await client.get(location, headers=ada.headers)
    assert again.status_code == 200 and again.json()["data"] == subscription

    twice = await ask(client, ada, app_id, {"api": str(weather)})
    assert twice.status_code == 409, twice.text
    product = await ask(client, ada, app_id, {"product": str(bundle)})
    assert product.status_code == 201, product.text
    assert product.json()["data"]["node"]["bundle"] == "api_products"

    assert [(s["node"]["title"], s["status"]) for s in await listed(client, ada, app_id)] == [
        ("Weather", "pending"),
        ("Bundle", "pending"),
    ]
    [event] = await rows(AuditEntry, AuditEntry.entity_id == subscription["id"])
    assert event.action == "subscription.request" and event.actor_id == ada.id


async def test_what_the_caller_may_not_see_is_not_found(
    client: httpx.AsyncClient, site: SiteFactory, catalogue: Catalogue
) -> None:
    ada = await site.account(email="ada@example.com")
    app_id = await new_app(client, ada)
    acme = await catalogue.organisation("Acme")
    hidden = await catalogue.node(
        "Acme only", visibility=Visibility.ORGANISATION, organisation=acme
    )
    draft = await catalogue.node("Draft", state=ModerationState.DRAFT)
    product = await catalogue.node("Product", bundle=Bundle.API_PRODUCTS)
    api = await catalogue.node("Api")
    for body in (
        {"api": str(hidden)},
        {"api": str(draft)},
        {"api": str(uuid.uuid4())},
        {"api": str(product)},  # a product is no API
        {"product": str(api)},
    ):
        refused = await ask(client, ada, app_id, body)
        assert refused.status_code == 404, (body, refused.text)
    assert await listed(client, ada, app_id) == []


async def test_exactly_one_of_api_and_product(
    client: httpx.AsyncClient, site: SiteFactory, catalogue: Catalogue
) -> None:
    ada = await site.account(email="ada@example.com")
    app_id = await new_app(client, ada)
    api = await catalogue.node("Api")
    product = await catalogue.node("Product", bundle=Bundle.API_PRODUCTS)
    for body, pointer in (
        ({"api": str(api), "product": str(product)}, "/product"),
        ({}, "/api"),
        ({"api": None}, "/api"),
        ({"api": "weather"}, "/api"),
        ({"api": str(api), "plan": "gold"}, "/plan"),
    ):
        refused = await ask(client, ada, app_id, body)
        assert refused.status_code == 400, (body, refused.text)
        assert [e["pointer"] for e in refused.json()["errors"]] == [pointer], body
    assert await listed(client, ada, app_id) == []


async def test_cancel_and_the_reason_of_a_decision(
    client: httpx.AsyncClient, site: SiteFactory, catalogue: Catalogue
) -> None:
    ada = await site.account(email="ada@example.com")
    manager = await site.account("api_manager")
    app_id = await new_app(client, ada)
    other_app = await new_app(client, ada, "other")
    first = (await ask(client, ada, app_id, {"api": str(await catalogue.node("One"))})).json()
    second = (await ask(client, ada, app_id, {"api": str(await catalogue.node("Two"))})).json()
    first_id, second_id = first["data"]["id"], second["data"]["id"]

    # another app of the same developer does not reach it
    wrong_app = await client.delete(
        url(f"/apps/{other_app}/subscriptions/{first_id}"), headers=ada.headers
    )
    assert wrong_app.status_code == 404
    cancelled = await client.delete(
        url(f"/apps/{app_id}/subscriptions/{first_id}"), headers=ada.headers
    )
    assert cancelled.status_code == 204 and cancelled.content == b""
    again = await client.delete(
        url(f"/apps/{app_id}/subscriptions/{first_id}"), headers=ada.headers
    )
    assert again.status_code == 409, again.text
    assert "cancelled" in again.json()["detail"]

    rejected = await client.post(
        f"/api/admin/v1/subscriptions/{second_id}/reject",
        json={"reason": "Only for partners"},
        headers=manager.headers,
    )
    assert rejected.status_code == 200, rejected.text
    mine = {s["id"]: s for s in await listed(client, ada, app_id)}
    assert mine[first_id]["status"] == "cancelled" and mine[first_id]["ended_at"] is not None
    assert mine[second_id]["status"] == "rejected"
    assert mine[second_id]["reason"] == "Only for partners"
    late = await client.delete(
        url(f"/apps/{app_id}/subscriptions/{second_id}"), headers=ada.headers
    )
    assert late.status_code == 409

    only = await client.get(
        url(f"/apps/{app_id}/subscriptions"),
        params={"filter[status]": "rejected"},
        headers=ada.headers,
    )
    assert [s["id"] for s in only.json()["data"]] == [second_id]
    bad = await client.get(
        url(f"/apps/{app_id}/subscriptions"),
        params={"filter[status]": "lost"},
        headers=ada.headers,
    )
    assert bad.status_code == 400 and bad.json()["errors"][0]["parameter"] == "filter[status]"


def _usage(
    requests: int, p99: float | None, limit: int | None, used: int | None, errors: int = 0
) -> Usage:
    return Usage(
        window="1h",
        requests=requests,
        errors=errors,
        latency_ms={"p50": None if p99 is None else p99 / 4, "p95": p99, "p99": p99},
        quota_limit=limit,
        quota_used=used,
    )


def test_usage_of_several_subscriptions_adds_up() -> None:
    merged = app_analytics(
        "1h",
        [
            _usage(10, 40.0, 1000, 10, errors=2),
            _usage(5, 80.0, 10, 5, errors=1),
            _usage(0, None, None, None),
        ],
    )
    assert merged.model_dump() == {
        "window": "1h",
        "requests": 15,
        "errors": 3,
        # an upper bound: percentiles do not add up
        "latency_ms": {"p50": 20.0, "p95": 80.0, "p99": 80.0},
        # the quota closest to being spent: 5 of 10 before 10 of 1000
        "quota": {"limit": 10, "used": 5},
    }
    alone = app_analytics("1h", [_usage(3, 12.0, None, None)])
    assert alone.latency_ms.p99 == 12.0 and alone.quota.limit is None
