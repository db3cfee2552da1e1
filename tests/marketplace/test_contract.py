"""The contract every admin API endpoint shares: authentication, the baseline permission,
problem documents, and the live OpenAPI description."""

from __future__ import annotations

from datetime import timedelta

import httpx

from portico.core.account import AccountStatus
from portico.core.clock import Clock
from tests.marketplace.conftest import SiteAccount, SiteFactory, url


async def test_openapi_needs_a_token_and_the_baseline_permission(
    client: httpx.AsyncClient, site: SiteFactory, site_admin: SiteAccount
) -> None:
    anonymous = await client.get(url("/openapi.json"))
    assert anonymous.status_code == 401
    assert anonymous.headers["content-type"] == "application/problem+json"
    assert anonymous.json()["type"] == "/problems/unauthorized"
    plain = await site.account()  # authenticated only: no baseline
    denied = await client.get(url("/openapi.json"), headers=plain.headers)
    assert denied.status_code == 403
    assert denied.json()["detail"] == "missing permission 'access marketplace admin api'"
    document = await client.get(url("/openapi.json"), headers=site_admin.headers)
    assert document.status_code == 200
    body = document.json()
    assert body["openapi"].startswith("3.1")
    assert "data" not in body  # unwrapped
    assert body["servers"] == [{"url": "/api/admin/v1"}]


async def test_bad_tokens_are_401(
    client: httpx.AsyncClient, site: SiteFactory, site_admin: SiteAccount, clock: Clock
) -> None:
    cases = {
        "Bearer": "malformed",
        "Basic abc": "malformed",
        "Bearer not-a-jwt": "invalid token",
        "Bearer " + site_admin.token[:-4] + "AAAA": "invalid token",
    }
    for header, words in cases.items():
        response = await client.get(url("/openapi.json"), headers={"Authorization": header})
        assert response.status_code == 401, header
        assert words in response.json()["detail"]
    blocked = await site.account("marketplace_admin", status=AccountStatus.BLOCKED)
    assert (await client.get(url("/openapi.json"), headers=blocked.headers)).status_code == 401
    clock.advance(timedelta(seconds=3601))
    expired = await client.get(url("/openapi.json"), headers=site_admin.headers)
    assert expired.status_code == 401
    assert expired.json()["detail"] == "token expired"


async def test_a_management_token_is_not_an_id_token(client: httpx.AsyncClient, admin) -> None:  # type: ignore[no-untyped-def]
    response = await client.get(url("/openapi.json"), headers=admin.headers)
    assert response.status_code == 401


async def test_unknown_paths_are_problem_documents(
    client: httpx.AsyncClient, site_admin: SiteAccount
) -> None:
    response = await client.get(url("/nowhere"), headers=site_admin.headers)
    assert response.status_code == 404
    assert response.headers["content-type"] == "application/problem+json"
