"""A feature switched off really switches its module's endpoints off (403
``/problems/feature-disabled``, naming it) until it is switched on again; organisations'
overrides beat the platform state, and clearing one falls back to it."""

from __future__ import annotations

import uuid
from typing import Any

import httpx
import pytest
from sqlalchemy import select

from portico.core.audit import AuditEntry
from portico.core.db.engine import Database
from portico.marketplace.feature import service as feature_service
from tests.marketplace.conftest import SiteAccount, SiteFactory, url


async def switch(
    client: httpx.AsyncClient, who: SiteAccount, key: str, **body: Any
) -> dict[str, Any]:
    response = await client.patch(url(f"/features/{key}"), json=body, headers=who.headers)
    assert response.status_code == 200, response.text
    data: dict[str, Any] = response.json()["data"]
    return data


def disabled(response: httpx.Response, feature: str) -> dict[str, Any]:
    assert response.status_code == 403, response.text
    assert response.headers["content-type"] == "application/problem+json"
    problem: dict[str, Any] = response.json()
    assert problem["type"] == "/problems/feature-disabled"
    assert problem["feature"] == feature
    assert f"feature '{feature}'" in problem["detail"]
    return problem


@pytest.mark.parametrize(
    ("feature", "path"),
    [
        ("audit", "/events"),
        ("user", "/users"),
        ("notification", "/notifications"),
        ("content", "/apis"),
        ("gateway_sync", "/gateways/connections"),
    ],
)
async def test_a_disabled_feature_answers_the_problem_and_works_again_when_enabled(
    admin_api: httpx.AsyncClient,
    site_admin: SiteAccount,
    synced: None,
    feature: str,
    path: str,
) -> None:
    assert (await admin_api.get(url(path), headers=site_admin.headers)).status_code == 200

    assert (await switch(admin_api, site_admin, feature, enabled=False))["enabled"] is False
    disabled(await admin_api.get(url(path), headers=site_admin.headers), feature)
    # an anonymous caller is told to authenticate, and learns nothing of the feature
    assert (await admin_api.get(url(path))).status_code == 401

    assert (await switch(admin_api, site_admin, feature, enabled=True))["enabled"] is True
    assert (await admin_api.get(url(path), headers=site_admin.headers)).status_code == 200


async def test_every_route_of_the_module_is_off_not_only_its_lists(
    admin_api: httpx.AsyncClient, site_admin: SiteAccount, synced: None
) -> None:
    await switch(admin_api, site_admin, "audit", enabled=False)
    for path in ("/events", "/events/stats", "/events/types", "/events/export"):
        disabled(await admin_api.get(url(path), headers=site_admin.headers), "audit")
    # a write is refused before anything is done: reject a pending account with user off
    await switch(admin_api, site_admin, "user", enabled=False)
    answer = await admin_api.post(
        url(f"/users/{uuid.uuid4()}/reject"), json={"reason": "no"}, headers=site_admin.headers
    )
    disabled(answer, "user")
    # the other modules are untouched
    assert (await admin_api.get(url("/apis"), headers=site_admin.headers)).status_code == 200


async def test_the_disabled_notice_of_the_settings_is_given(
    admin_api: httpx.AsyncClient, site_admin: SiteAccount, synced: None
) -> None:
    notice = "back on Monday; meanwhile see the status page"
    updated = await switch(
        admin_api, site_admin, "audit", enabled=False, config={"disabled_notice": notice}
    )
    assert updated["config"] == {"disabled_notice": notice}
    problem = disabled(await admin_api.get(url("/events"), headers=site_admin.headers), "audit")
    assert problem["detail"] == f"feature 'audit' is switched off: {notice}"

    cleared = await switch(admin_api, site_admin, "audit", config={})
    assert cleared["config"] == {}
    assert cleared["enabled"] is False  # config alone leaves the state as it was
    problem = disabled(await admin_api.get(url("/events"), headers=site_admin.headers), "audit")
    assert problem["detail"] == "feature 'audit' is switched off"


async def test_features_not_yet_synced_are_on(
    admin_api: httpx.AsyncClient, site_admin: SiteAccount
) -> None:
    assert (await admin_api.get(url("/events"), headers=site_admin.headers)).status_code == 200
    unknown = await admin_api.get(url("/features/audit"), headers=site_admin.headers)
    assert unknown.status_code == 404
    assert "POST /features/sync" in unknown.json()["detail"]


async def test_the_problem_has_a_page(admin_api: httpx.AsyncClient) -> None:
    page = await admin_api.get("/problems/feature-disabled", headers={"Accept": "application/json"})
    assert page.status_code == 200, page.text
    assert "manage portal features" in page.text


async def test_an_organisation_override_beats_the_platform_and_clearing_falls_back(
    admin_api: httpx.AsyncClient,
    manager: SiteAccount,
    synced: None,
    owner_org: uuid.UUID,
    partner_org: uuid.UUID,
    database: Database,
) -> None:
    base = f"/organisations/{partner_org}/features"

    async def effective(org: uuid.UUID = partner_org) -> dict[str, dict[str, Any]]:
        response = await admin_api.get(
            url(f"/organisations/{org}/features"), headers=manager.headers
        )
        assert response.status_code == 200, response.text
        return {f["key"]: f for f in response.json()["data"]}

    content = (await effective())["content"]
    assert content == {
        "key": "content",
        "label": "Catalogue and content",
        "installed": True,
        "enabled": True,
        "source": "platform",
        "platform_enabled": True,
        "override": None,
    }

    async def override(enabled: bool | None) -> dict[str, Any]:
        response = await admin_api.patch(
            url(f"{base}/content"), json={"enabled": enabled}, headers=manager.headers
        )
        assert response.status_code == 200, response.text
        data: dict[str, Any] = response.json()["data"]
        return data

    # off for the partner only
    off = await override(False)
    assert (off["enabled"], off["source"], off["override"]) == (False, "override", False)
    assert (await effective())["content"]["enabled"] is False
    assert (await effective(owner_org))["content"]["enabled"] is True
    async with database.session() as session:
        assert (
            await feature_service.is_enabled(session, "content", organisation_id=partner_org)
            is False
        )
        assert (
            await feature_service.is_enabled(session, "content", organisation_id=owner_org) is True
        )
        assert await feature_service.is_enabled(session, "content") is True

    # the platform switches it off; the partner's override says on, and wins
    await switch(admin_api, manager, "content", enabled=False)
    on = await override(True)
    assert (on["enabled"], on["source"], on["platform_enabled"]) == (True, "override", False)
    assert (await effective(owner_org))["content"]["enabled"] is False
    listed = await admin_api.get(
        url(f"{base}?filter[enabled]=true&filter[installed]=true"), headers=manager.headers
    )
    assert "content" in [f["key"] for f in listed.json()["data"]]
    listed = await admin_api.get(
        url(f"/organisations/{owner_org}/features?filter[enabled]=false"), headers=manager.headers
    )
    assert [f["key"] for f in listed.json()["data"]] == ["content"]

    # cleared: the platform's state applies again
    cleared = await override(None)
    assert cleared == {**content, "enabled": False, "platform_enabled": False}
    assert (await effective())["content"]["source"] == "platform"
    again = await override(None)  # clearing nothing changes nothing
    assert again == cleared

    async with database.session() as session:
        entries = list(
            await session.scalars(
                select(AuditEntry).where(AuditEntry.entity_type == "organisation")
            )
        )
    assert sorted(e.action for e in entries) == [
        "feature_override.clear",
        "feature_override.set",
        "feature_override.set",
    ]
    assert all(e.entity_id == str(partner_org) for e in entries)
    changes = {(e.action, e.before["enabled"], e.after["enabled"]) for e in entries}
    assert changes == {
        ("feature_override.set", True, False),
        ("feature_override.set", False, True),
        ("feature_override.clear", True, False),
    }


async def test_platform_changes_are_audited_with_before_and_after(
    admin_api: httpx.AsyncClient, site_admin: SiteAccount, synced: None, database: Database
) -> None:
    await switch(admin_api, site_admin, "notification", enabled=False)
    await switch(admin_api, site_admin, "notification", enabled=False)  # no change, no entry
    async with database.session() as session:
        entries = list(
            await session.scalars(select(AuditEntry).where(AuditEntry.action == "feature.update"))
        )
    assert len(entries) == 1
    entry = entries[0]
    assert entry.entity_id == "notification"
    assert entry.actor_id == site_admin.id
    assert entry.module == "features"
    assert entry.before["enabled"] is True
    assert entry.after["enabled"] is False


async def test_the_openapi_document_describes_the_gate(
    admin_api: httpx.AsyncClient, site_admin: SiteAccount
) -> None:
    document = (await admin_api.get(url("/openapi.json"), headers=site_admin.headers)).json()
    gated = document["paths"]["/events"]["get"]["responses"]["403"]["description"]
    assert "feature `audit`" in gated
    assert "feature-disabled" in gated
    assert "feature" in document["components"]["schemas"]["Problem"]["properties"]
    mine = document["paths"]["/features"]["get"]["responses"]["403"]["description"]
    assert "feature-disabled" not in mine  # the features module is always on
    patch = document["paths"]["/features/{feature_key}"]["patch"]["responses"]
    assert "409" in patch
    assert (
        "409"
        in document["paths"]["/organisations/{gid}/features/{feature_key}"]["patch"]["responses"]
    )


async def test_the_sign_in_is_never_gated(
    admin_api: httpx.AsyncClient, site: SiteFactory, synced: None
) -> None:
    # token issuance is off without a web API key: a 503 from the endpoint itself, not a 403
    answer = await admin_api.post(
        url("/auth/token"), json={"email": "a@example.com", "password": "x"}
    )
    assert answer.status_code in (401, 503)
    assert answer.json()["type"] != "/problems/feature-disabled"
