"""The ``openapi`` connector against documents served over HTTP on loopback, and the SSRF
guard on every URL a connection names: internal addresses refused unless allow-listed
(``PORTICO_MARKETPLACE_EGRESS_ALLOW``), redirects checked like the first URL, the
installation's own control plane reachable by default."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import httpx
import pytest

from portico.app import create_app
from portico.core.clock import Clock
from portico.core.db.engine import Database
from portico.core.settings import Settings
from tests.marketplace.conftest import SiteAccount, SiteFactory, url
from tests.marketplace.connections.conftest import (
    GATE,
    DocumentServers,
    RemotePortico,
    app_settings,
)
from tests.support.waiting import eventually

CONNECTIONS = "/gateways/connections"


def documents_body(*urls: str, name: str = "documents") -> dict[str, Any]:
    return {"name": name, "source": "openapi", "config": {"urls": list(urls)}}


async def create(
    client: httpx.AsyncClient, who: SiteAccount, payload: dict[str, Any]
) -> httpx.Response:
    return await client.post(url(CONNECTIONS), json=payload, headers=who.headers)


def refusal(response: httpx.Response, field: str) -> str:
    assert response.status_code == 400, response.text
    problem = response.json()
    assert problem["type"] == "/problems/connection-check-failed"
    assert problem["errors"][0]["pointer"] == f"/config/{field}"
    detail: str = problem["detail"]
    return detail


async def test_openapi_3_0_json_and_3_1_yaml_documents(
    admin_api: httpx.AsyncClient, site_admin: SiteAccount, documents: DocumentServers
) -> None:
    urls = [f"{documents.base_url}/orders.json", f"{documents.base_url}/payments.yaml"]
    created = await create(admin_api, site_admin, documents_body(*urls))
    assert created.status_code == 201, created.text
    assert created.json()["data"]["config"] == {"urls": urls}


@pytest.mark.parametrize(
    ("path", "why"),
    [
        ("/broken.yaml", "is not an OpenAPI 3.0/3.1 document: not valid JSON or YAML"),
        ("/swagger.json", "is not an OpenAPI 3.0/3.1 document: no 'openapi'"),
        ("/missing.json", "answered 404"),
    ],
)
async def test_documents_that_are_not_openapi_3(
    admin_api: httpx.AsyncClient,
    site_admin: SiteAccount,
    documents: DocumentServers,
    path: str,
    why: str,
) -> None:
    good = f"{documents.base_url}/orders.json"
    bad = f"{documents.base_url}{path}"
    refused = await create(admin_api, site_admin, documents_body(good, bad))
    detail = refusal(refused, "urls")
    assert detail.startswith(f"{bad} {why}"), detail


@pytest.mark.parametrize(
    ("target", "why"),
    [
        ("http://169.254.169.254/latest/meta-data/", "169.254.169.254, an internal address"),
        ("http://[::ffff:169.254.169.254]/latest/", "an internal address"),
        ("http://10.0.0.1/openapi.json", "10.0.0.1, an internal address"),
        ("http://192.168.1.20:8080/openapi.json", "192.168.1.20, an internal address"),
        ("http://[::1]:1/openapi.json", "::1, an internal address"),
    ],
)
async def test_internal_addresses_are_refused_even_with_loopback_allowed(
    admin_api: httpx.AsyncClient, site_admin: SiteAccount, target: str, why: str
) -> None:
    """The app under test allows 127.0.0.1/32 only: metadata, private ranges and the IPv6
    loopback stay refused."""
    refused = await create(admin_api, site_admin, documents_body(target))
    detail = refusal(refused, "urls")
    assert detail.startswith(f"{target} may not be reached: "), detail
    assert why in detail


async def test_loopback_is_refused_without_the_allow_list(
    strict_client: httpx.AsyncClient,
    site_admin: SiteAccount,
    documents: DocumentServers,
    remote_portico: RemotePortico,
) -> None:
    good = f"{documents.base_url}/orders.json"
    refused = await create(strict_client, site_admin, documents_body(good))
    assert "127.0.0.1, an internal address" in refusal(refused, "urls")
    portico = {
        "name": "remote",
        "source": "portico",
        "config": {
            "base_url": remote_portico.base_url,
            "org_id": remote_portico.org_id,
            "token": remote_portico.token,
        },
    }
    refused = await create(strict_client, site_admin, portico)
    assert "127.0.0.1, an internal address" in refusal(refused, "base_url")
    tested = await strict_client.post(
        url(f"{CONNECTIONS}/test"),
        json={"source": "openapi", "config": {"urls": [good]}},
        headers=site_admin.headers,
    )
    assert tested.json()["data"]["ok"] is False


async def test_a_redirect_is_checked_like_the_first_url(
    settings: Settings,
    database: Database,
    clock: Clock,
    site_admin: SiteAccount,
    documents: DocumentServers,
) -> None:
    """Only 127.0.0.2 is allowed: a document there that redirects to 127.0.0.1 is refused
    at the redirect, and one that redirects within 127.0.0.2 is followed."""
    only_other = settings.model_copy(update={"marketplace_egress_allow": ["127.0.0.2/32"]})
    app = create_app(only_other, database=database, clock=clock)
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=app), base_url="http://testserver"
    ) as client:
        into_loopback = f"{documents.other_base_url}/redirect?to={documents.base_url}/orders.json"
        refused = await create(client, site_admin, documents_body(into_loopback))
        detail = refusal(refused, "urls")
        assert "127.0.0.1, an internal address" in detail

        within = f"{documents.other_base_url}/redirect?to=/orders.json"
        created = await create(client, site_admin, documents_body(within))
        assert created.status_code == 201, created.text


async def test_the_installations_own_control_plane_is_reachable_by_default(
    database_url: str,
    tmp_path: Path,
    database: Database,
    clock: Clock,
    remote_portico: RemotePortico,
) -> None:
    """No allow-list; the control plane's own listening address is the remote one (its ID
    tokens name that address as issuer: the administrator signs in to this app)."""
    listen = remote_portico.base_url.removeprefix("http://")
    own = app_settings(database_url, tmp_path, listen=listen)
    app = create_app(own, database=database, clock=clock)
    site_admin = await SiteFactory(database, app).account(platform_admin=True)
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=app), base_url="http://testserver"
    ) as client:
        created = await create(
            client,
            site_admin,
            {
                "name": "self",
                "source": "portico",
                "config": {
                    "base_url": remote_portico.base_url,
                    "org_id": remote_portico.org_id,
                    "token": remote_portico.token,
                },
            },
        )
        assert created.status_code == 201, created.text


async def test_a_connection_deleted_while_its_replacement_is_checked_is_not_found(
    admin_api: httpx.AsyncClient, site_admin: SiteAccount, documents: DocumentServers
) -> None:
    """The replacement's check runs outside any transaction: a delete can land meanwhile, and
    the replacement then answers 404, not an error writing to a row that is gone."""
    created = await create(
        admin_api, site_admin, documents_body(f"{documents.base_url}/orders.json")
    )
    assert created.status_code == 201, created.text
    path = url(f"{CONNECTIONS}/{created.json()['data']['id']}")
    GATE.reset()
    try:
        replacing = asyncio.create_task(
            admin_api.put(
                path,
                json=documents_body(f"{documents.base_url}/held.json"),
                headers=site_admin.headers,
            )
        )
        await eventually(GATE.arrived.is_set, what="the replacement's check reached the remote")
        deleted = await admin_api.delete(path, headers=site_admin.headers)
        assert deleted.status_code == 204, deleted.text
        GATE.opened.set()
        replaced = await replacing
    finally:
        GATE.opened.set()
    assert replaced.status_code == 404, replaced.text
    assert (await admin_api.get(path, headers=site_admin.headers)).status_code == 404
