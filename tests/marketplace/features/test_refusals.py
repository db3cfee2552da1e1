"""What the feature endpoints refuse: callers without ``manage portal features`` (403),
unknown features and organisations (404), bodies and filters that are not valid (400 naming
the field), and switching off what must stay on (409)."""

from __future__ import annotations

import uuid
from typing import Any

import httpx
import pytest

from tests.marketplace.conftest import SiteAccount, SiteFactory, url
from tests.marketplace.features.conftest import PERMISSION

BASELINE = "access marketplace admin api"
# fixed, not drawn at import: part of test ids, which every xdist worker must collect alike
UNKNOWN_ID = "6d1f3c55-0f0e-4f35-9a53-3d7f4e1c2b90"
ORG = "/organisations/{org}/features"
# permissions, validation and unknown ids: nothing here reads differently on another store
pytestmark = pytest.mark.store_agnostic

# (method, path, body); {org} is the portal owner's organisation
ENDPOINTS = [
    ("GET", "/features", None),
    ("POST", "/features/sync", None),
    ("GET", "/features/content", None),
    ("PATCH", "/features/content", {"enabled": False}),
    ("GET", ORG, None),
    ("PATCH", ORG + "/content", {"enabled": False}),
]


@pytest.mark.parametrize(("method", "path", "body"), ENDPOINTS)
async def test_the_permission_is_required(
    admin_api: httpx.AsyncClient,
    site: SiteFactory,
    synced: None,
    owner_org: uuid.UUID,
    method: str,
    path: str,
    body: dict[str, Any] | None,
) -> None:
    target = url(path.format(org=owner_org))
    anonymous = await admin_api.request(method, target, json=body)
    assert anonymous.status_code == 401

    plain = await site.account("content_editor")  # no baseline
    denied = await admin_api.request(method, target, json=body, headers=plain.headers)
    assert denied.status_code == 403
    assert denied.json()["detail"] == f"missing permission '{BASELINE}'"

    lacking = await site.account("api_manager")  # the baseline, not the permission
    denied = await admin_api.request(method, target, json=body, headers=lacking.headers)
    assert denied.status_code == 403
    assert denied.json()["type"] == "/problems/permission-denied"
    assert denied.json()["permission"] == PERMISSION

    allowed = await site.account("marketplace_admin")
    answer = await admin_api.request(method, target, json=body, headers=allowed.headers)
    assert answer.status_code == 200, answer.text


@pytest.mark.parametrize(
    ("method", "path", "body"),
    [
        ("GET", "/features/nothing", None),
        ("PATCH", "/features/nothing", {"enabled": True}),
        ("PATCH", ORG + "/nothing", {"enabled": True}),
        ("GET", f"/organisations/{UNKNOWN_ID}/features", None),
        ("PATCH", f"/organisations/{UNKNOWN_ID}/features/content", {"enabled": True}),
        ("GET", "/organisations/not-a-uuid/features", None),
        ("PATCH", "/organisations/not-a-uuid/features/content", {"enabled": True}),
    ],
)
async def test_unknown_features_and_organisations_are_404(
    admin_api: httpx.AsyncClient,
    manager: SiteAccount,
    synced: None,
    owner_org: uuid.UUID,
    method: str,
    path: str,
    body: dict[str, Any] | None,
) -> None:
    answer = await admin_api.request(
        method, url(path.format(org=owner_org)), json=body, headers=manager.headers
    )
    assert answer.status_code == 404, answer.text
    assert answer.json()["type"] == "/problems/not-found"


@pytest.mark.parametrize(
    ("key", "body", "pointer"),
    [
        ("content", {"enabled": "no"}, "/enabled"),
        ("content", {"enabled": None, "config": None}, "/enabled"),
        ("content", {"config": None}, "/config"),
        ("content", {}, ""),
        ("content", {"colour": "blue"}, "/colour"),
        ("content", {"config": []}, "/config"),
        ("content", {"config": {"disabled_notice": 5}}, "/config/disabled_notice"),
        ("content", {"config": {"disabled_notice": ""}}, "/config/disabled_notice"),
        ("content", {"config": {"disabled_notice": "x" * 501}}, "/config/disabled_notice"),
        ("content", {"config": {"colour": "blue"}}, "/config/colour"),
        ("admin_api", {"config": {"anything": 1}}, "/config"),
    ],
)
async def test_bad_feature_bodies_are_400_naming_the_field(
    admin_api: httpx.AsyncClient,
    manager: SiteAccount,
    synced: None,
    key: str,
    body: dict[str, Any],
    pointer: str,
) -> None:
    before = (await admin_api.get(url(f"/features/{key}"), headers=manager.headers)).json()
    answer = await admin_api.patch(url(f"/features/{key}"), json=body, headers=manager.headers)
    assert answer.status_code == 400, answer.text
    problem = answer.json()
    assert answer.headers["content-type"] == "application/problem+json"
    assert problem["errors"][0]["pointer"] == pointer, problem
    after = (await admin_api.get(url(f"/features/{key}"), headers=manager.headers)).json()
    assert after == before  # nothing half-written


@pytest.mark.parametrize(
    ("body", "pointer"),
    [
        ({}, "/enabled"),
        ({"enabled": "off"}, "/enabled"),
        ({"enabled": 0}, "/enabled"),
        ({"enabled": True, "reason": "x"}, "/reason"),
    ],
)
async def test_bad_override_bodies_are_400_naming_the_field(
    admin_api: httpx.AsyncClient,
    manager: SiteAccount,
    synced: None,
    owner_org: uuid.UUID,
    body: dict[str, Any],
    pointer: str,
) -> None:
    answer = await admin_api.patch(
        url(f"/organisations/{owner_org}/features/content"), json=body, headers=manager.headers
    )
    assert answer.status_code == 400, answer.text
    assert answer.json()["errors"][0]["pointer"] == pointer


@pytest.mark.parametrize(
    ("query", "parameter"),
    [
        ("?filter[enabled]=yes", "filter[enabled]"),
        ("?filter[installed]=1", "filter[installed]"),
        ("?filter[colour]=blue", "filter[colour]"),
        ("?sort=colour", "sort"),
        ("?limit=501", "limit"),
    ],
)
async def test_bad_list_queries_are_400_naming_the_parameter(
    admin_api: httpx.AsyncClient,
    manager: SiteAccount,
    owner_org: uuid.UUID,
    query: str,
    parameter: str,
) -> None:
    for path in ("/features", f"/organisations/{owner_org}/features"):
        answer = await admin_api.get(url(path + query), headers=manager.headers)
        assert answer.status_code == 400, answer.text
        assert answer.json()["errors"][0]["parameter"] == parameter


@pytest.mark.parametrize("key", ["admin_api", "features"])
async def test_what_must_stay_on_cannot_be_switched_off(
    admin_api: httpx.AsyncClient,
    manager: SiteAccount,
    synced: None,
    owner_org: uuid.UUID,
    key: str,
) -> None:
    platform = await admin_api.patch(
        url(f"/features/{key}"), json={"enabled": False}, headers=manager.headers
    )
    assert platform.status_code == 409, platform.text
    assert platform.json()["detail"].startswith(f"feature '{key}' can never be switched off: ")
    override = await admin_api.patch(
        url(f"/organisations/{owner_org}/features/{key}"),
        json={"enabled": False},
        headers=manager.headers,
    )
    assert override.status_code == 409, override.text
    # switching on (a no-op) is fine, and the features are still on
    on = await admin_api.patch(
        url(f"/features/{key}"), json={"enabled": True}, headers=manager.headers
    )
    assert on.status_code == 200
    assert on.json()["data"]["enabled"] is True
    assert (await admin_api.get(url("/features"), headers=manager.headers)).status_code == 200
