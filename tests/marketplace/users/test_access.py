"""Who may call the users and site-roles endpoints: 401 without a token, 403 naming the
baseline or the endpoint's own permission, 404 for user ids that name nothing."""

from __future__ import annotations

import httpx
import pytest

from portico.core.account import AccountStatus
from tests.marketplace.conftest import SiteAccount, SiteFactory, url

USERS = "administer users"
PERMISSIONS = "administer permissions"
API = "administer marketplace admin api"
BASELINE = "access marketplace admin api"
# an id that names nothing; fixed, not drawn at import: it is part of test ids, which every
# xdist worker must collect alike
UNKNOWN_ID = "af3de96c-bb98-4a9d-8434-04a896bb0531"

# (method, path, permission, body); {id} is an existing pending account
ENDPOINTS = [
    ("GET", "/permissions", PERMISSIONS, None),
    ("GET", "/roles", PERMISSIONS, None),
    ("GET", "/roles/marketplace_admin", PERMISSIONS, None),
    ("GET", "/users", USERS, None),
    ("GET", "/users/pending", USERS, None),
    ("GET", "/users/{id}", USERS, None),
    ("POST", "/users/{id}/approve", USERS, None),
    ("POST", "/users/{id}/reject", USERS, {"reason": "no"}),
    ("POST", "/users/{id}/block", USERS, None),
    ("POST", "/users/{id}/unblock", USERS, None),
    ("DELETE", "/users/{id}/firebase-identity", API, None),
    ("GET", "/users/{id}/roles", PERMISSIONS, None),
]
# a site role holding the baseline but not the permission
LACKS = {USERS: "api_manager", PERMISSIONS: "marketplace_admin", API: "marketplace_admin"}


@pytest.mark.parametrize(("method", "path", "permission", "body"), ENDPOINTS)
async def test_token_baseline_and_permission_are_required(
    client: httpx.AsyncClient,
    site: SiteFactory,
    method: str,
    path: str,
    permission: str,
    body: dict[str, str] | None,
) -> None:
    pending = await site.account(status=AccountStatus.PENDING)
    target = url(path.format(id=pending.id))
    anonymous = await client.request(method, target, json=body)
    assert anonymous.status_code == 401
    assert anonymous.headers["content-type"] == "application/problem+json"

    plain = await site.account("content_editor")  # no baseline
    denied = await client.request(method, target, json=body, headers=plain.headers)
    assert denied.status_code == 403
    assert denied.json()["detail"] == f"missing permission '{BASELINE}'"

    lacking = await site.account(LACKS[permission])
    denied = await client.request(method, target, json=body, headers=lacking.headers)
    assert denied.status_code == 403
    assert denied.json()["type"] == "/problems/permission-denied"
    assert denied.json()["detail"] == f"missing permission '{permission}'"
    assert denied.json()["permission"] == permission


@pytest.mark.parametrize(
    ("method", "path", "body"),
    [(m, p, b) for m, p, _, b in ENDPOINTS if "{id}" in p],
)
@pytest.mark.parametrize("raw_id", [UNKNOWN_ID, "not-a-uuid", "1"])
async def test_user_ids_that_name_nothing_are_404(
    client: httpx.AsyncClient,
    site_admin: SiteAccount,
    method: str,
    path: str,
    body: dict[str, str] | None,
    raw_id: str,
) -> None:
    response = await client.request(
        method, url(path.format(id=raw_id)), json=body, headers=site_admin.headers
    )
    assert response.status_code == 404
    assert response.headers["content-type"] == "application/problem+json"
    assert response.json()["type"] == "/problems/not-found"
    assert response.json()["detail"] == "user not found"


async def test_a_marketplace_admin_administers_users(
    client: httpx.AsyncClient, site: SiteFactory
) -> None:
    manager = await site.account("marketplace_admin")
    pending = await site.account(status=AccountStatus.PENDING)
    listed = await client.get(url("/users"), headers=manager.headers)
    assert listed.status_code == 200
    approved = await client.post(url(f"/users/{pending.id}/approve"), headers=manager.headers)
    assert approved.status_code == 200
    assert approved.json()["data"]["status"] == "active"
