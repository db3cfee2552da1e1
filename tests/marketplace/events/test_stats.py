"""GET /events/stats (grouped in the database, days in UTC) and GET /events/types."""

from __future__ import annotations

import httpx
import pytest

from tests.marketplace.conftest import SiteAccount, url
from tests.marketplace.events.conftest import EventWriter, at


async def test_counts_by_operation_entity_type_and_utc_day(
    client: httpx.AsyncClient, site_admin: SiteAccount, write: EventWriter
) -> None:
    await write("user.approve", occurred_at=at("2025-03-01T23:30:00Z"))
    # 00:30 on the 2nd in Paris is still the 1st in UTC
    await write("user.approve", occurred_at=at("2025-03-02T00:30:00+01:00"))
    await write("user.block", occurred_at=at("2025-03-02T00:30:00Z"))
    await write("role.grant", entity_type="role", occurred_at=at("2025-03-05T12:00:00Z"))
    await write("environment.create", entity_type="environment", surface="management")
    response = await client.get(url("/events/stats"), headers=site_admin.headers)
    assert response.status_code == 200, response.text
    assert response.json() == {
        "data": {
            "total": 4,
            "by_operation": {"role.grant": 1, "user.approve": 2, "user.block": 1},
            "by_entity_type": {"role": 1, "user": 3},
            "by_day": [
                {"day": "2025-03-01", "count": 2},
                {"day": "2025-03-02", "count": 1},
                {"day": "2025-03-05", "count": 1},
            ],
        }
    }
    filtered = await client.get(
        url("/events/stats?filter[entity_type]=user&filter[from]=2025-03-02T00:00:00Z"),
        headers=site_admin.headers,
    )
    assert filtered.json()["data"] == {
        "total": 1,
        "by_operation": {"user.block": 1},
        "by_entity_type": {"user": 1},
        "by_day": [{"day": "2025-03-02", "count": 1}],
    }


async def test_stats_of_nothing(client: httpx.AsyncClient, site_admin: SiteAccount) -> None:
    response = await client.get(url("/events/stats"), headers=site_admin.headers)
    assert response.json()["data"] == {
        "total": 0,
        "by_operation": {},
        "by_entity_type": {},
        "by_day": [],
    }


async def test_types_are_the_distinct_values_present(
    client: httpx.AsyncClient, site_admin: SiteAccount, write: EventWriter
) -> None:
    await write("user.block", module="user")
    await write("user.block", module="user")
    await write("node.publish", entity_type="node", bundle="apis", module="catalogue")
    await write("node.publish", entity_type="node", bundle="page", module="catalogue")
    await write("job.cancel", entity_type="job", module=None)
    await write("environment.create", entity_type="environment", surface="management")
    response = await client.get(url("/events/types"), headers=site_admin.headers)
    assert response.status_code == 200, response.text
    assert response.json() == {
        "data": {
            "operations": ["job.cancel", "node.publish", "user.block"],
            "entity_types": ["job", "node", "user"],
            "bundles": ["apis", "page"],
            "modules": ["catalogue", "user"],
        }
    }


@pytest.mark.parametrize(
    ("path", "query", "parameter"),
    [
        ("/events/stats", "page=1", "page"),
        ("/events/stats", "sort=-occurred_at", "sort"),
        ("/events/stats", "filter[to]=tomorrow", "filter[to]"),
        ("/events/stats", "filter[day]=x", "filter[day]"),
        ("/events/stats", "format=csv", "format"),
        ("/events/types", "filter[operation]=user.block", "filter[operation]"),
        ("/events/types", "limit=5", "limit"),
        ("/events/types", "q=x", "q"),
    ],
)
async def test_bad_queries_are_400(
    client: httpx.AsyncClient, site_admin: SiteAccount, path: str, query: str, parameter: str
) -> None:
    response = await client.get(url(f"{path}?{query}"), headers=site_admin.headers)
    assert response.status_code == 400, response.text
    assert parameter in [e["parameter"] for e in response.json()["errors"]]
