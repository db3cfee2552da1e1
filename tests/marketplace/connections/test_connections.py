"""Gateway connections to a real second Portico control plane (the ``portico`` connector):
saved only once the check passed, secrets write-only and sealed at rest, audited."""

from __future__ import annotations

import json
import uuid
from typing import Any

import httpx
import pytest
from sqlalchemy import select

from portico.core.audit import AuditEntry
from portico.core.db.engine import Database
from portico.core.sealing import secret_box
from portico.core.settings import Settings
from portico.marketplace.connection.models import GatewayConnection
from portico.marketplace.connection.service import secrets_box
from tests.marketplace.conftest import SiteAccount, SiteFactory, url
from tests.marketplace.connections.conftest import RemotePortico
from tests.support.ports import free_port

PERMISSION = "administer gateway sync"
CONNECTIONS = "/gateways/connections"
UNKNOWN_ID = "45058b31-fc55-4a58-82a5-dc21f78582b0"


def body(remote: RemotePortico, name: str = "remote", **config: Any) -> dict[str, Any]:
    return {
        "name": name,
        "source": "portico",
        "config": {
            "base_url": remote.base_url,
            "org_id": remote.org_id,
            "token": remote.token,
            **config,
        },
    }


async def create(
    client: httpx.AsyncClient, who: SiteAccount, payload: dict[str, Any]
) -> httpx.Response:
    return await client.post(url(CONNECTIONS), json=payload, headers=who.headers)


async def stored(database: Database) -> list[GatewayConnection]:
    async with database.session() as session:
        return list(await session.scalars(select(GatewayConnection)))


def refused_on(response: httpx.Response, field: str) -> str:
    assert response.status_code == 400, response.text
    problem = response.json()
    assert response.headers["content-type"] == "application/problem+json"
    assert problem["type"] == "/problems/connection-check-failed"
    assert problem["errors"] == [{"pointer": f"/config/{field}", "detail": problem["detail"]}]
    detail: str = problem["detail"]
    return detail


async def test_a_connection_is_saved_once_checked_with_its_secret_sealed(
    admin_api: httpx.AsyncClient,
    site_admin: SiteAccount,
    remote_portico: RemotePortico,
    database: Database,
    settings: Settings,
) -> None:
    created = await create(admin_api, site_admin, body(remote_portico))
    assert created.status_code == 201, created.text
    data = created.json()["data"]
    assert created.headers["location"] == f"/api/admin/v1{CONNECTIONS}/{data['id']}"
    assert data["config"] == {"base_url": remote_portico.base_url, "org_id": remote_portico.org_id}
    assert data["status"] == "connected"
    assert data["last_checked"] is not None
    assert remote_portico.token not in created.text

    got = await admin_api.get(url(f"{CONNECTIONS}/{data['id']}"), headers=site_admin.headers)
    assert got.json()["data"] == data
    listed = await admin_api.get(url(CONNECTIONS), headers=site_admin.headers)
    assert listed.json()["data"] == [data]
    assert remote_portico.token not in listed.text

    [row] = await stored(database)
    assert remote_portico.token not in row.sealed_secrets
    assert remote_portico.token not in json.dumps(row.config)
    opened = secrets_box(settings.signing_keys()).decrypt(row.sealed_secrets)
    with pytest.raises(ValueError, match="cannot be decrypted"):  # keys of their own
        secret_box(tuple(settings.signing_keys())).decrypt(row.sealed_secrets)
    assert json.loads(opened) == {"token": remote_portico.token}

    async with database.session() as session:
        entries = list(
            await session.scalars(
                select(AuditEntry).where(AuditEntry.action == "gateway_connection.create")
            )
        )
    assert [e.entity_id for e in entries] == [data["id"]]
    assert remote_portico.token not in json.dumps([e.after for e in entries])


async def test_a_token_the_remote_refuses_saves_nothing(
    admin_api: httpx.AsyncClient,
    site_admin: SiteAccount,
    remote_portico: RemotePortico,
    database: Database,
) -> None:
    wrong = "psa_" + "x" * 40
    refused = await create(admin_api, site_admin, body(remote_portico, token=wrong))
    assert "refused the token" in refused_on(refused, "token")
    assert wrong not in refused.text
    assert await stored(database) == []


async def test_a_token_without_api_read_is_named(
    admin_api: httpx.AsyncClient, site_admin: SiteAccount, remote_portico: RemotePortico
) -> None:
    refused = await create(
        admin_api, site_admin, body(remote_portico, token=remote_portico.token_without_api_read)
    )
    assert "api.read" in refused_on(refused, "token")


async def test_an_organisation_the_token_cannot_see(
    admin_api: httpx.AsyncClient, site_admin: SiteAccount, remote_portico: RemotePortico
) -> None:
    for org_id in (remote_portico.other_org_id, UNKNOWN_ID):
        refused = await create(admin_api, site_admin, body(remote_portico, org_id=org_id))
        assert f"no organisation {org_id}" in refused_on(refused, "org_id")


async def test_an_unreachable_management_service(
    admin_api: httpx.AsyncClient, site_admin: SiteAccount, remote_portico: RemotePortico
) -> None:
    closed = f"http://127.0.0.1:{free_port()}"  # nothing listens there
    refused = await create(admin_api, site_admin, body(remote_portico, base_url=closed))
    assert refused_on(refused, "base_url").startswith(f"cannot connect to {closed}/api/orgs/")


async def test_malformed_configurations_name_their_fields(
    admin_api: httpx.AsyncClient, site_admin: SiteAccount, remote_portico: RemotePortico
) -> None:
    payload = body(remote_portico, base_url="ftp://example.com", colour="red")
    del payload["config"]["token"]
    refused = await create(admin_api, site_admin, payload)
    assert refused.status_code == 400
    assert refused.json()["type"] == "/problems/validation"
    assert {e["pointer"]: e["detail"] for e in refused.json()["errors"]} == {
        "/config/colour": "unknown field; a portico connection takes base_url, org_id, token",
        "/config/base_url": "an absolute http(s) URL (no credentials in it)",
        "/config/token": "required",
    }
    unknown = await create(admin_api, site_admin, {**body(remote_portico), "source": "apigee"})
    assert unknown.json()["errors"][0]["pointer"] == "/source"


async def test_names_are_unique(
    admin_api: httpx.AsyncClient, site_admin: SiteAccount, remote_portico: RemotePortico
) -> None:
    assert (await create(admin_api, site_admin, body(remote_portico))).status_code == 201
    taken = await create(admin_api, site_admin, body(remote_portico))
    assert taken.status_code == 409
    assert taken.json()["detail"] == "a gateway connection is already named 'remote'"


async def test_testing_a_configuration_saves_nothing(
    admin_api: httpx.AsyncClient,
    site_admin: SiteAccount,
    remote_portico: RemotePortico,
    database: Database,
) -> None:
    check = {k: v for k, v in body(remote_portico).items() if k != "name"}
    passed = await admin_api.post(
        url(f"{CONNECTIONS}/test"), json=check, headers=site_admin.headers
    )
    assert passed.status_code == 200, passed.text
    assert passed.json()["data"]["ok"] is True
    check["config"]["token"] = "psa_" + "y" * 40
    failed = await admin_api.post(
        url(f"{CONNECTIONS}/test"), json=check, headers=site_admin.headers
    )
    assert failed.status_code == 200
    result = failed.json()["data"]
    assert (result["ok"], result["field"]) == (False, "token")
    assert "refused the token" in result["detail"]
    assert await stored(database) == []


async def test_replacing_needs_the_full_credentials(
    admin_api: httpx.AsyncClient, site_admin: SiteAccount, remote_portico: RemotePortico
) -> None:
    created = (await create(admin_api, site_admin, body(remote_portico))).json()["data"]
    path = url(f"{CONNECTIONS}/{created['id']}")
    partial = body(remote_portico, name="renamed")
    del partial["config"]["token"]
    refused = await admin_api.put(path, json=partial, headers=site_admin.headers)
    assert refused.status_code == 400
    assert refused.json()["errors"] == [{"pointer": "/config/token", "detail": "required"}]

    wrong = await admin_api.put(
        path, json=body(remote_portico, token="psa_" + "z" * 40), headers=site_admin.headers
    )
    refused_on(wrong, "token")
    other_source = {**body(remote_portico), "source": "openapi"}
    moved = await admin_api.put(path, json=other_source, headers=site_admin.headers)
    assert moved.json()["errors"][0]["pointer"] == "/source"

    replaced = await admin_api.put(
        path, json=body(remote_portico, name="renamed"), headers=site_admin.headers
    )
    assert replaced.status_code == 200, replaced.text
    assert replaced.json()["data"]["name"] == "renamed"
    assert (await admin_api.get(path, headers=site_admin.headers)).json()["data"]["name"] == (
        "renamed"
    )


async def test_a_stored_connection_is_tested_with_its_stored_token(
    admin_api: httpx.AsyncClient, site_admin: SiteAccount, remote_portico: RemotePortico
) -> None:
    created = (await create(admin_api, site_admin, body(remote_portico))).json()["data"]
    tested = await admin_api.post(
        url(f"{CONNECTIONS}/{created['id']}/test"), headers=site_admin.headers
    )
    assert tested.status_code == 200, tested.text
    assert tested.json()["data"]["ok"] is True
    after = await admin_api.get(url(f"{CONNECTIONS}/{created['id']}"), headers=site_admin.headers)
    assert after.json()["data"]["last_checked"] == created["last_checked"]  # persists nothing


async def test_deleting_a_connection(
    admin_api: httpx.AsyncClient,
    site_admin: SiteAccount,
    remote_portico: RemotePortico,
    database: Database,
) -> None:
    created = (await create(admin_api, site_admin, body(remote_portico))).json()["data"]
    path = url(f"{CONNECTIONS}/{created['id']}")
    deleted = await admin_api.delete(path, headers=site_admin.headers)
    assert deleted.status_code == 204
    assert (await admin_api.get(path, headers=site_admin.headers)).status_code == 404
    assert (await admin_api.delete(path, headers=site_admin.headers)).status_code == 404
    assert await stored(database) == []


async def test_unknown_and_malformed_ids_are_not_found(
    admin_api: httpx.AsyncClient, site_admin: SiteAccount
) -> None:
    for connection in (UNKNOWN_ID, "not-a-uuid"):
        for method, suffix in (("GET", ""), ("DELETE", ""), ("POST", "/test")):
            missing = await admin_api.request(
                method, url(f"{CONNECTIONS}/{connection}{suffix}"), headers=site_admin.headers
            )
            assert missing.status_code == 404, (method, suffix)
            assert missing.json()["detail"] == "gateway connection not found"


async def test_every_endpoint_needs_the_permission(
    admin_api: httpx.AsyncClient, site: SiteFactory
) -> None:
    manager = await site.account("marketplace_admin")
    some = f"{CONNECTIONS}/{uuid.UUID(UNKNOWN_ID)}"
    for method, path in (
        ("GET", CONNECTIONS),
        ("POST", CONNECTIONS),
        ("POST", f"{CONNECTIONS}/test"),
        ("GET", some),
        ("PUT", some),
        ("DELETE", some),
        ("POST", f"{some}/test"),
    ):
        denied = await admin_api.request(method, url(path), headers=manager.headers, json={})
        assert denied.status_code == 403, (method, path)
        assert denied.json()["detail"] == f"missing permission '{PERMISSION}'"


async def test_a_token_that_cannot_travel_in_http_is_never_echoed(
    admin_api: httpx.AsyncClient, site_admin: SiteAccount, remote_portico: RemotePortico
) -> None:
    for token in ("psa_secret\r\nX-Injected: 1", "psa_sécret"):
        refused = await create(admin_api, site_admin, body(remote_portico, token=token))
        assert "printable ASCII" in refused_on(refused, "token")
        assert "psa_s" not in refused.text
