"""Who may do what in the catalogue, and the audit trail of every change."""

from __future__ import annotations

import uuid
from typing import Any

import httpx
import pytest

from portico.core.db.engine import Database
from tests.marketplace.catalogue.conftest import (
    OPENAPI_30,
    audit_entries,
    new_api,
    new_product,
    refused,
)
from tests.marketplace.conftest import SiteAccount, SiteFactory, url

WRITES = [
    ("POST", "/apis", "create apis content"),
    ("PATCH", "/apis/{api}", "edit any apis content"),
    ("DELETE", "/apis/{api}", "delete any apis content"),
    ("POST", "/products", "create api_products content"),
    ("PATCH", "/products/{product}", "edit any api_products content"),
    ("DELETE", "/products/{product}", "delete any api_products content"),
]
READS = ["/apis", "/apis/{api}", "/products", "/products/{product}"]


@pytest.fixture
async def nodes(admin_api: httpx.AsyncClient, site_admin: SiteAccount) -> dict[str, str]:
    api = await new_api(admin_api, site_admin)
    product = await new_product(admin_api, site_admin, associated_apis=[api["id"]])
    return {"api": api["id"], "product": product["id"]}


@pytest.mark.parametrize(("method", "path", "permission"), WRITES)
async def test_writing_needs_the_bundles_permission_which_is_named(
    admin_api: httpx.AsyncClient,
    reader: SiteAccount,
    nodes: dict[str, str],
    method: str,
    path: str,
    permission: str,
) -> None:
    response = await admin_api.request(
        method, url(path.format(**nodes)), json={"title": "X"}, headers=reader.headers
    )
    problem = refused(response, 403)
    assert problem["type"] == "/problems/permission-denied"
    assert problem["detail"] == f"missing permission '{permission}'"
    assert problem["permission"] == permission


@pytest.mark.parametrize("path", READS)
async def test_reading_needs_access_content_which_every_signed_in_account_has(
    admin_api: httpx.AsyncClient, reader: SiteAccount, nodes: dict[str, str], path: str
) -> None:
    response = await admin_api.get(url(path.format(**nodes)), headers=reader.headers)
    assert response.status_code == 200, response.text


async def test_without_the_baseline_nothing_is_allowed(
    admin_api: httpx.AsyncClient, site: SiteFactory, nodes: dict[str, str]
) -> None:
    # the content editor role holds every content permission but not the admin API's baseline
    for roles in ((), ("content_editor",)):
        account = await site.account(*roles)
        for method, path, _ in WRITES:
            response = await admin_api.request(
                method, url(path.format(**nodes)), json={"title": "X"}, headers=account.headers
            )
            problem = refused(response, 403)
            assert problem["permission"] == "access marketplace admin api"
    assert (await admin_api.get(url("/apis"))).status_code == 401


@pytest.mark.parametrize("roles", [("api_manager",), ("marketplace_admin",)])
async def test_site_roles_with_the_baseline_manage_the_catalogue(
    admin_api: httpx.AsyncClient, site: SiteFactory, roles: tuple[str, ...]
) -> None:
    account = await site.account(*roles)
    api = await new_api(admin_api, account)
    product = await new_product(admin_api, account, associated_apis=[api["id"]])
    for path in (f"/apis/{api['id']}", f"/products/{product['id']}"):
        assert (
            await admin_api.patch(url(path), json={"title": "Y"}, headers=account.headers)
        ).status_code == 200
        assert (await admin_api.delete(url(path), headers=account.headers)).status_code == 204


async def test_a_content_editor_creates_edits_and_deletes(
    admin_api: httpx.AsyncClient, editor: SiteAccount, database: Database
) -> None:
    api = await new_api(admin_api, editor, documentation=OPENAPI_30)
    product = await new_product(admin_api, editor, associated_apis=[api["id"]])
    api_path, product_path = url(f"/apis/{api['id']}"), url(f"/products/{product['id']}")
    assert (
        await admin_api.patch(api_path, json={"version": "2"}, headers=editor.headers)
    ).status_code == 200
    assert (
        await admin_api.patch(product_path, json={"description": "d"}, headers=editor.headers)
    ).status_code == 200
    assert (await admin_api.delete(product_path, headers=editor.headers)).status_code == 204
    assert (await admin_api.delete(api_path, headers=editor.headers)).status_code == 204
    entries = await audit_entries(database)
    assert [(e.action, e.entity_id, e.bundle) for e in entries] == [
        ("api.create", api["id"], "apis"),
        ("product.create", product["id"], "api_products"),
        ("api.update", api["id"], "apis"),
        ("product.update", product["id"], "api_products"),
        ("product.delete", product["id"], "api_products"),
        ("api.delete", api["id"], "apis"),
    ]
    for entry in entries:
        assert (entry.surface, entry.module, entry.entity_type) == (
            "marketplace",
            "content",
            "node",
        )
        assert entry.actor_id == editor.id


async def test_audit_entries_hold_before_and_after(
    admin_api: httpx.AsyncClient, editor: SiteAccount, database: Database
) -> None:
    api = await new_api(admin_api, editor, documentation=OPENAPI_30)
    path = url(f"/apis/{api['id']}")
    await admin_api.patch(path, json={"title": "Orders v2"}, headers=editor.headers)
    await admin_api.delete(path, headers=editor.headers)
    create, update, delete = await audit_entries(database, "api.create", "api.update", "api.delete")
    assert create.before is None
    assert create.after["title"] == "Orders"
    assert create.summary == "created API Orders"
    # the document stands in the log as what identifies it, not its whole content
    document: dict[str, Any] = create.after["documentation"]
    assert set(document) == {"openapi", "title", "version", "sha256"}
    assert (document["openapi"], document["title"], document["version"]) == (
        "3.0.3",
        "Orders",
        "1.0.0",
    )
    assert (update.before["title"], update.after["title"]) == ("Orders", "Orders v2")
    assert update.before["documentation"] == update.after["documentation"]
    assert delete.before["title"] == "Orders v2"
    assert delete.after is None
    assert delete.summary == "deleted API Orders v2"


async def test_nothing_changed_is_not_audited_and_a_refusal_writes_nothing(
    admin_api: httpx.AsyncClient, editor: SiteAccount, database: Database
) -> None:
    api = await new_api(admin_api, editor, version="1")
    path = url(f"/apis/{api['id']}")
    same = await admin_api.patch(path, json={"version": "1"}, headers=editor.headers)
    assert same.json()["data"] == api
    refused_body = await admin_api.patch(
        path, json={"organisation": str(uuid.uuid4())}, headers=editor.headers
    )
    assert refused_body.status_code == 400
    assert [e.action for e in await audit_entries(database)] == ["api.create"]
