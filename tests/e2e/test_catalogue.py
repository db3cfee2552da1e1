"""The catalogue as a new user builds it (issue 17's "done when"): one real ``portico serve``
whose marketplace connects to its own management service with a service account, sees the
organisation's APIs and products in the remote inventory, imports them (one product, which
brings its API, then everything again as an asynchronous job run by the serve process's
worker), and moves them through review to published with public visibility.

No egress allow-list is set: the installation's own control plane is reachable by default.
"""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from tests.e2e.test_admin_api import (  # noqa: F401 (fixtures)
    ADMIN_EMAIL,
    ADMIN_PASSWORD,
    WEB_API_KEY,
    Portico,
    portico,
    set_web_api_key,
    smtp,
)
from tests.e2e.test_gateway import wait_for
from tests.support.management_calls import integration_token

pytestmark = pytest.mark.e2e

ORDERS = {
    "openapi": "3.0.3",
    "info": {"title": "orders", "version": "2.1.0", "description": "Orders of the shop."},
    "paths": {
        "/orders": {
            "get": {"operationId": "listOrders", "responses": {"200": {"description": "ok"}}}
        }
    },
}


def ok(answer: httpx.Response, *statuses: int) -> Any:
    assert answer.status_code in (statuses or (200,)), answer.text
    return answer.json()


def management(server: Portico) -> tuple[httpx.Client, str]:
    """The owner signed in to the management API, and the organisation's id."""
    cp = httpx.Client(base_url=server.control, timeout=15)
    signed_in = ok(
        cp.post("/api/auth/login", json={"email": ADMIN_EMAIL, "password": ADMIN_PASSWORD})
    )
    cp.headers["Authorization"] = f"Bearer {signed_in['token']}"
    org = ok(cp.get("/api/me"))["orgs"][0]["id"]
    return cp, org


def marketplace_admin(portico: Portico) -> httpx.Client:  # noqa: F811
    """The marketplace's administrator signed in (token issuance switched on first)."""
    assert set_web_api_key(portico, WEB_API_KEY).returncode == 0
    admin = httpx.Client(base_url=portico.admin_api, timeout=30)
    tokens = ok(admin.post("/auth/token", json={"email": ADMIN_EMAIL, "password": ADMIN_PASSWORD}))
    admin.headers["Authorization"] = f"Bearer {tokens['data']['id_token']}"
    return admin


def connect_to_itself(admin: httpx.Client, portico: Portico, org: str, token: str) -> Any:  # noqa: F811
    """A ``portico`` gateway connection to this installation's own management service."""
    config = {"base_url": portico.control, "org_id": org, "token": token}
    connection = {"name": "this portico", "source": "portico", "config": config}
    return ok(admin.post("/gateways/connections", json=connection), 201)["data"]


def test_a_new_user_imports_the_gateways_apis_and_publishes_them(
    portico: Portico,  # noqa: F811
) -> None:
    # the management side: an API from an OpenAPI document, a product selling it, and a
    # service account with the Integration role for the marketplace
    cp, org = management(portico)
    api = ok(cp.post(f"/api/orgs/{org}/apis/from-spec", json={"spec": ORDERS}), 201)["api"]
    product = ok(
        cp.post(
            f"/api/orgs/{org}/products",
            json={
                "name": "shop",
                "displayName": "Shop",
                "description": "Everything the shop offers.",
                "apiIds": [api["id"]],
                "quota": {"limit": 1000, "interval": 1, "interval_unit": "day"},
            },
        ),
        201,
    )
    cp.base_url = httpx.URL(f"{portico.control}/api/orgs/{org}")
    token = integration_token(cp)

    # the marketplace side, as its administrator
    admin = marketplace_admin(portico)
    connection = connect_to_itself(admin, portico, org, token)
    assert connection["status"] == "connected"
    assert "token" not in connection["config"]
    base = f"/gateways/connections/{connection['id']}"

    # the remote inventory: the API and the product, neither imported yet
    remote_apis = ok(admin.get(f"{base}/remote/apis"))["data"]
    assert [(a["api_id"], a["title"], a["imported"]) for a in remote_apis] == [
        (api["id"], "orders", False)
    ]
    remote_products = ok(admin.get(f"{base}/remote/products"))["data"]
    assert [(p["product_id"], p["api_ids"], p["imported"]) for p in remote_products] == [
        (product["id"], [api["id"]], False)
    ]

    # importing the product brings its API
    imported = ok(admin.post(f"{base}/products/import", json={"product_id": product["id"]}), 201)
    product_node = imported["data"]
    assert product_node["moderation_state"] == "draft"
    assert product_node["source"]["type"] == "imported"
    assert product_node["source"]["connection_id"] == connection["id"]
    marked = ok(admin.get(f"{base}/remote/apis", params={"refresh": "1"}))["data"]
    (entry,) = marked
    assert entry["imported"] is True and entry["import_status"] == "existing"
    api_node_id = entry["node_id"]

    # everything again, as a job of the serve process's worker: the same nodes, updated
    started = admin.post(f"{base}/jobs", json={"kind": "import-apis"})
    job_id = ok(started, 202)["job_id"]
    assert started.headers["location"].endswith(f"/jobs/{job_id}")
    wait_for(lambda: admin.get(f"/jobs/{job_id}").json()["data"]["status"] == "succeeded")
    finished = ok(admin.get(f"/jobs/{job_id}"))["data"]
    assert finished["progress"] == {"done": 1, "total": 1}
    assert finished["result"]["updated"] == 1 and finished["result"]["created"] == 0
    assert [n["id"] for n in ok(admin.get(f"{base}/apis"))["data"]] == [api_node_id]

    # through review to published, then shown to everyone
    nodes = [api_node_id, product_node["id"]]
    for transition in ("submit_for_review", "publish"):
        report = ok(
            admin.post("/publishing/transitions", json={"nodes": nodes, "transition": transition})
        )
        assert report["meta"]["failed"] == [], report
    report = ok(admin.post("/publishing/visibility", json={"nodes": nodes, "visibility": "public"}))
    assert report["meta"]["failed"] == [], report

    api_node = ok(admin.get(f"/content/apis/{api_node_id}"))["data"]
    assert api_node["moderation_state"] == "published"
    assert api_node["published"] is True
    assert api_node["visibility"] == "public"
    assert api_node["title"] == "orders"
    assert [t["id"] for t in api_node["transitions"]] == ["create_new_draft", "archive"]
    product_after = ok(admin.get(f"/content/api_products/{product_node['id']}"))["data"]
    assert (product_after["moderation_state"], product_after["visibility"]) == (
        "published",
        "public",
    )
    assert ok(admin.get("/content/moderated"))["data"] == []

    # the changes are in the audit log, named by what they did
    operations = {e["operation"] for e in ok(admin.get("/events", params={"limit": 100}))["data"]}
    assert {"content.transition", "content.visibility"} <= operations
    admin.close()
    cp.close()
