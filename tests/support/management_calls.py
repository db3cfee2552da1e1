"""What the end-to-end tests ask a real management service for, as an operator's script
would: an API deployed behind a gateway host, and a service account for the marketplace."""

from __future__ import annotations

from typing import Any

import httpx

ROUTE = {"name": "list", "uri": "/orders", "methods": ["GET"], "plugins": {}}


def created(answer: httpx.Response) -> dict[str, Any]:
    assert answer.status_code in (200, 201), answer.text
    return dict(answer.json())


def deployed_api(
    cp: httpx.Client,
    *,
    host: str,
    backend: int,
    plugins: dict[str, Any],
    env_name: str = "shop",
    api_name: str = "orders",
) -> dict[str, dict[str, Any]]:
    """``cp`` based at an organisation: an environment serving ``host``, an upstream to the
    backend on loopback, and the API ``api_name`` (``GET /orders``, the service ``plugins``)
    deployed there at revision 1. Each object as the API answered it, by name."""
    env = created(cp.post("/envs", json={"name": env_name, "gatewayHosts": [host]}))
    node = {"host": "127.0.0.1", "port": backend}
    upstream = created(
        cp.post(
            f"/envs/{env['id']}/upstreams",
            json={"name": "echo", "specification": {"nodes": [node]}},
        )
    )
    api = created(cp.post("/apis", json={"name": api_name}))
    binding = {"environmentId": env["id"], "upstreamId": upstream["id"]}
    revision = created(
        cp.post(
            f"/apis/{api['id']}/revisions",
            json={
                "serviceSpec": {"plugins": plugins},
                "routeSpec": [ROUTE],
                "environmentUpstreams": [binding],
            },
        )
    )
    deploy = f"/apis/{api['id']}/revisions/{revision['id']}/deploy"
    created(cp.post(deploy, json={"environmentId": env["id"]}))
    return {"env": env, "upstream": upstream, "api": api, "revision": revision}


def integration_token(cp: httpx.Client) -> str:
    """``cp`` based at an organisation: a service account with the Integration role (what
    the marketplace's ``portico`` connector needs); its token, shown once."""
    roles = created(cp.get("/roles", params={"size": 100}))["items"]
    integration = next(r["id"] for r in roles if r["name"] == "Integration")
    account = {"name": "marketplace", "roleIds": [integration]}
    return str(created(cp.post("/service-accounts", json=account))["token"])
