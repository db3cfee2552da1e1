"""``/publishing/portals``: the portals syndication can target, and syndication itself (the
super-administrator's alone), with the publications a product implies for its APIs."""

from __future__ import annotations

import uuid
from typing import Any

import httpx
import pytest

from portico.marketplace.node.models import Bundle
from tests.marketplace.conftest import SiteAccount, url
from tests.marketplace.content.catalogue import Catalogue, failed, ids

PATH = url("/publishing/portals")


def _portals(report: dict[str, Any]) -> dict[str, tuple[bool, list[str]]]:
    """A report's portals: organisation → (explicit, implied_by)."""
    return {p["organisation"]: (p["explicit"], p["implied_by"]) for p in report["portals"]}


async def test_the_portals_are_the_organisations_with_their_domains(
    admin_api: httpx.AsyncClient, catalogue: Catalogue, manager: SiteAccount
) -> None:
    await catalogue.organisation("Zeta", ["zeta.example.com"])
    acme = await catalogue.organisation("Acme", ["dev.acme.example", "api.acme.example"])
    answer = await admin_api.get(PATH, headers=manager.headers)
    assert answer.status_code == 200, answer.text
    listed = answer.json()
    # the portal owner's organisation is every installation's first
    assert [p["name"] for p in listed["data"]] == ["Acme", "Portal owner", "Zeta"]
    assert listed["data"][0]["id"] == str(acme)
    assert listed["data"][0]["domains"] == ["dev.acme.example", "api.acme.example"]
    assert listed["data"][1]["domains"] == []
    assert listed["meta"] == {"count": 3, "page": 1, "limit": 50, "pages": 1}
    named = await admin_api.get(PATH, params={"filter[name]": "Zeta"}, headers=manager.headers)
    assert [p["name"] for p in named.json()["data"]] == ["Zeta"]
    paged = await admin_api.get(
        PATH, params={"sort": "-name", "limit": "1", "page": "2"}, headers=manager.headers
    )
    assert [p["name"] for p in paged.json()["data"]] == ["Portal owner"]
    for params, parameter in (
        ({"filter[domain]": "x"}, "filter[domain]"),
        ({"sort": "domains"}, "sort"),
    ):
        refused = await admin_api.get(PATH, params=params, headers=manager.headers)
        assert refused.status_code == 400
        assert [e["parameter"] for e in refused.json()["errors"]] == [parameter]


async def test_only_a_super_administrator_changes_syndication(
    admin_api: httpx.AsyncClient,
    catalogue: Catalogue,
    manager: SiteAccount,
    editor: SiteAccount,
    site_admin: SiteAccount,
) -> None:
    portal = await catalogue.organisation()
    api = await catalogue.node(Bundle.APIS)
    body = {"nodes": ids(api), "organisations": ids(portal), "operation": "add"}
    # the API manager holds 'syndicate apis to portals', and is still refused
    refused = await admin_api.post(PATH, json=body, headers=manager.headers)
    assert refused.status_code == 403, refused.text
    assert refused.headers["content-type"] == "application/problem+json"
    assert "super-administrator" in refused.json()["detail"]
    for denied in (
        await admin_api.post(PATH, json=body, headers=editor.headers),
        await admin_api.get(PATH, headers=editor.headers),
    ):
        assert denied.status_code == 403
        assert denied.json()["permission"] == "syndicate apis to portals"
    assert await catalogue.syndications(api) == set()
    assert await catalogue.audits("content.syndicate") == []

    done = await admin_api.post(PATH, json=body, headers=site_admin.headers)
    assert done.status_code == 200, done.text
    assert await catalogue.syndications(api) == {portal}


async def test_add_remove_and_set(
    admin_api: httpx.AsyncClient, catalogue: Catalogue, site_admin: SiteAccount
) -> None:
    one, two, three = [await catalogue.organisation() for _ in range(3)]
    api = await catalogue.node(Bundle.APIS)
    product = await catalogue.node(Bundle.API_PRODUCTS)

    async def syndicate(operation: str, *portals: uuid.UUID) -> dict[str, Any]:
        answer = await admin_api.post(
            PATH,
            json={
                "nodes": ids(api, product),
                "organisations": ids(*portals),
                "operation": operation,
            },
            headers=site_admin.headers,
        )
        assert answer.status_code == 200, answer.text
        body: dict[str, Any] = answer.json()
        assert body["meta"] == {"count": 2, "failed": []}
        return body

    added = await syndicate("add", one, two)
    assert [r["outcome"] for r in added["data"]] == ["applied", "applied"]
    assert _portals(added["data"][0]) == {str(one): (True, []), str(two): (True, [])}
    assert added["data"][1]["bundle"] == "api_products"
    assert added["data"][1]["kept"] == []
    again = await syndicate("add", two)
    assert [r["outcome"] for r in again["data"]] == ["unchanged", "unchanged"]
    removed = await syndicate("remove", one)
    assert _portals(removed["data"][0]) == {str(two): (True, [])}
    await syndicate("set", three)
    for node in (api, product):
        assert await catalogue.syndications(node) == {three}
    cleared = await syndicate("set")
    assert cleared["data"][0]["portals"] == []
    assert await catalogue.syndications(api) == set()

    entries = await catalogue.audits("content.syndicate", api)
    assert [(e.before["portals"], e.after["portals"]) for e in entries] == [
        ([], sorted(ids(one, two))),
        (sorted(ids(one, two)), [str(two)]),
        ([str(two)], [str(three)]),
        ([str(three)], []),
    ]
    assert {e.bundle for e in entries} == {"apis"}


async def test_a_products_syndication_publishes_its_apis_and_is_kept(
    admin_api: httpx.AsyncClient, catalogue: Catalogue, site_admin: SiteAccount
) -> None:
    one, two, three = [await catalogue.organisation() for _ in range(3)]
    orders, payments = await catalogue.node(Bundle.APIS), await catalogue.node(Bundle.APIS)
    shop = await catalogue.node(Bundle.API_PRODUCTS)
    bundle = await catalogue.node(Bundle.API_PRODUCTS)
    await catalogue.include(shop, orders, payments)
    await catalogue.include(bundle, orders)
    await catalogue.syndicate(bundle, one)

    async def syndicate(nodes: list[str], operation: str, *portals: uuid.UUID) -> list[Any]:
        answer = await admin_api.post(
            PATH,
            json={"nodes": nodes, "organisations": ids(*portals), "operation": operation},
            headers=site_admin.headers,
        )
        assert answer.status_code == 200, answer.text
        reports: list[Any] = answer.json()["data"]
        return reports

    # the shop goes to portal one: its APIs are published there through it
    (shop_report,) = await syndicate(ids(shop), "add", one)
    assert _portals(shop_report) == {str(one): (True, [])}
    # orders also goes to portal two on its own
    (report,) = await syndicate(ids(orders), "add", one, two)
    assert _portals(report) == {
        str(one): (True, sorted(ids(shop, bundle))),
        str(two): (True, []),
    }

    # removing orders from portal one ends its own syndication; the products keep it there
    (report,) = await syndicate(ids(orders), "remove", one)
    assert report["outcome"] == "applied"
    assert _portals(report) == {
        str(one): (False, sorted(ids(shop, bundle))),
        str(two): (True, []),
    }
    assert report["kept"] == [
        {"organisation": str(one), "explicit": False, "implied_by": sorted(ids(shop, bundle))}
    ]
    assert await catalogue.syndications(orders) == {two}
    (entry,) = (await catalogue.audits("content.syndicate", orders))[1:]
    assert entry.after["kept"] == report["kept"]

    # nothing stored for payments, which is published to portal one all the same
    (report,) = await syndicate(ids(payments), "remove", one)
    assert report["outcome"] == "unchanged"
    assert _portals(report) == {str(one): (False, [str(shop)])}
    assert [k["organisation"] for k in report["kept"]] == [str(one)]
    assert await catalogue.syndications(payments) == set()

    # set: exactly portal three, but for what the products imply
    (report,) = await syndicate(ids(orders), "set", three)
    assert _portals(report) == {
        str(one): (False, sorted(ids(shop, bundle))),
        str(three): (True, []),
    }
    assert [k["organisation"] for k in report["kept"]] == [str(one)]

    # once the products leave portal one, so do their APIs (in the same request, too)
    reports = await syndicate(ids(shop, orders, bundle), "remove", one)
    assert [r["outcome"] for r in reports] == ["applied", "unchanged", "applied"]
    assert _portals(reports[1]) == {str(three): (True, [])}
    assert reports[1]["kept"] == []
    (report,) = await syndicate(ids(payments), "add", two)
    assert _portals(report) == {str(two): (True, [])}


async def test_failed_items_and_unknown_organisations(
    admin_api: httpx.AsyncClient, catalogue: Catalogue, site_admin: SiteAccount
) -> None:
    portal = await catalogue.organisation()
    api = await catalogue.node(Bundle.APIS)
    page = await catalogue.node(Bundle.PAGE)
    missing = uuid.uuid4()
    answer = await admin_api.post(
        PATH,
        json={"nodes": ids(page, api, missing), "organisations": ids(portal), "operation": "add"},
        headers=site_admin.headers,
    )
    assert answer.status_code == 200, answer.text
    body = answer.json()
    assert [r["outcome"] for r in body["data"]] == ["failed", "applied", "failed"]
    assert body["data"][0] == {
        "id": str(page),
        "outcome": "failed",
        "bundle": "page",
        "portals": None,
        "kept": [],
    }
    refused = failed(body)
    assert refused[str(page)][0] == 409
    assert "only APIs and API products" in refused[str(page)][1]
    assert refused[str(missing)][0] == 404
    assert await catalogue.syndications(page) == set()
    assert await catalogue.syndications(api) == {portal}

    ghost = uuid.uuid4()
    unknown = await admin_api.post(
        PATH,
        json={"nodes": ids(api), "organisations": ids(portal, ghost), "operation": "set"},
        headers=site_admin.headers,
    )
    assert unknown.status_code == 400
    assert unknown.json()["errors"] == [
        {"pointer": "/organisations/1", "detail": f"'{ghost}' names no portal organisation"}
    ]
    assert await catalogue.syndications(api) == {portal}


SOME = "0b6c5d3e-7d0c-4a3b-9d64-2f1f1b3f0c11"


@pytest.mark.parametrize(
    ("body", "pointer"),
    [
        ({"nodes": [SOME], "organisations": [SOME], "operation": "replace"}, "/operation"),
        ({"nodes": [SOME], "organisations": [SOME]}, "/operation"),
        ({"nodes": [SOME], "operation": "add"}, "/organisations"),
        ({"nodes": [], "organisations": [SOME], "operation": "add"}, "/nodes"),
        ({"nodes": [SOME], "organisations": [SOME, SOME], "operation": "add"}, "/organisations/1"),
        ({"nodes": [SOME], "organisations": ["acme"], "operation": "add"}, "/organisations/0"),
    ],
)
async def test_bad_bodies_are_400_naming_the_field(
    admin_api: httpx.AsyncClient, site_admin: SiteAccount, body: dict[str, Any], pointer: str
) -> None:
    answer = await admin_api.post(PATH, json=body, headers=site_admin.headers)
    assert answer.status_code == 400, answer.text
    assert [e["pointer"] for e in answer.json()["errors"]] == [pointer]
