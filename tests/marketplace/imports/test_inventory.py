"""``GET /gateways/connections/{id}/remote/apis`` and ``.../remote/products``: what a real
second management service exposes, marked with what was imported, filtered and paged,
cached five minutes (``refresh=1`` reads again), and a remote side that fails answered 502
naming the connection, which is marked failing (and connected again once it answers)."""

from __future__ import annotations

import uuid
from datetime import timedelta
from typing import Any

import httpx
import pytest
from sqlalchemy import select

from portico.core.clock import Clock
from portico.core.db.engine import Database
from portico.marketplace.connection.models import ConnectionStatus, GatewayConnection
from tests.marketplace.conftest import SiteAccount, SiteFactory, url
from tests.marketplace.imports.conftest import CONNECTIONS, RemoteOrg, Steerable, connect

UNKNOWN_ID = "45058b31-fc55-4a58-82a5-dc21f78582b0"


async def remote_apis(
    client: httpx.AsyncClient, who: SiteAccount, connection_id: str, query: str = ""
) -> httpx.Response:
    path = f"{CONNECTIONS}/{connection_id}/remote/apis"
    return await client.get(url(path + (f"?{query}" if query else "")), headers=who.headers)


def titles(response: httpx.Response) -> list[str]:
    assert response.status_code == 200, response.text
    return [item["title"] for item in response.json()["data"]]


async def status_of(database: Database, connection_id: str) -> ConnectionStatus:
    async with database.session() as session:
        row = await session.scalar(
            select(GatewayConnection).where(GatewayConnection.id == uuid.UUID(connection_id))
        )
        assert row is not None
        return row.status


async def test_the_inventory_marks_what_was_imported(
    admin_api: httpx.AsyncClient, site_admin: SiteAccount, remote_org: RemoteOrg
) -> None:
    orders = await remote_org.api("Orders", description="the orders")
    await remote_org.api("Payments")
    connection = await connect(admin_api, site_admin, remote_org.connection())

    listed = await remote_apis(admin_api, site_admin, connection["id"])
    assert titles(listed) == ["Orders", "Payments"]
    first = listed.json()["data"][0]
    assert first == {
        "api_id": orders,
        "uuid": orders,
        "title": "Orders",
        "overview": "the orders",
        "version": "",
        "revision": None,  # not deployed: the listing does not tell it
        "problem": None,
        "imported": False,
        "node_id": None,
        "import_status": "new",
    }
    assert listed.json()["meta"] == {"count": 2, "page": 1, "limit": 50, "pages": 1}

    imported = await admin_api.post(
        url(f"{CONNECTIONS}/{connection['id']}/apis/import"),
        json={"api_id": orders},
        headers=site_admin.headers,
    )
    assert imported.status_code == 201, imported.text
    again = (await remote_apis(admin_api, site_admin, connection["id"])).json()["data"]
    assert [(a["imported"], a["import_status"]) for a in again] == [
        (True, "existing"),
        (False, "new"),
    ]
    assert again[0]["node_id"] == imported.json()["data"]["id"]


async def test_filters_sorts_and_pages(
    admin_api: httpx.AsyncClient, site_admin: SiteAccount, remote_org: RemoteOrg
) -> None:
    ids = {name: await remote_org.api(name) for name in ("Alpha", "beta-orders", "Gamma Orders")}
    connection = await connect(admin_api, site_admin, remote_org.connection())
    await admin_api.post(
        url(f"{CONNECTIONS}/{connection['id']}/apis/import"),
        json={"api_id": ids["Alpha"]},
        headers=site_admin.headers,
    )
    cid = connection["id"]

    assert titles(await remote_apis(admin_api, site_admin, cid, "filter[search]=ORDERS")) == [
        "beta-orders",
        "Gamma Orders",
    ]
    assert titles(
        await remote_apis(admin_api, site_admin, cid, f"filter[api_id]={ids['Gamma Orders']}")
    ) == ["Gamma Orders"]
    assert titles(await remote_apis(admin_api, site_admin, cid, "filter[name]=Alpha")) == ["Alpha"]
    assert titles(await remote_apis(admin_api, site_admin, cid, "filter[name]=alpha")) == []
    assert titles(
        await remote_apis(admin_api, site_admin, cid, "filter[import_status]=existing")
    ) == ["Alpha"]
    assert titles(await remote_apis(admin_api, site_admin, cid, "filter[import_status]=new")) == [
        "beta-orders",
        "Gamma Orders",
    ]
    assert titles(await remote_apis(admin_api, site_admin, cid, "sort=-title")) == [
        "Gamma Orders",
        "beta-orders",
        "Alpha",
    ]
    paged = await remote_apis(admin_api, site_admin, cid, "limit=2&page=2")
    assert titles(paged) == ["Gamma Orders"]
    body = paged.json()
    assert body["meta"] == {"count": 3, "page": 2, "limit": 2, "pages": 2}
    assert body["links"]["prev"].endswith("limit=2&page=1")
    assert body["links"]["next"] is None


@pytest.mark.parametrize(
    ("query", "parameter"),
    [
        ("filter[import_status]=old", "filter[import_status]"),
        ("filter[colour]=red", "filter[colour]"),
        ("sort=created_at", "sort"),
        ("refresh=yes", "refresh"),
        ("limit=501", "limit"),
    ],
)
async def test_a_malformed_query_names_its_parameter(
    admin_api: httpx.AsyncClient,
    site_admin: SiteAccount,
    remote_org: RemoteOrg,
    query: str,
    parameter: str,
) -> None:
    connection = await connect(admin_api, site_admin, remote_org.connection())
    refused = await remote_apis(admin_api, site_admin, connection["id"], query)
    assert refused.status_code == 400, refused.text
    assert [e["parameter"] for e in refused.json()["errors"]] == [parameter]


async def test_the_inventory_is_cached_five_minutes_and_refresh_reads_again(
    admin_api: httpx.AsyncClient, site_admin: SiteAccount, remote_org: RemoteOrg, clock: Clock
) -> None:
    await remote_org.api("One")
    connection = await connect(admin_api, site_admin, remote_org.connection())
    cid = connection["id"]
    assert titles(await remote_apis(admin_api, site_admin, cid)) == ["One"]

    await remote_org.api("Two")
    assert titles(await remote_apis(admin_api, site_admin, cid)) == ["One"]  # cached
    assert titles(await remote_apis(admin_api, site_admin, cid, "refresh=1")) == ["One", "Two"]
    await remote_org.api("Three")
    # the refresh refilled the cache: what it read is served, not the first answer
    assert titles(await remote_apis(admin_api, site_admin, cid, "refresh=0")) == ["One", "Two"]

    clock.advance(timedelta(minutes=5))
    assert titles(await remote_apis(admin_api, site_admin, cid)) == ["One", "Three", "Two"]


async def test_a_replaced_connection_is_not_served_what_its_former_remote_said(
    admin_api: httpx.AsyncClient,
    site_admin: SiteAccount,
    remote_org: RemoteOrg,
    steerable: Steerable,
) -> None:
    await remote_org.api("Kept")
    connection = await connect(admin_api, site_admin, remote_org.connection())
    assert titles(await remote_apis(admin_api, site_admin, connection["id"])) == ["Kept"]
    await remote_org.api("Added")
    # the same remote side through another address: a replacement, so read again
    steerable.board.upstream = remote_org.base_url
    replaced = await admin_api.put(
        url(f"{CONNECTIONS}/{connection['id']}"),
        json=remote_org.connection(base_url=steerable.base_url),
        headers=site_admin.headers,
    )
    assert replaced.status_code == 200, replaced.text
    assert titles(await remote_apis(admin_api, site_admin, connection["id"])) == [
        "Added",
        "Kept",
    ]


async def test_a_remote_that_fails_is_a_502_naming_the_connection(
    admin_api: httpx.AsyncClient,
    site_admin: SiteAccount,
    remote_org: RemoteOrg,
    database: Database,
) -> None:
    connection = await connect(admin_api, site_admin, remote_org.connection("doomed"))
    await remote_org.revoke_token()

    failed = await remote_apis(admin_api, site_admin, connection["id"], "refresh=1")
    assert failed.status_code == 502, failed.text
    assert failed.headers["content-type"] == "application/problem+json"
    problem = failed.json()
    assert problem["type"] == "/problems/gateway-connection-failed"
    assert f"gateway connection 'doomed' ({connection['id']})" in problem["detail"]
    assert "refused the token" in problem["detail"]
    assert remote_org.token not in failed.text
    assert await status_of(database, connection["id"]) is ConnectionStatus.FAILING

    # the import endpoints say the same, and import nothing
    imported = await admin_api.post(
        url(f"{CONNECTIONS}/{connection['id']}/apis/import/all"), headers=site_admin.headers
    )
    assert imported.status_code == 502, imported.text
    assert "'doomed'" in imported.json()["detail"]


async def test_5xx_are_retried_and_a_failing_connection_recovers(
    admin_api: httpx.AsyncClient,
    site_admin: SiteAccount,
    steerable: Steerable,
    database: Database,
) -> None:
    doc = {"openapi": "3.0.3", "info": {"title": "Flaky", "version": "1"}, "paths": {}}
    steerable.board.documents["/flaky.json"] = doc
    body = {
        "name": "flaky",
        "source": "openapi",
        "config": {"urls": [f"{steerable.base_url}/flaky.json"]},
    }
    connection = await connect(admin_api, site_admin, body)
    cid = connection["id"]

    steerable.board.failures["/flaky.json"] = 2  # the third attempt answers
    assert titles(await remote_apis(admin_api, site_admin, cid, "refresh=1")) == ["Flaky"]
    assert steerable.board.seen["/flaky.json"] == 4  # the check, then three attempts

    steerable.board.failures["/flaky.json"] = 3  # every attempt fails
    failed = await remote_apis(admin_api, site_admin, cid, "refresh=1")
    assert failed.status_code == 502, failed.text
    assert "answered 503" in failed.json()["detail"]
    assert await status_of(database, cid) is ConnectionStatus.FAILING
    got = await admin_api.get(url(f"{CONNECTIONS}/{cid}"), headers=site_admin.headers)
    assert got.json()["data"]["status"] == "failing"

    assert titles(await remote_apis(admin_api, site_admin, cid, "refresh=1")) == ["Flaky"]
    assert await status_of(database, cid) is ConnectionStatus.CONNECTED


async def test_an_unreachable_remote_is_a_502(
    admin_api: httpx.AsyncClient,
    site_admin: SiteAccount,
    steerable: Steerable,
    database: Database,
) -> None:
    """The connection was checked against a server that is gone since: refused (retried)."""
    steerable.board.documents["/gone.json"] = {
        "openapi": "3.0.3",
        "info": {"title": "Gone", "version": "1"},
        "paths": {},
    }
    connection = await connect(
        admin_api,
        site_admin,
        {
            "name": "gone",
            "source": "openapi",
            "config": {"urls": [f"{steerable.base_url}/gone.json"]},
        },
    )
    # the stored URL now names a port nothing listens on (written in the store directly:
    # the API would check it first)
    async with database.session() as session, session.begin():
        row = await session.get(GatewayConnection, uuid.UUID(connection["id"]))
        assert row is not None
        row.config = {"urls": ["http://127.0.0.1:9/gone.json"]}
    failed = await remote_apis(admin_api, site_admin, connection["id"], "refresh=1")
    assert failed.status_code == 502, failed.text
    assert "cannot connect to http://127.0.0.1:9/gone.json" in failed.json()["detail"]


async def test_the_remote_products_with_their_marks(
    admin_api: httpx.AsyncClient, site_admin: SiteAccount, remote_org: RemoteOrg
) -> None:
    first, second = await remote_org.api("First"), await remote_org.api("Second")
    quota = {"limit": 100, "interval": 1, "interval_unit": "minute", "key_scope": "app"}
    product = await remote_org.product("gold", [second, first], quota=quota)
    await remote_org.product("silver", [first])
    connection = await connect(admin_api, site_admin, remote_org.connection())
    path = url(f"{CONNECTIONS}/{connection['id']}/remote/products")

    listed = await admin_api.get(path, headers=site_admin.headers)
    assert titles(listed) == ["Gold", "Silver"]
    assert listed.json()["data"][0] == {
        "product_id": product,
        "uuid": product,
        "title": "Gold",
        "description": "the gold product",
        "quota": quota,
        "api_ids": [second, first],
        "imported": False,
        "node_id": None,
        "import_status": "new",
    }
    imported = await admin_api.post(
        url(f"{CONNECTIONS}/{connection['id']}/products/import"),
        json={"product_id": product},
        headers=site_admin.headers,
    )
    assert imported.status_code == 201, imported.text
    marked = await admin_api.get(
        path + "?filter[import_status]=existing", headers=site_admin.headers
    )
    assert [(p["title"], p["node_id"]) for p in marked.json()["data"]] == [
        ("Gold", imported.json()["data"]["id"])
    ]
    searched = await admin_api.get(path + "?filter[search]=silv", headers=site_admin.headers)
    assert titles(searched) == ["Silver"]


async def test_an_openapi_source_has_no_products(
    admin_api: httpx.AsyncClient, site_admin: SiteAccount, steerable: Steerable
) -> None:
    steerable.board.documents["/doc.json"] = {
        "openapi": "3.1.0",
        "info": {"title": "Doc", "version": "1"},
        "paths": {},
    }
    connection = await connect(
        admin_api,
        site_admin,
        {
            "name": "docs",
            "source": "openapi",
            "config": {"urls": [f"{steerable.base_url}/doc.json"]},
        },
    )
    base = f"{CONNECTIONS}/{connection['id']}"
    answers: list[Any] = [
        await admin_api.get(url(f"{base}/remote/products"), headers=site_admin.headers),
        await admin_api.post(
            url(f"{base}/products/import"), json={"product_id": "x"}, headers=site_admin.headers
        ),
        await admin_api.post(url(f"{base}/products/import/all"), headers=site_admin.headers),
    ]
    for answer in answers:
        assert answer.status_code == 409, answer.text
        assert answer.json()["type"] == "/problems/source-without-products"
        assert "openapi" in answer.json()["detail"]
    # what was imported from it: nothing, and that is an answer
    listed = await admin_api.get(url(f"{base}/products"), headers=site_admin.headers)
    assert listed.status_code == 200
    assert listed.json()["data"] == []


async def test_the_permissions_and_unknown_connections(
    admin_api: httpx.AsyncClient, site: SiteFactory, site_admin: SiteAccount
) -> None:
    editor = await site.account("marketplace_admin")
    for path in ("remote/apis", "remote/products"):
        refused = await admin_api.get(
            url(f"{CONNECTIONS}/{UNKNOWN_ID}/{path}"), headers=editor.headers
        )
        assert refused.status_code == 403, refused.text
        assert refused.json()["permission"] == "administer gateway sync"
        for connection in (UNKNOWN_ID, "not-a-uuid"):
            missing = await admin_api.get(
                url(f"{CONNECTIONS}/{connection}/{path}"), headers=site_admin.headers
            )
            assert missing.status_code == 404, missing.text
