"""``quota-usage``: requests a product metered per app (or developer) in each fixed, UTC-aligned
window of its quota, divided by the quota's limit."""

from __future__ import annotations

import dataclasses
import uuid
from datetime import timedelta
from typing import Any

from portico.core.db.engine import Database
from portico.management.product.models import Product
from tests.management.analytics.traffic import GOLD, T0, iso, metric, orders_list, send
from tests.management.conftest import World

SILVER = "8a9f0e64-54a7-4f38-9d1b-7a0c1d6a0002"
FREE = "8a9f0e64-54a7-4f38-9d1b-7a0c1d6a0003"
BRONZE = "8a9f0e64-54a7-4f38-9d1b-7a0c1d6a0004"


async def products(world: World, database: Database) -> None:
    quotas: dict[str, tuple[str, dict[str, Any] | None]] = {
        GOLD: ("Gold", {"limit": 50, "interval": 1, "interval_unit": "hour", "key_scope": "app"}),
        SILVER: (
            "Silver",
            {"limit": 100, "interval": 30, "interval_unit": "minute", "key_scope": "developer"},
        ),
        FREE: ("Free", {"limit": -1, "interval": 1, "interval_unit": "day", "key_scope": "app"}),
        BRONZE: ("Bronze", None),
    }
    async with database.session() as session, session.begin():
        for product_id, (name, quota) in quotas.items():
            session.add(
                Product(id=uuid.UUID(product_id), org_id=world.org.id, name=name, quota=quota)
            )


async def test_share_of_each_quota_window_per_app_or_developer(
    world: World, database: Database
) -> None:
    await products(world, database)
    gold = [orders_list(T0 + timedelta(minutes=5), 10.0) for _ in range(40)]
    gold += [orders_list(T0 + timedelta(minutes=65), 10.0) for _ in range(10)]
    other_app = dataclasses.replace(gold[0], app_id="app-tablet", app_name="Tablet")
    gold += [other_app] * 5
    # what the quota refused once spent: attributed to the product, not spent again
    gold += [dataclasses.replace(other_app, status=429)] * 4
    silver = dataclasses.replace(gold[0], product_id=SILVER, product_name="Silver")
    # one developer, two apps: a developer-scoped quota counts them together
    silver_other_app = dataclasses.replace(silver, app_id="app-2", app_name="Second")
    metered = [silver] * 30 + [silver_other_app] * 20
    metered += [dataclasses.replace(silver, at=T0 + timedelta(minutes=35))] * 10
    unlimited = [dataclasses.replace(gold[0], product_id=FREE, product_name="Free")] * 7
    unquoted = [dataclasses.replace(gold[0], product_id=BRONZE, product_name="Bronze")] * 3
    await send(world, gold + metered + unlimited + unquoted)

    response = await metric(world, "quota-usage")
    assert response.status_code == 200, response.text
    body = response.json()
    rows = {
        (
            r["dimensions"]["product_name"],
            r["dimensions"].get("app_name", r["dimensions"].get("developer")),
            r["timeBucket"],
        ): (r["value"], r["requests"], r["limit"])
        for r in body["groupedResults"]
    }
    assert rows == {
        ("Gold", "Mobile", "2026-03-02T10:00:00Z"): (0.8, 40, 50),
        ("Gold", "Mobile", "2026-03-02T11:00:00Z"): (0.2, 10, 50),
        ("Gold", "Tablet", "2026-03-02T10:00:00Z"): (0.1, 5, 50),
        ("Silver", "ada@example.com", "2026-03-02T10:00:00Z"): (0.5, 50, 100),
        ("Silver", "ada@example.com", "2026-03-02T10:30:00Z"): (0.1, 10, 100),
    }
    assert body["value"] == 0.8  # the highest share
    assert body["groupedResults"][0]["value"] == 0.8  # sorted by value, highest first


async def test_no_metered_traffic_means_no_rows(world: World, database: Database) -> None:
    await products(world, database)
    response = await metric(
        world,
        "quota-usage",
        startTime=iso(T0 - timedelta(days=1)),
        endTime=iso(T0),
    )
    assert response.json()["groupedResults"] == [] and response.json()["value"] is None
