"""Selling an API, through a real ``portico serve``: a developer, two products, two apps;
the gateway meters each app against its product, and the analytics the nodes ship name the
app, its product and its developer."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest

from tests.e2e.test_gateway import HOST, backend, portico, wait_for  # noqa: F401 (fixtures)
from tests.support.management_calls import created, deployed_api

pytestmark = pytest.mark.e2e


@pytest.fixture
def control(portico: dict[str, str]) -> Iterator[httpx.Client]:  # noqa: F811
    cp = httpx.Client(base_url=portico["control"], timeout=10)
    token = cp.post(
        "/api/auth/login", json={"email": "owner@example.com", "password": "owner-password-123"}
    ).json()["token"]
    cp.headers["Authorization"] = f"Bearer {token}"
    org = cp.get("/api/me").json()["orgs"][0]["id"]
    cp.base_url = httpx.URL(f"{portico['control']}/api/orgs/{org}")
    yield cp
    cp.close()


def per_month(limit: int) -> dict[str, Any]:
    """A month's window: the node's clock is the wall clock, and a minute's window could
    end between two of the calls below."""
    return {"limit": limit, "interval": 1, "interval_unit": "month", "key_scope": "app"}


def test_each_app_is_metered_against_its_product_and_named_in_analytics(
    portico: dict[str, str],  # noqa: F811
    backend: int,  # noqa: F811
    control: httpx.Client,
) -> None:
    cp = control
    deployed = deployed_api(
        cp, host=HOST, backend=backend, plugins={"key-auth": {}, "product-quota": {}}
    )
    env, api = deployed["env"], deployed["api"]
    developer = created(
        cp.post(
            "/developers",
            json={"firstName": "Ada", "lastName": "Lovelace", "email": "ada@example.com"},
        )
    )
    products = {}
    for name, limit in (("small", 5), ("large", 1000)):
        product = created(
            cp.post(
                "/products", json={"name": name, "apiIds": [api["id"]], "quota": per_month(limit)}
            )
        )
        created(cp.post(f"/envs/{env['id']}/products/{product['id']}/deploy"))
        products[name] = product["id"]
    keys = {}
    for name in ("small", "large"):
        app = created(
            cp.post(
                f"/developers/{developer['id']}/envs/{env['id']}/apps",
                json={"name": f"{name}-app", "products": {products[name]: 1}},
            )
        )
        keys[name] = app["generatedCredentials"]["key-auth"]["key"]

    gw = httpx.Client(base_url=portico["gateway"], headers={"Host": HOST}, timeout=10)
    # the apps reach the node with the next snapshot
    wait_for(lambda: gw.get("/orders", headers={"apikey": keys["large"]}).status_code == 200)
    small = [gw.get("/orders", headers={"apikey": keys["small"]}) for _ in range(6)]
    assert [answer.status_code for answer in small] == [200] * 5 + [429]
    assert small[-1].content == b'{"error":"quota exceeded"}'
    assert "retry-after" not in small[-1].headers
    assert not [name for name in small[-1].headers if name.startswith("x-ratelimit")]
    large = [gw.get("/orders", headers={"apikey": keys["large"]}).status_code for _ in range(8)]
    assert large == [200] * 8

    now = datetime.now(UTC)
    query = {
        "startTime": (now - timedelta(hours=1)).isoformat(),
        "endTime": (now + timedelta(minutes=2)).isoformat(),
        "dimensions": ["app_name", "product_name", "developer", "response_status_code"],
        "excludeTimeUnit": True,
    }

    def counts() -> dict[tuple[Any, ...], int]:
        answer = cp.post("/analytics/metrics/requests-count", json=query)
        assert answer.status_code == 200, answer.text
        return {
            tuple(row["dimensions"].values()): row["value"]
            for row in answer.json()["groupedResults"]
        }

    def shipped() -> bool:
        seen = counts()
        return (
            seen.get(("small-app", "small", "ada@example.com", 429)) == 1
            and seen.get(("large-app", "large", "ada@example.com", 200), 0) >= 9
        )

    wait_for(shipped, timeout=15)
    seen = counts()
    assert seen[("small-app", "small", "ada@example.com", 200)] == 5
    latency = cp.post(
        "/analytics/metrics/response-time",
        json={**query, "dimensions": ["app_name"], "aggregation": "P95"},
    )
    assert latency.status_code == 200, latency.text
    by_app = {
        row["dimensions"]["app_name"]: row["value"] for row in latency.json()["groupedResults"]
    }
    assert by_app["small-app"] > 0 and by_app["large-app"] > 0
    usage = cp.post(
        "/analytics/metrics/quota-usage",
        json={**query, "dimensions": []},
    )
    assert usage.status_code == 200, usage.text
    spent = {row["dimensions"]["app_name"]: row for row in usage.json()["groupedResults"]}
    assert spent["small-app"]["requests"] == 5 and spent["small-app"]["limit"] == 5
    assert spent["small-app"]["value"] == 1.0  # the whole month's quota spent
