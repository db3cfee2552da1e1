"""``/permissions`` and ``/roles``: the installed permission catalogue and the site roles,
and how installing fewer modules shrinks both."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import httpx
import pytest

from portico.app import create_app
from portico.core.clock import Clock
from portico.core.db.engine import Database
from portico.core.settings import Settings
from portico.marketplace import modules
from tests.marketplace.conftest import SiteAccount, SiteFactory, url

BASELINE = "access marketplace admin api"


async def test_permissions_grouped_by_module(
    client: httpx.AsyncClient, site_admin: SiteAccount
) -> None:
    response = await client.get(url("/permissions"), headers=site_admin.headers)
    assert response.status_code == 200, response.text
    groups = response.json()["data"]
    modules = [g["module"] for g in groups]
    assert modules[:2] == ["admin_api", "user"]
    assert {"audit", "notification"} <= set(modules)
    core = groups[0]
    assert core["label"] == "Admin API"
    baseline = core["permissions"][0]
    assert baseline["key"] == BASELINE
    assert set(baseline) == {"key", "title", "description", "restrict_access"}
    assert baseline["restrict_access"] is False
    user = {p["key"]: p for p in groups[1]["permissions"]}
    assert set(user) == {"administer users", "administer permissions"}
    assert user["administer users"]["restrict_access"] is True
    assert user["administer users"]["title"] == "Administer users"


async def test_roles_in_weight_order_with_their_grants(
    client: httpx.AsyncClient, site_admin: SiteAccount
) -> None:
    catalogue = await client.get(url("/permissions"), headers=site_admin.headers)
    every = [p["key"] for g in catalogue.json()["data"] for p in g["permissions"]]
    response = await client.get(url("/roles"), headers=site_admin.headers)
    assert response.status_code == 200, response.text
    roles = response.json()["data"]
    assert [r["id"] for r in roles] == [
        "anonymous",
        "authenticated",
        "content_editor",
        "api_manager",
        "marketplace_admin",
        "administrator",
    ]
    assert [r["weight"] for r in roles] == sorted(r["weight"] for r in roles)
    by_id = {r["id"]: r for r in roles}
    assert by_id["administrator"]["is_admin"] is True
    assert by_id["administrator"]["permissions"] == every  # all, in catalogue order
    assert by_id["anonymous"]["permissions"] == []
    assert by_id["authenticated"]["permissions"] == ["access content"]
    manager = by_id["marketplace_admin"]["permissions"]
    assert manager[0] == BASELINE and "administer users" in manager
    assert "administer permissions" not in manager
    assert manager == [k for k in every if k in manager]
    assert by_id["marketplace_admin"]["label"] == "Marketplace administrator"


async def test_one_role_with_titles(client: httpx.AsyncClient, site_admin: SiteAccount) -> None:
    response = await client.get(url("/roles/marketplace_admin"), headers=site_admin.headers)
    assert response.status_code == 200, response.text
    role = response.json()["data"]
    assert role["id"] == "marketplace_admin" and role["is_admin"] is False
    assert role["permissions"][0] == {
        "key": BASELINE,
        "title": "Access the marketplace admin API",
    }
    assert {"key": "administer users", "title": "Administer users"} in role["permissions"]
    missing = await client.get(url("/roles/overlord"), headers=site_admin.headers)
    assert missing.status_code == 404
    assert missing.json()["detail"] == "site role not found"


async def test_query_parameters_are_refused_on_the_catalogues(
    client: httpx.AsyncClient, site_admin: SiteAccount
) -> None:
    for path, query, parameter in (
        ("/permissions", "?page=2", "page"),
        ("/roles", "?filter[module]=user", "filter[module]"),
        ("/roles", "?sort=label", "sort"),
    ):
        response = await client.get(url(path + query), headers=site_admin.headers)
        assert response.status_code == 400, path + query
        assert response.json()["errors"][0]["parameter"] == parameter


@asynccontextmanager
async def installed(
    modules: list[str], settings: Settings, database: Database, clock: Clock
) -> AsyncIterator[tuple[httpx.AsyncClient, SiteAccount]]:
    """A control plane with only ``modules`` (plus the core), a client and its
    bootstrap administrator."""
    app = create_app(
        settings.model_copy(update={"marketplace_modules": modules}),
        database=database,
        clock=clock,
    )
    admin = await SiteFactory(database, app).account(platform_admin=True)
    transport = httpx.ASGITransport(app=app, client=("127.0.0.1", 50000))
    async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as http:
        yield http, admin


async def test_only_installed_modules_have_permissions(
    settings: Settings, database: Database, clock: Clock
) -> None:
    async with installed(["user"], settings, database, clock) as (http, admin):
        catalogue = await http.get(url("/permissions"), headers=admin.headers)
        assert catalogue.status_code == 200, catalogue.text
        groups = catalogue.json()["data"]
        assert [g["module"] for g in groups] == ["admin_api", "user"]
        keys = [p["key"] for g in groups for p in g["permissions"]]
        assert keys == [
            BASELINE,
            "administer marketplace admin api",
            "administer users",
            "administer permissions",
        ]
        role = await http.get(url("/roles/marketplace_admin"), headers=admin.headers)
        assert [p["key"] for p in role.json()["data"]["permissions"]] == [
            BASELINE,
            "administer users",
        ]
        mine = await http.get(url(f"/users/{admin.id}/roles"), headers=admin.headers)
        assert mine.json()["data"]["permissions"] == keys
        assert (await http.get(url("/events"), headers=admin.headers)).status_code == 404
        # "access content" is granted to every account, but its module is not installed
        authenticated = await http.get(url("/roles/authenticated"), headers=admin.headers)
        assert authenticated.json()["data"]["permissions"] == []


def test_a_module_needs_the_modules_it_works_on() -> None:
    with pytest.raises(ValueError, match=r"'gateway_sync' needs \['content'\]"):
        modules.installed(["gateway_sync"])
    assert {m.name for m in modules.installed(["gateway_sync", "content"])} == {
        "admin_api",
        "content",
        "gateway_sync",
    }


async def test_without_the_user_module_nothing_is_routed_or_described(
    settings: Settings, database: Database, clock: Clock
) -> None:
    async with installed(["audit"], settings, database, clock) as (http, admin):
        for path in ("/users", "/users/pending", "/permissions", "/roles"):
            response = await http.get(url(path), headers=admin.headers)
            assert response.status_code == 404, path
        document = await http.get(url("/openapi.json"), headers=admin.headers)
        assert not [p for p in document.json()["paths"] if p.startswith(("/users", "/roles"))]


async def test_the_description_covers_bodies(
    client: httpx.AsyncClient, site_admin: SiteAccount
) -> None:
    document = (await client.get(url("/openapi.json"), headers=site_admin.headers)).json()
    paths = document["paths"]
    for path in (
        "/permissions",
        "/roles",
        "/roles/{user_role}",
        "/users",
        "/users/pending",
        "/users/{user}",
        "/users/{user}/roles",
    ):
        assert "application/json" in paths[path]["get"]["responses"]["200"]["content"], path
    assert "requestBody" in paths["/users/{user}/reject"]["post"]
    assert "requestBody" in paths["/users/{user}/block"]["post"]
    assert "204" in paths["/users/{user}/firebase-identity"]["delete"]["responses"]
