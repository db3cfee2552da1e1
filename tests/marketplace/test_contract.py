"""The contract every admin API endpoint shares: authentication, the baseline permission,
problem documents, and the live OpenAPI description."""

from __future__ import annotations

import re
import uuid
from datetime import timedelta
from typing import Any

import httpx
from fastapi.routing import APIRoute, iter_route_contexts

from portico.core.account import AccountStatus
from portico.core.clock import Clock
from portico.core.query import declared
from tests.marketplace.conftest import SiteAccount, SiteFactory, marketplace_app, url


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
    # verified once: the token's claims are kept (auth/keys.py), which must not vouch for
    # a tampered copy of it, nor outlive its expiry
    assert (await client.get(url("/openapi.json"), headers=site_admin.headers)).status_code == 200
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


async def test_the_document_is_openapi_3_1_of_api_version_2(
    client: httpx.AsyncClient, site_admin: SiteAccount
) -> None:
    document = (await client.get(url("/openapi.json"), headers=site_admin.headers)).json()
    assert document["openapi"] == "3.1.0"
    assert document["info"]["version"] == "2.0.0"  # the API document's, not the package's


def _routes(app: Any) -> list[tuple[str, str, Any]]:
    """(method, path, route) of every route of the admin API, described or not."""
    return [
        (method, route.path_format, route)
        for route in iter_route_contexts(marketplace_app(app).routes)
        if isinstance(route.original_route, APIRoute)
        for method in sorted(route.methods or ())
    ]


async def test_every_route_refuses_query_parameters_it_does_not_read(
    client: httpx.AsyncClient, app: Any, site_admin: SiteAccount
) -> None:
    """Built once for the whole API: a route added later is covered without a word here."""
    routes = _routes(app)
    assert len(routes) >= 26
    for method, path, _route in routes:
        target = url(re.sub(r"\{[^}]+\}", str(uuid.uuid4()), path))
        response = await client.request(
            method,
            target,
            params=[("colour", "red"), ("filter[colour]", "red"), ("colour", "blue")],
            headers=site_admin.headers,
        )
        assert response.status_code == 400, (method, path, response.text)
        assert response.headers["content-type"] == "application/problem+json"
        assert response.json()["errors"] == [
            {"parameter": "colour", "detail": "colour: unknown query parameter"},
            {"parameter": "filter[colour]", "detail": "filter[colour]: unknown filter"},
        ], (method, path)


PUBLIC = ("/auth/token", "/auth/token/refresh", "/.well-known/openid-configuration")


async def test_what_a_route_describes_or_parses_passes_the_gate(
    client: httpx.AsyncClient, app: Any, site_admin: SiteAccount
) -> None:
    document = (await client.get(url("/openapi.json"), headers=site_admin.headers)).json()
    for method, path, route in _routes(app):
        described = document["paths"].get(path, {}).get(method.lower(), {})
        names = [p["name"] for p in described.get("parameters", ()) if p["in"] == "query"]
        query = declared(route.original_route)
        for name in names:
            assert query.accepts(name), (method, path, name)
        # authenticated routes are checked once the caller is known (401 and 403 first); the
        # sign-in routes and the public OpenID discovery document have no caller
        assert query.deferred == (path not in PUBLIC), (method, path)
    # described by FastAPI, by openapi_extra, and read by a ListSpec
    by_path = {(m, p): declared(r.original_route) for m, p, r in _routes(app)}
    assert by_path[("GET", "/events/export")].accepts("format")
    assert by_path[("GET", "/events/export")].accepts("filter[operation]")
    assert not by_path[("GET", "/events/export")].accepts("page")
    assert by_path[("GET", "/users")].specs and by_path[("GET", "/users")].accepts("limit")


async def test_the_query_is_checked_after_authentication_and_permission(
    client: httpx.AsyncClient, site: SiteFactory, site_admin: SiteAccount
) -> None:
    pending = await site.account(status=AccountStatus.PENDING)
    approve = url(f"/users/{pending.id}/approve?x=1")
    assert (await client.post(approve)).status_code == 401
    plain = await site.account("marketplace_admin")  # has 'administer users'
    editor = await site.account("content_editor")  # not even the baseline
    assert (await client.post(approve, headers=editor.headers)).status_code == 403
    refused = await client.post(approve, headers=plain.headers)
    assert refused.status_code == 400
    assert refused.json()["errors"] == [{"parameter": "x", "detail": "x: unknown query parameter"}]
    still = await client.get(url(f"/users/{pending.id}"), headers=site_admin.headers)
    assert still.json()["data"]["status"] == "pending"  # nothing was done
    for path in (
        f"/users/{pending.id}?filter[colour]=red",
        "/roles/administrator?sort=x",
        f"/users/{pending.id}/roles?page=2",
        "/openapi.json?x=1",
    ):
        response = await client.get(url(path), headers=site_admin.headers)
        assert response.status_code == 400, path
