"""``/apps``: a developer's apps, the key shown by their creation and rotation and nowhere
else (no list, no read, no audit entry, no log line), and nobody else's app reachable."""

from __future__ import annotations

import logging
import uuid
from typing import Any

import httpx
import pytest

from portico.core.audit import AuditEntry
from portico.marketplace.developer_app.models import DeveloperApp
from tests.marketplace.conftest import SiteAccount, SiteFactory
from tests.portal.conftest import Rows, url


async def create(
    client: httpx.AsyncClient, who: SiteAccount, name: str, **body: Any
) -> httpx.Response:
    return await client.post(url("/apps"), json={"name": name, **body}, headers=who.headers)


def key_of(response: httpx.Response) -> str:
    [credential] = response.json()["data"]["credentials"]
    assert credential["type"] == "key-auth"
    key: str = credential["key"]
    return key


async def test_the_key_is_shown_at_creation_and_rotation_only(
    client: httpx.AsyncClient, site: SiteFactory, rows: Rows, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    ada = await site.account(email="ada@example.com")
    created = await create(client, ada, "Weather client", description="reads the weather")
    assert created.status_code == 201, created.text
    app = created.json()["data"]
    assert created.headers["location"] == f"/api/portal/v1/apps/{app['id']}"
    key = key_of(created)
    assert len(key) >= 32 and app["key_hint"] == key[:6]
    assert app["name"] == "Weather client" and app["description"] == "reads the weather"

    listed = await client.get(url("/apps"), headers=ada.headers)
    one = await client.get(url(f"/apps/{app['id']}"), headers=ada.headers)
    renamed = await client.patch(
        url(f"/apps/{app['id']}"), json={"name": "Forecasts"}, headers=ada.headers
    )
    for response in (listed, one, renamed):
        assert response.status_code == 200, response.text
        assert key not in response.text and "credentials" not in response.text
    assert [a["name"] for a in listed.json()["data"]] == ["Weather client"]
    assert listed.json()["meta"] == {"count": 1, "page": 1, "limit": 50, "pages": 1}
    assert renamed.json()["data"]["name"] == "Forecasts"

    rotated = await client.post(url(f"/apps/{app['id']}/credentials/rotate"), headers=ada.headers)
    assert rotated.status_code == 200, rotated.text
    new_key = key_of(rotated)
    assert new_key != key and rotated.json()["data"]["key_hint"] == new_key[:6]
    again = await client.get(url(f"/apps/{app['id']}"), headers=ada.headers)
    assert new_key not in again.text and again.json()["data"]["key_hint"] == new_key[:6]

    # kept sealed; neither key in the audit log nor in any log line
    [stored] = await rows(DeveloperApp, DeveloperApp.id == uuid.UUID(app["id"]))
    assert key not in stored.sealed_key and new_key not in stored.sealed_key
    events = await rows(AuditEntry, AuditEntry.entity_id == app["id"])
    assert sorted(e.action for e in events) == [
        "developer_app.create",
        "developer_app.rotate_key",
        "developer_app.update",
    ]
    assert all(e.actor_id == ada.id for e in events)
    for event in events:
        assert key not in str(event.before) + str(event.after)
        assert new_key not in str(event.before) + str(event.after)
    assert key not in caplog.text and new_key not in caplog.text


async def test_another_developers_app_is_not_found(
    client: httpx.AsyncClient, site: SiteFactory
) -> None:
    ada = await site.account(email="ada@example.com")
    grace = await site.account(email="grace@example.com")
    app_id = (await create(client, ada, "Ada's")).json()["data"]["id"]
    base = f"/apps/{app_id}"
    attempts = [
        ("GET", base, None),
        ("PATCH", base, {"name": "mine now"}),
        ("DELETE", base, None),
        ("POST", f"{base}/credentials/rotate", None),
        ("GET", f"{base}/analytics", None),
        ("GET", f"{base}/subscriptions", None),
        ("POST", f"{base}/subscriptions", {"api": str(uuid.uuid4())}),
        ("DELETE", f"{base}/subscriptions/{uuid.uuid4()}", None),
    ]
    for method, path, body in attempts:
        answer = await client.request(method, url(path), json=body, headers=grace.headers)
        assert answer.status_code == 404, (method, path, answer.text)
        assert answer.headers["content-type"] == "application/problem+json"
    assert (await client.get(url("/apps"), headers=grace.headers)).json()["data"] == []
    assert (await client.get(url("/apps/not-a-uuid"), headers=ada.headers)).status_code == 404
    still = await client.get(url(base), headers=ada.headers)
    assert still.status_code == 200 and still.json()["data"]["name"] == "Ada's"


async def test_names_updates_deletion_and_the_list_contract(
    client: httpx.AsyncClient, site: SiteFactory
) -> None:
    ada = await site.account(email="ada@example.com")
    first = (await create(client, ada, "b-app")).json()["data"]
    await create(client, ada, "a-app")
    taken = await create(client, ada, "b-app")
    assert taken.status_code == 409 and "b-app" in taken.json()["detail"]
    clash = await client.patch(
        url(f"/apps/{first['id']}"), json={"name": "a-app"}, headers=ada.headers
    )
    assert clash.status_code == 409

    described = await client.patch(
        url(f"/apps/{first['id']}"), json={"description": "now described"}, headers=ada.headers
    )
    assert described.status_code == 200
    assert described.json()["data"]["description"] == "now described"
    assert described.json()["data"]["name"] == "b-app"

    page = await client.get(url("/apps"), params={"limit": 1, "sort": "-name"}, headers=ada.headers)
    assert [a["name"] for a in page.json()["data"]] == ["b-app"]
    assert page.json()["meta"] == {"count": 2, "page": 1, "limit": 1, "pages": 2}
    for params in ({"sort": "key"}, {"filter[name]": "a"}, {"limit": "0"}, {"colour": "red"}):
        refused = await client.get(url("/apps"), params=params, headers=ada.headers)
        assert refused.status_code == 400, params
        assert refused.json()["errors"][0]["parameter"] == next(iter(params))

    for body, pointer in (
        ({"name": ""}, "/name"),
        ({"name": "ok", "colour": "red"}, "/colour"),
        ({"description": 3, "name": "x"}, "/description"),
    ):
        bad = await client.post(url("/apps"), json=body, headers=ada.headers)
        assert bad.status_code == 400, body
        assert [e["pointer"] for e in bad.json()["errors"]] == [pointer]

    deleted = await client.delete(url(f"/apps/{first['id']}"), headers=ada.headers)
    assert deleted.status_code == 204 and deleted.content == b""
    gone = await client.get(url(f"/apps/{first['id']}"), headers=ada.headers)
    assert gone.status_code == 404
    assert [
        a["name"] for a in (await client.get(url("/apps"), headers=ada.headers)).json()["data"]
    ] == ["a-app"]


async def test_signing_in_is_required(client: httpx.AsyncClient) -> None:
    for method, path in (("GET", "/apps"), ("POST", "/apps"), ("GET", f"/apps/{uuid.uuid4()}")):
        answer = await client.request(method, url(path), json={"name": "x"})
        assert answer.status_code == 401, (method, path)


async def test_the_usage_of_an_app_without_active_subscriptions(
    client: httpx.AsyncClient, site: SiteFactory
) -> None:
    ada = await site.account(email="ada@example.com")
    app_id = (await create(client, ada, "quiet")).json()["data"]["id"]
    usage = await client.get(url(f"/apps/{app_id}/analytics"), headers=ada.headers)
    assert usage.status_code == 200, usage.text
    assert usage.json() == {
        "data": {
            "window": "24h",
            "requests": 0,
            "errors": 0,
            "latency_ms": {"p50": None, "p95": None, "p99": None},
            "quota": {"limit": None, "used": None},
        }
    }
    week = await client.get(
        url(f"/apps/{app_id}/analytics"), params={"window": "7d"}, headers=ada.headers
    )
    assert week.json()["data"]["window"] == "7d"
    bad = await client.get(
        url(f"/apps/{app_id}/analytics"), params={"window": "1y"}, headers=ada.headers
    )
    assert bad.status_code == 400
    assert bad.json()["errors"][0]["parameter"] == "window"
