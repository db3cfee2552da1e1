"""``/products``: product nodes, their APIs (in order) and quota, bound to a connection or not."""

from __future__ import annotations

import uuid
from typing import Any

import httpx

from tests.marketplace.catalogue.conftest import (
    UNKNOWN_ID,
    new_api,
    new_product,
    pointers,
    refused,
)
from tests.marketplace.conftest import SiteAccount, url

QUOTA = {"limit": 1000, "interval": 1, "interval_unit": "day", "key_scope": "app"}


async def test_a_product_with_its_apis_in_order_and_a_quota(
    admin_api: httpx.AsyncClient, editor: SiteAccount, owner_org: uuid.UUID
) -> None:
    orders, payments = await new_api(admin_api, editor), await new_api(admin_api, editor)
    created = await admin_api.post(
        url("/products"),
        json={
            "title": "Gold",
            "description": "Everything, fast.",
            "associated_apis": [payments["id"], orders["id"]],
            "quota": QUOTA,
            "organisation": str(owner_org),
        },
        headers=editor.headers,
    )
    assert created.status_code == 201, created.text
    data = created.json()["data"]
    assert created.headers["location"] == f"/api/admin/v1/products/{data['id']}"
    assert data["bundle"] == "api_products"
    assert data["associated_apis"] == [payments["id"], orders["id"]]
    assert data["quota"] == QUOTA
    assert data["description"] == "Everything, fast."
    assert data["gateway_type"] is None
    assert data["source"]["type"] == "custom"
    assert (data["moderation_state"], data["published"], data["visibility"]) == (
        "draft",
        False,
        "internal",
    )
    got = await admin_api.get(url(f"/products/{data['id']}"), headers=editor.headers)
    assert got.json() == {"data": data}
    listed = await admin_api.get(url("/products"), headers=editor.headers)
    assert listed.json()["data"] == [data]


async def test_a_product_bound_to_a_connection(
    admin_api: httpx.AsyncClient, editor: SiteAccount, connection: uuid.UUID
) -> None:
    data = await new_product(
        admin_api, editor, connection_id=str(connection), product_id="gold", gateway_type="kong"
    )
    assert data["source"] == {
        "type": "imported",
        "connection_id": str(connection),
        "remote_id": "gold",
        "uuid": None,
        "revision": None,
    }
    assert data["gateway_type"] == "kong"
    # the gateway type defaults to the connection's source type
    other = await new_product(admin_api, editor, connection_id=str(connection), product_id="x")
    assert other["gateway_type"] == "portico"
    taken = await admin_api.post(
        url("/products"),
        json={"title": "Gold again", "connection_id": str(connection), "product_id": "gold"},
        headers=editor.headers,
    )
    assert data["id"] in refused(taken, 409)["detail"]
    for field in ("product_id", "gateway_type"):
        response = await admin_api.post(
            url("/products"), json={"title": "X", field: "abc"}, headers=editor.headers
        )
        assert list(pointers(response)) == [f"/{field}"]


async def test_quotas_follow_the_management_services_rules(
    admin_api: httpx.AsyncClient, editor: SiteAccount
) -> None:
    unlimited = await new_product(admin_api, editor, quota={**QUOTA, "limit": -1})
    assert unlimited["quota"]["limit"] == -1
    whole = await new_product(admin_api, editor, quota={**QUOTA, "limit": 10.0})
    assert whole["quota"]["limit"] == 10  # JSON's integers may be written 10.0
    for unit in ("second", "minute", "hour", "day", "month"):
        await new_product(admin_api, editor, quota={**QUOTA, "interval_unit": unit})
    cases: list[tuple[dict[str, Any], str]] = [
        ({**QUOTA, "limit": 0}, "/quota/limit"),
        ({**QUOTA, "limit": -2}, "/quota/limit"),
        ({**QUOTA, "limit": 2**53}, "/quota/limit"),
        ({**QUOTA, "limit": "10"}, "/quota/limit"),
        ({**QUOTA, "limit": True}, "/quota/limit"),
        ({**QUOTA, "limit": 1.5}, "/quota/limit"),
        ({**QUOTA, "interval": 0}, "/quota/interval"),
        ({**QUOTA, "interval_unit": "week"}, "/quota/interval_unit"),
        ({"limit": 1, "interval": 1}, "/quota/interval_unit"),
        ({**QUOTA, "key_scope": "team"}, "/quota/key_scope"),
        ({**QUOTA, "burst": 5}, "/quota/burst"),
    ]
    for quota, pointer in cases:
        response = await admin_api.post(
            url("/products"), json={"title": "X", "quota": quota}, headers=editor.headers
        )
        assert pointer in pointers(response), (quota, response.text)
    zero = await admin_api.post(
        url("/products"),
        json={"title": "X", "quota": {**QUOTA, "limit": 0}},
        headers=editor.headers,
    )
    assert pointers(zero)["/quota/limit"].endswith("must be at least 1, or -1 for unlimited")


async def test_associated_apis_must_be_api_nodes_each_once(
    admin_api: httpx.AsyncClient, editor: SiteAccount
) -> None:
    api = await new_api(admin_api, editor)
    product = await new_product(admin_api, editor)
    response = await admin_api.post(
        url("/products"),
        json={"title": "X", "associated_apis": [api["id"], UNKNOWN_ID, product["id"]]},
        headers=editor.headers,
    )
    assert refused(response)["type"] == "/problems/unknown-reference"
    assert pointers(response) == {
        "/associated_apis/1": f"no API node has id {UNKNOWN_ID}",
        "/associated_apis/2": f"no API node has id {product['id']}",
    }
    twice = await admin_api.post(
        url("/products"),
        json={"title": "X", "associated_apis": [api["id"], api["id"]]},
        headers=editor.headers,
    )
    assert pointers(twice) == {
        "/associated_apis/1": f"$.associated_apis[1]: {api['id']} is listed more than once"
    }
    malformed = await admin_api.post(
        url("/products"), json={"title": "X", "associated_apis": ["x"]}, headers=editor.headers
    )
    assert list(pointers(malformed)) == ["/associated_apis/0"]


async def test_patch_replaces_the_apis_in_the_order_given(
    admin_api: httpx.AsyncClient, editor: SiteAccount, other_org: uuid.UUID
) -> None:
    a, b, c = [await new_api(admin_api, editor, title=t) for t in ("A", "B", "C")]
    product = await new_product(admin_api, editor, associated_apis=[a["id"], b["id"]], quota=QUOTA)
    path = url(f"/products/{product['id']}")
    changed = await admin_api.patch(
        path, json={"associated_apis": [c["id"], a["id"]]}, headers=editor.headers
    )
    assert changed.status_code == 200, changed.text
    data = changed.json()["data"]
    assert data["associated_apis"] == [c["id"], a["id"]]
    assert (data["title"], data["quota"]) == ("Gold", QUOTA)
    renamed = await admin_api.patch(
        path,
        json={"title": "Platinum", "description": "more", "organisation": str(other_org)},
        headers=editor.headers,
    )
    data = renamed.json()["data"]
    assert (data["title"], data["description"], data["organisation"]) == (
        "Platinum",
        "more",
        str(other_org),
    )
    assert data["associated_apis"] == [c["id"], a["id"]]
    cleared = await admin_api.patch(
        path, json={"quota": None, "associated_apis": []}, headers=editor.headers
    )
    assert (cleared.json()["data"]["quota"], cleared.json()["data"]["associated_apis"]) == (
        None,
        [],
    )
    got = await admin_api.get(path, headers=editor.headers)
    assert got.json()["data"] == cleared.json()["data"]


async def test_patch_refusals_name_the_field_and_change_nothing(
    admin_api: httpx.AsyncClient, editor: SiteAccount
) -> None:
    api = await new_api(admin_api, editor)
    product = await new_product(admin_api, editor, associated_apis=[api["id"]])
    path = url(f"/products/{product['id']}")
    cases: list[tuple[dict[str, Any], str]] = [
        ({"title": None}, "/title"),
        ({"title": " "}, "/title"),
        ({"description": None}, "/description"),
        ({"associated_apis": None}, "/associated_apis"),
        ({"associated_apis": [UNKNOWN_ID]}, "/associated_apis/0"),
        ({"associated_apis": [product["id"]]}, "/associated_apis/0"),
        ({"associated_apis": [api["id"], api["id"]]}, "/associated_apis/1"),
        ({"quota": {**QUOTA, "interval": -1}}, "/quota/interval"),
        ({"organisation": UNKNOWN_ID}, "/organisation"),
        ({"gateway_type": "kong"}, "/gateway_type"),
        ({"version": "1"}, "/version"),
    ]
    for body, pointer in cases:
        response = await admin_api.patch(path, json={"title": "Y", **body}, headers=editor.headers)
        assert pointer in pointers(response), (body, response.text)
    assert (await admin_api.get(path, headers=editor.headers)).json()["data"] == product


async def test_unknown_and_malformed_ids_are_404(
    admin_api: httpx.AsyncClient, editor: SiteAccount
) -> None:
    api = await new_api(admin_api, editor)
    for node in (UNKNOWN_ID, "not-a-uuid", api["id"]):
        for method, body in (("GET", None), ("PATCH", {"title": "Z"}), ("DELETE", None)):
            response = await admin_api.request(
                method, url(f"/products/{node}"), json=body, headers=editor.headers
            )
            assert refused(response, 404)["detail"] == "API product not found", (method, node)
    assert (await admin_api.get(url(f"/apis/{api['id']}"), headers=editor.headers)).json()[
        "data"
    ] == api
