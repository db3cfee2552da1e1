"""Authorization matrix: each predefined role (and a member without roles) × every org-scoped
endpoint × method.

The expected permission of each endpoint is written here, independently of the code: removing
or changing a ``require(...)`` makes this test fail. Allowed calls are probed so that they
change nothing (an unknown field in the body → 400, an unknown id → 404): the point is that
the answer is not 401/403. Denied calls must be 403 naming the permission.
"""

from __future__ import annotations

import re
import uuid

import httpx
import pytest

from portico.management.role.permissions import PREDEFINED_ROLES
from tests.conftest import Factory, Org

# (method, path under /api/orgs/{orgId}, permission); {id} is an id that does not exist,
# {envId} the id of a real environment of the org.
MATRIX: list[tuple[str, str, str]] = [
    ("PATCH", "", "org.manage"),
    ("GET", "/envs", "environment.read"),
    ("POST", "/envs", "environment.manage"),
    ("GET", "/envs/{id}", "environment.read"),
    ("PATCH", "/envs/{id}", "environment.manage"),
    ("DELETE", "/envs/{id}", "environment.manage"),
    ("GET", "/envs/{envId}/upstreams", "upstream.read"),
    ("POST", "/envs/{envId}/upstreams", "upstream.manage"),
    ("GET", "/envs/{envId}/upstreams/{id}", "upstream.read"),
    ("PUT", "/envs/{envId}/upstreams/{id}", "upstream.manage"),
    ("PATCH", "/envs/{envId}/upstreams/{id}", "upstream.manage"),
    ("DELETE", "/envs/{envId}/upstreams/{id}", "upstream.manage"),
    ("GET", "/envs/{envId}/upstreams/{id}/health", "upstream.read"),
    ("GET", "/envs/{envId}/upstreams/{id}/discovered-nodes", "upstream.read"),
    ("GET", "/permissions", "role.read"),
    ("GET", "/roles", "role.read"),
    ("POST", "/roles", "role.manage"),
    ("GET", "/roles/{id}", "role.read"),
    ("PATCH", "/roles/{id}", "role.manage"),
    ("DELETE", "/roles/{id}", "role.manage"),
    ("GET", "/groups", "role.read"),
    ("POST", "/groups", "role.manage"),
    ("GET", "/groups/{id}", "role.read"),
    ("PATCH", "/groups/{id}", "role.manage"),
    ("DELETE", "/groups/{id}", "role.manage"),
    ("GET", "/users", "user.read"),
    ("POST", "/users", "user.manage"),
    ("GET", "/users/{id}", "user.read"),
    ("PATCH", "/users/{id}", "user.manage"),
    ("DELETE", "/users/{id}", "user.manage"),
    ("POST", "/users/{id}/invitation", "user.manage"),
    ("GET", "/service-accounts", "user.read"),
    ("POST", "/service-accounts", "user.manage"),
    ("GET", "/service-accounts/{id}", "user.read"),
    ("PATCH", "/service-accounts/{id}", "user.manage"),
    ("DELETE", "/service-accounts/{id}", "user.manage"),
    ("GET", "/identity-providers", "idp.read"),
    ("POST", "/identity-providers", "idp.manage"),
    ("GET", "/identity-providers/{id}", "idp.read"),
    ("PATCH", "/identity-providers/{id}", "idp.manage"),
    ("DELETE", "/identity-providers/{id}", "idp.manage"),
    ("POST", "/apis/from-spec", "api.create"),
    ("POST", "/apis/import-openapi", "api.create"),
    ("POST", "/apis/{id}/revisions/{id}/deploy", "api.deploy"),
    ("POST", "/apis/{id}/revisions/{id}/deploy/dry-run", "api.deploy"),
    ("POST", "/apis/{id}/revisions/{id}/undeploy", "api.deploy"),
    ("GET", "/apis/{id}/deployments", "api.read"),
    ("GET", "/plugin-schemas", "api.read"),
    ("GET", "/plugin-schemas/{id}", "api.read"),
    ("GET", "/envs/{id}/global-plugins", "plugin.global"),
    ("GET", "/envs/{id}/global-plugins/{id}", "plugin.global"),
    ("PUT", "/envs/{id}/global-plugins/{id}", "plugin.global"),
    ("DELETE", "/envs/{id}/global-plugins/{id}", "plugin.global"),
    ("GET", "/envs/{id}/nodes", "environment.read"),
    ("GET", "/envs/{id}/dataplane-tokens", "environment.read"),
    ("POST", "/envs/{id}/dataplane-tokens", "environment.manage"),
    ("DELETE", "/envs/{id}/dataplane-tokens/{id}", "environment.manage"),
    ("GET", "/audit-log", "audit.read"),
    ("GET", "/apis", "api.read"),
    ("POST", "/apis", "api.create"),
    ("GET", "/apis/{id}", "api.read"),
    ("PATCH", "/apis/{id}", "api.update"),
    ("DELETE", "/apis/{id}", "api.delete"),
    ("GET", "/apis/{id}/spec", "api.read"),
    ("GET", "/apis/{id}/revisions", "api.read"),
    ("POST", "/apis/{id}/revisions", "api.update"),
    ("GET", "/apis/{id}/revisions/{id}", "api.read"),
    ("DELETE", "/apis/{id}/revisions/{id}", "api.delete"),
    ("PUT", "/apis/{id}/revisions/{id}/service-spec", "api.update"),
    ("PUT", "/apis/{id}/revisions/{id}/route-spec", "api.update"),
    ("POST", "/apis/{id}/revisions/{id}/clone", "api.update"),
    ("PATCH", "/apis/{id}/revisions/{id}/upstream-bindings/add", "api.update"),
    ("PATCH", "/apis/{id}/revisions/{id}/upstream-bindings", "api.update"),
    ("GET", "/consumers", "consumer.read"),
    ("POST", "/consumers", "consumer.manage"),
    ("GET", "/consumers/{id}", "consumer.read"),
    ("PATCH", "/consumers/{id}", "consumer.manage"),
    ("DELETE", "/consumers/{id}", "consumer.manage"),
    ("GET", "/developers/{id}/envs/{id}/apps", "developer.read"),
    ("POST", "/developers/{id}/envs/{id}/apps", "developer.manage"),
    ("GET", "/apps/{id}", "developer.read"),
    ("PATCH", "/apps/{id}", "developer.manage"),
    ("DELETE", "/apps/{id}", "developer.manage"),
    ("POST", "/apps/{id}/credentials/rotate", "developer.manage"),
    ("GET", "/developers", "developer.read"),
    ("POST", "/developers", "developer.manage"),
    ("GET", "/developers/{id}", "developer.read"),
    ("PATCH", "/developers/{id}", "developer.manage"),
    ("DELETE", "/developers/{id}", "developer.manage"),
    ("GET", "/products", "product.read"),
    ("POST", "/products", "product.manage"),
    ("GET", "/products/{id}", "product.read"),
    ("PATCH", "/products/{id}", "product.manage"),
    ("DELETE", "/products/{id}", "product.manage"),
    ("GET", "/envs/{id}/products", "product.read"),
    ("POST", "/envs/{id}/products/{id}/deploy", "product.manage"),
    ("DELETE", "/envs/{id}/products/{id}/deploy", "product.manage"),
    ("POST", "/analytics/metrics/{id}", "analytics.read"),
    ("GET", "/widgets", "analytics.read"),
    ("POST", "/widgets", "analytics.manage"),
    ("GET", "/widgets/{id}", "analytics.read"),
    ("PATCH", "/widgets/{id}", "analytics.manage"),
    ("DELETE", "/widgets/{id}", "analytics.manage"),
    ("GET", "/secrets", "secret.read"),
    ("POST", "/secrets", "secret.manage"),
    ("DELETE", "/secrets/{id}", "secret.manage"),
    ("GET", "/widgets/{id}/data", "analytics.read"),
]

ROLES = [*PREDEFINED_ROLES, None]  # None: a member holding no role at all


def _template(route_path: str) -> str:
    """``/api/orgs/{orgId}/envs/{envId}/upstreams/{upstreamId}``
    → ``/envs/{envId}/upstreams/{id}``."""
    tail = route_path.removeprefix("/api/orgs/{orgId}").replace(
        "{envId}/upstreams", "ENV/upstreams"
    )
    return re.sub(r"\{[^}]+\}", "{id}", tail).replace("ENV", "{envId}")


#: a configuration's SAML endpoints are public: the browser comes there before it signs in
#: (tests/management/test_saml_sign_in.py)
SAML_PUBLIC = {
    ("GET", "/identity-providers/{id}/saml/metadata"),
    ("GET", "/identity-providers/{id}/saml/login"),
    ("POST", "/identity-providers/{id}/saml/acs"),
}


def test_the_matrix_covers_every_org_scoped_endpoint(app) -> None:  # type: ignore[no-untyped-def]
    declared = (
        {(m, p) for m, p, _ in MATRIX} | {("GET", "")} | SAML_PUBLIC
    )  # GET org: membership only
    # the OpenAPI document lists every routed operation (included routers are not flattened
    # into app.routes in this FastAPI)
    served = {
        (method.upper(), _template(path))
        for path, operations in app.openapi()["paths"].items()
        if path.startswith("/api/orgs/{orgId}")
        for method in operations
    }
    assert served - declared == set(), "endpoints missing from the matrix"
    assert declared - served == set(), "matrix entries without an endpoint"


@pytest.mark.parametrize("role", ROLES, ids=lambda r: r or "no-role")
async def test_each_role_gets_exactly_its_permissions(
    client: httpx.AsyncClient, factory: Factory, org: Org, role: str | None
) -> None:
    owner = await factory.user(org, roles=("Administrator",))
    env = await client.post(
        f"/api/orgs/{org.id}/envs", json={"name": "matrix"}, headers=owner.headers
    )
    assert env.status_code == 201
    env_id = env.json()["id"]
    caller = await factory.user(org, roles=(role,) if role else ())
    granted = PREDEFINED_ROLES[role][1] if role else frozenset()

    failures = []
    for method, template, permission in MATRIX:
        path = f"/api/orgs/{org.id}" + template.replace("{envId}", env_id).replace(
            "{id}", str(uuid.uuid4())
        )
        body = {"matrixProbe": True} if method in ("POST", "PUT", "PATCH") else None
        response = await client.request(method, path, json=body, headers=caller.headers)
        if permission in granted:
            if response.status_code in (401, 403):
                failures.append(f"{method} {template}: {response.status_code}, expected allowed")
        elif response.status_code != 403 or (
            response.json()["detail"] != f"missing permission '{permission}'"
        ):
            failures.append(f"{method} {template}: {response.status_code} {response.text}")
    assert failures == []

    # nothing the probes sent was stored
    audit = await client.get(f"/api/orgs/{org.id}/audit-log", headers=owner.headers)
    assert [e["action"] for e in audit.json()["items"]] == ["environment.create", "org.create"]


async def test_org_detail_needs_membership_only(
    client: httpx.AsyncClient, factory: Factory, org: Org
) -> None:
    member = await factory.user(org, roles=())
    assert (await client.get(f"/api/orgs/{org.id}", headers=member.headers)).status_code == 200
    outsider = await factory.user(await factory.org(), roles=("Administrator",))
    assert (await client.get(f"/api/orgs/{org.id}", headers=outsider.headers)).status_code == 404


async def test_only_platform_admins_create_orgs(
    client: httpx.AsyncClient, factory: Factory, org: Org
) -> None:
    admin_of_org = await factory.user(org, roles=("Administrator",))
    refused = await client.post("/api/orgs", json={"name": "Other"}, headers=admin_of_org.headers)
    assert refused.status_code == 403
    platform = await factory.user(platform_admin=True)
    created = await client.post("/api/orgs", json={"name": "Other"}, headers=platform.headers)
    assert created.status_code == 201
    listed = (await client.get("/api/orgs", headers=admin_of_org.headers)).json()
    assert [o["name"] for o in listed["items"]] == ["Acme"]
