"""Imports from a real second management service: one API (201 created, 200 updated in
place with the new revision), all or a subset with a per-API report, products with the APIs
they list, what was imported from a connection, and the audit trail."""

from __future__ import annotations

import uuid
from typing import Any

import httpx
from sqlalchemy import func, select

from portico.core.audit import AuditEntry
from portico.core.db.engine import Database
from portico.marketplace.node.models import CatalogueNode
from tests.marketplace.conftest import SiteAccount, SiteFactory, url
from tests.marketplace.imports.conftest import CONNECTIONS, RemoteOrg, connect, document

UNKNOWN_ID = "45058b31-fc55-4a58-82a5-dc21f78582b0"


async def post(
    client: httpx.AsyncClient, who: SiteAccount, path: str, body: Any = None
) -> httpx.Response:
    return await client.post(url(path), json=body, headers=who.headers)


async def audit_entries(database: Database, action: str) -> list[AuditEntry]:
    async with database.session() as session:
        return list(
            await session.scalars(
                select(AuditEntry).where(AuditEntry.action == action).order_by(AuditEntry.id)
            )
        )


async def node_count(database: Database) -> int:
    async with database.session() as session:
        return int(await session.scalar(select(func.count()).select_from(CatalogueNode)) or 0)


async def test_one_api_imported_then_updated_in_place_with_its_new_revision(
    admin_api: httpx.AsyncClient,
    site_admin: SiteAccount,
    remote_org: RemoteOrg,
    database: Database,
) -> None:
    api_id = await remote_org.api("Orders", version="2.3.0", description="Order things.")
    connection = await connect(admin_api, site_admin, remote_org.connection("main"))
    base = f"{CONNECTIONS}/{connection['id']}"

    created = await post(admin_api, site_admin, f"{base}/apis/import", {"api_id": api_id})
    assert created.status_code == 201, created.text
    node = created.json()["data"]
    assert created.headers["location"] == f"/api/admin/v1/apis/{node['id']}"
    assert node["bundle"] == "apis"
    assert node["title"] == "Orders"
    assert node["version"] == "2.3.0"
    assert node["overview"] == "Order things."
    assert node["documentation"] == document("Orders", "2.3.0", "Order things.")
    assert node["moderation_state"] == "draft"
    assert node["published"] is False
    assert node["source"] == {
        "type": "imported",
        "connection_id": connection["id"],
        "remote_id": api_id,
        "uuid": api_id,
        "revision": "1",
    }

    assert await remote_org.new_revision(api_id) == 2
    await remote_org.rename(api_id, "Orders v2")
    again = await post(admin_api, site_admin, f"{base}/apis/import", {"api_id": api_id})
    assert again.status_code == 200, again.text
    updated = again.json()["data"]
    assert updated["id"] == node["id"]
    assert updated["title"] == "Orders v2"
    assert updated["source"]["revision"] == "2"
    assert updated["created_at"] == node["created_at"]
    assert "location" not in again.headers
    assert await node_count(database) == 1

    entries = await audit_entries(database, "api.import")
    assert [(e.entity_id, e.module, e.bundle) for e in entries] == [
        (node["id"], "gateway_sync", "apis")
    ] * 2
    assert {e.before is None for e in entries} == {True, False}
    assert all("'main'" not in e.summary and "main" in e.summary for e in entries)
    assert remote_org.token not in str([e.after for e in entries])


async def test_an_api_the_remote_does_not_expose_is_a_404_naming_it(
    admin_api: httpx.AsyncClient,
    site_admin: SiteAccount,
    remote_org: RemoteOrg,
    database: Database,
) -> None:
    connection = await connect(admin_api, site_admin, remote_org.connection())
    path = f"{CONNECTIONS}/{connection['id']}/apis/import"
    for api_id in (UNKNOWN_ID, "not-an-id"):
        missing = await post(admin_api, site_admin, path, {"api_id": api_id})
        assert missing.status_code == 404, missing.text
        assert f"api_id '{api_id}'" in missing.json()["detail"]
    refused = await post(admin_api, site_admin, path, {"api_id": ""})
    assert refused.status_code == 400
    assert refused.json()["errors"][0]["pointer"] == "/api_id"
    assert await node_count(database) == 0


async def test_an_api_without_a_document(
    admin_api: httpx.AsyncClient, site_admin: SiteAccount, remote_org: RemoteOrg
) -> None:
    api_id = await remote_org.bare_api("Bare")
    connection = await connect(admin_api, site_admin, remote_org.connection())
    created = await post(
        admin_api, site_admin, f"{CONNECTIONS}/{connection['id']}/apis/import", {"api_id": api_id}
    )
    assert created.status_code == 201, created.text
    node = created.json()["data"]
    assert (node["documentation"], node["version"], node["source"]["revision"]) == (None, "", None)


async def test_all_apis_then_again_then_a_subset(
    admin_api: httpx.AsyncClient,
    site_admin: SiteAccount,
    remote_org: RemoteOrg,
    database: Database,
) -> None:
    ids = [await remote_org.api(name) for name in ("A", "B", "C")]
    connection = await connect(admin_api, site_admin, remote_org.connection())
    path = f"{CONNECTIONS}/{connection['id']}/apis/import/all"

    first = await post(admin_api, site_admin, path)
    assert first.status_code == 200, first.text
    body = first.json()
    assert [(i["api_id"], i["outcome"], i["detail"]) for i in body["data"]] == [
        (api_id, "created", None) for api_id in ids
    ]
    assert body["meta"] == {"count": 3, "failed": []}
    nodes = [i["node_id"] for i in body["data"]]

    await remote_org.new_revision(ids[1])
    second = (await post(admin_api, site_admin, path, {})).json()
    assert [(i["node_id"], i["outcome"]) for i in second["data"]] == [(n, "updated") for n in nodes]

    subset = await post(admin_api, site_admin, path, {"api_ids": [ids[2], UNKNOWN_ID, ids[2]]})
    assert subset.status_code == 200, subset.text
    report = subset.json()
    assert [(i["api_id"], i["outcome"]) for i in report["data"]] == [
        (ids[2], "updated"),
        (UNKNOWN_ID, "failed"),
    ]
    assert report["data"][1]["node_id"] is None
    [failure] = report["meta"]["failed"]
    assert failure["id"] == UNKNOWN_ID
    assert failure["status"] == 404
    assert f"api_id '{UNKNOWN_ID}'" in failure["detail"]
    assert await node_count(database) == 3

    listed = await admin_api.get(
        url(f"{CONNECTIONS}/{connection['id']}/apis?sort=-title"), headers=site_admin.headers
    )
    assert [n["title"] for n in listed.json()["data"]] == ["C", "B", "A"]
    assert listed.json()["data"][1]["source"]["revision"] == "2"
    assert "documentation" not in listed.json()["data"][0]
    one = await admin_api.get(
        url(f"{CONNECTIONS}/{connection['id']}/apis?filter[remote_id]={ids[0]}"),
        headers=site_admin.headers,
    )
    assert [n["id"] for n in one.json()["data"]] == [nodes[0]]
    refused = await admin_api.get(
        url(f"{CONNECTIONS}/{connection['id']}/apis?filter[moderation_state]=live"),
        headers=site_admin.headers,
    )
    assert refused.status_code == 400
    assert refused.json()["errors"][0]["parameter"] == "filter[moderation_state]"


async def test_a_product_brings_the_apis_it_lists(
    admin_api: httpx.AsyncClient,
    site_admin: SiteAccount,
    remote_org: RemoteOrg,
    database: Database,
) -> None:
    first, second, third = [await remote_org.api(n) for n in ("First", "Second", "Third")]
    quota = {"limit": 10, "interval": 1, "interval_unit": "hour", "key_scope": "app"}
    gold = await remote_org.product("gold", [third, first], quota=quota)
    silver = await remote_org.product("silver", [second, first])
    connection = await connect(admin_api, site_admin, remote_org.connection())
    base = f"{CONNECTIONS}/{connection['id']}"
    already = await post(admin_api, site_admin, f"{base}/apis/import", {"api_id": first})
    first_node = already.json()["data"]["id"]

    created = await post(admin_api, site_admin, f"{base}/products/import", {"product_id": gold})
    assert created.status_code == 201, created.text
    product = created.json()["data"]
    assert created.headers["location"] == f"/api/admin/v1/products/{product['id']}"
    assert (product["bundle"], product["title"], product["description"]) == (
        "api_products",
        "Gold",
        "the gold product",
    )
    assert product["quota"] == quota
    assert product["gateway_type"] == "portico"
    assert product["moderation_state"] == "draft"
    assert product["source"]["remote_id"] == gold
    apis = await admin_api.get(url(f"{base}/apis"), headers=site_admin.headers)
    by_remote = {n["source"]["remote_id"]: n["id"] for n in apis.json()["data"]}
    assert set(by_remote) == {first, third}  # third came with the product
    assert by_remote[first] == first_node  # first was there: not imported again
    assert product["associated_apis"] == [by_remote[third], by_remote[first]]

    again = await post(admin_api, site_admin, f"{base}/products/import", {"product_id": gold})
    assert again.status_code == 200, again.text
    assert again.json()["data"]["id"] == product["id"]

    everything = await post(admin_api, site_admin, f"{base}/products/import/all")
    assert everything.status_code == 200, everything.text
    outcomes = {i["product_id"]: i for i in everything.json()["data"]}
    assert outcomes[gold]["outcome"] == "updated"
    assert outcomes[gold]["imported_apis"] == []
    assert outcomes[silver]["outcome"] == "created"
    assert outcomes[silver]["imported_apis"] == [second]

    listed = await admin_api.get(url(f"{base}/products"), headers=site_admin.headers)
    assert [(p["title"], len(p["associated_apis"])) for p in listed.json()["data"]] == [
        ("Gold", 2),
        ("Silver", 2),
    ]
    subset = await post(
        admin_api, site_admin, f"{base}/products/import/all", {"product_ids": [UNKNOWN_ID]}
    )
    assert subset.json()["meta"]["failed"][0]["status"] == 404
    missing = await post(
        admin_api, site_admin, f"{base}/products/import", {"product_id": UNKNOWN_ID}
    )
    assert missing.status_code == 404
    assert f"product_id '{UNKNOWN_ID}'" in missing.json()["detail"]
    assert len(await audit_entries(database, "product.import")) == 4  # gold twice, then both


async def test_reading_what_was_imported_needs_access_content_only(
    admin_api: httpx.AsyncClient,
    site: SiteFactory,
    site_admin: SiteAccount,
    remote_org: RemoteOrg,
) -> None:
    api_id = await remote_org.api("Visible")
    connection = await connect(admin_api, site_admin, remote_org.connection())
    base = f"{CONNECTIONS}/{connection['id']}"
    await post(admin_api, site_admin, f"{base}/apis/import", {"api_id": api_id})
    reader = await site.account("marketplace_admin")  # access content, no gateway sync
    listed = await admin_api.get(url(f"{base}/apis"), headers=reader.headers)
    assert [n["title"] for n in listed.json()["data"]] == ["Visible"]
    refused = await post(admin_api, reader, f"{base}/apis/import", {"api_id": api_id})
    assert refused.status_code == 403
    assert refused.json()["permission"] == "administer gateway sync"
    unknown = await admin_api.get(
        url(f"{CONNECTIONS}/{uuid.UUID(UNKNOWN_ID)}/apis"), headers=reader.headers
    )
    assert unknown.status_code == 404
