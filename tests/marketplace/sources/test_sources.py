"""``GET /sources`` and ``GET /sources/{source}``: the connector catalogue."""

from __future__ import annotations

import httpx

from tests.marketplace.conftest import SiteAccount, SiteFactory, url

PERMISSION = "administer gateway sync"
CAPABILITIES = {
    "apis",
    "products",
    "remote_inventory",
    "async_import",
    "analytics",
    "subscription_provisioning",
    "health",
}


async def test_the_source_types_with_their_capabilities(
    admin_api: httpx.AsyncClient, site_admin: SiteAccount
) -> None:
    listed = await admin_api.get(url("/sources"), headers=site_admin.headers)
    assert listed.status_code == 200, listed.text
    body = listed.json()
    assert [s["id"] for s in body["data"]] == ["openapi", "portico"]
    assert body["meta"] == {"count": 2, "page": 1, "limit": 50, "pages": 1}
    portico = body["data"][1]
    assert set(portico["capabilities"]) == CAPABILITIES
    assert portico["capabilities"]["apis"] is True
    assert portico["capabilities"]["subscription_provisioning"] is True
    assert portico["capabilities"]["health"] is False
    assert portico["feature_flag"] == {"name": "gateway_sync.source.portico", "enabled": True}


async def test_sorted_by_label_descending(
    admin_api: httpx.AsyncClient, site_admin: SiteAccount
) -> None:
    listed = await admin_api.get(url("/sources?sort=-label"), headers=site_admin.headers)
    assert [s["label"] for s in listed.json()["data"]] == [
        "Portico management service",
        "OpenAPI documents",
    ]


async def test_one_source_type_with_its_connection_fields(
    admin_api: httpx.AsyncClient, site_admin: SiteAccount
) -> None:
    got = await admin_api.get(url("/sources/portico"), headers=site_admin.headers)
    assert got.status_code == 200, got.text
    fields = {f["name"]: f for f in got.json()["data"]["connection_fields"]}
    assert list(fields) == ["base_url", "org_id", "token"]
    assert fields["token"]["secret"] is True
    assert fields["base_url"] == {
        "name": "base_url",
        "label": "Base URL",
        "type": "url",
        "required": True,
        "secret": False,
        "help": fields["base_url"]["help"],
    }
    openapi = await admin_api.get(url("/sources/openapi"), headers=site_admin.headers)
    assert [f["type"] for f in openapi.json()["data"]["connection_fields"]] == ["url_list"]


async def test_an_unknown_source_type_is_not_found(
    admin_api: httpx.AsyncClient, site_admin: SiteAccount
) -> None:
    missing = await admin_api.get(url("/sources/apigee"), headers=site_admin.headers)
    assert missing.status_code == 404
    assert missing.headers["content-type"] == "application/problem+json"
    assert missing.json()["type"] == "/problems/not-found"
    assert missing.json()["detail"] == "no source type 'apigee'"


async def test_the_permission_is_needed(admin_api: httpx.AsyncClient, site: SiteFactory) -> None:
    manager = await site.account("marketplace_admin")
    for path in ("/sources", "/sources/portico"):
        denied = await admin_api.get(url(path), headers=manager.headers)
        assert denied.status_code == 403
        assert denied.json()["detail"] == f"missing permission '{PERMISSION}'"
    assert (await admin_api.get(url("/sources"))).status_code == 401


async def test_unknown_query_parameters_are_refused(
    admin_api: httpx.AsyncClient, site_admin: SiteAccount
) -> None:
    refused = await admin_api.get(url("/sources?filter[colour]=red"), headers=site_admin.headers)
    assert refused.status_code == 400
    assert refused.json()["errors"][0]["parameter"] == "filter[colour]"
