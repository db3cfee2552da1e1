"""The subscription loop on one real ``portico serve`` (the subscriptions issue's "done
when"), by HTTP alone: the operator puts an API behind key-auth on the installation's own
gateway and gives the marketplace a service account; the marketplace's administrator
connects to that management service, imports the API and publishes it; a developer
registers on the portal, is let in, creates an app and subscribes; the administrator
approves and the embedded gateway admits the app's key; the administrator revokes and the
gateway refuses it, and the developer is told why.

Provisioning is the serve process's own worker (woken by the approval's commit); the
gateway learns the grant from the snapshot it is fed. No egress allow-list is set: the
installation's own control plane is reachable by default.
"""

from __future__ import annotations

import httpx
import pytest

from tests.e2e.test_admin_api import Portico, portico, smtp  # noqa: F401 (fixtures)
from tests.e2e.test_catalogue import connect_to_itself, management, marketplace_admin, ok
from tests.e2e.test_gateway import HOST, backend, wait_for  # noqa: F401 (fixtures)
from tests.support.management_calls import deployed_api, integration_token

pytestmark = pytest.mark.e2e

DEVELOPER = "dev@example.com"
DEVELOPER_PASSWORD = "a long enough passphrase"
REASON = "Your trial period is over"
LOOPBACK = "127.0.0.1"
ROUTE = {"name": "list", "uri": "/orders", "methods": ["GET"], "plugins": {}}


def test_approval_admits_the_developers_key_and_revocation_refuses_it(
    portico: Portico,  # noqa: F811
    backend: int,  # noqa: F811
) -> None:
    # the operator: an API behind key-auth on this installation's gateway, and a service
    # account with the Integration role for the marketplace
    cp, org = management(portico)
    cp.base_url = httpx.URL(f"{portico.control}/api/orgs/{org}")
    plugins = {"key-auth": {}, "product-quota": {}}
    api = deployed_api(cp, host=HOST, backend=backend, plugins=plugins)["api"]
    token = integration_token(cp)

    # the marketplace's administrator connects, imports the API and publishes it to everyone
    admin = marketplace_admin(portico)
    connection = connect_to_itself(admin, portico, org, token)
    imported = ok(
        admin.post(
            f"/gateways/connections/{connection['id']}/apis/import", json={"api_id": api["id"]}
        ),
        201,
    )
    node = imported["data"]["id"]
    for transition in ("submit_for_review", "publish"):
        report = ok(
            admin.post("/publishing/transitions", json={"nodes": [node], "transition": transition})
        )
        assert report["meta"]["failed"] == [], report
    report = ok(
        admin.post("/publishing/visibility", json={"nodes": [node], "visibility": "public"})
    )
    assert report["meta"]["failed"] == [], report

    # a developer registers on the portal, is let in, signs in, finds the API
    portal = httpx.Client(base_url=f"{portico.control}/api/portal/v1", timeout=30)
    ok(
        portal.post(
            "/registrations",
            json={"email": DEVELOPER, "password": DEVELOPER_PASSWORD, "display_name": "Dev"},
        ),
        202,
    )
    [user] = [u for u in ok(admin.get("/users/pending"))["data"] if u["email"] == DEVELOPER]
    ok(admin.post(f"/users/{user['id']}/approve"))
    signed_in = ok(
        portal.post("/auth/token", json={"email": DEVELOPER, "password": DEVELOPER_PASSWORD})
    )
    portal.headers["Authorization"] = f"Bearer {signed_in['data']['id_token']}"
    assert [a["id"] for a in ok(portal.get("/apis"))["data"]] == [node]

    # an app (its key, shown once) and a subscription, pending: the gateway refuses the key
    app = ok(portal.post("/apps", json={"name": "shop"}), 201)["data"]
    [credential] = app["credentials"]
    key = credential["key"]
    subscription = ok(portal.post(f"/apps/{app['id']}/subscriptions", json={"api": node}), 201)
    subscription_id = subscription["data"]["id"]
    assert subscription["data"]["status"] == "pending"
    gateway = httpx.Client(
        base_url=f"http://{portico.env['PORTICO_GATEWAY_LISTEN']}",
        headers={"Host": HOST, "apikey": key},
        timeout=10,
    )
    assert gateway.get("/orders").status_code == 401

    # approved: the serve process's worker provisions it, the gateway admits the key
    ok(admin.post(f"/subscriptions/{subscription_id}/approve"))
    wait_for(lambda: gateway.get("/orders").status_code == 200, timeout=60)

    def status() -> str:
        return str(ok(portal.get(f"/apps/{app['id']}/subscriptions"))["data"][0]["status"])

    wait_for(lambda: status() == "active", timeout=60)

    # revoked with a reason: refused again, and the developer is told why
    ok(admin.post(f"/subscriptions/{subscription_id}/revoke", json={"reason": REASON}))
    wait_for(lambda: gateway.get("/orders").status_code in (401, 403), timeout=60)
    [mine] = ok(portal.get(f"/apps/{app['id']}/subscriptions"))["data"]
    assert (mine["status"], mine["reason"]) == ("revoked", REASON)
    notices = ok(portal.get("/notifications"))["data"]
    assert [n["data"]["reason"] for n in notices if n["type"] == "subscription_revoked"] == [REASON]
    for client in (gateway, portal, admin, cp):
        client.close()
