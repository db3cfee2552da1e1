"""On a route whose path names a portal organisation (``{group}``), the gate applies that
organisation's effective state: its override, else the platform's. No route of the installed
modules names one yet (the organisations module comes with issue 18's other parts), so a
probe route is put behind the ``content`` module's gate exactly as ``marketplace/app.py``
puts that module's own routers."""

from __future__ import annotations

import uuid
from typing import Annotated

import httpx
import pytest
from fastapi import APIRouter, Depends

from portico.marketplace.access import SiteCaller, require
from portico.marketplace.feature.gate import feature_gate
from portico.marketplace.modules import MODULES
from tests.marketplace.conftest import SiteAccount, marketplace_app, url

probe = APIRouter()


@probe.get("/organisations/{group}/probe")
async def probe_organisation(
    group: str, _caller: Annotated[SiteCaller, Depends(require())]
) -> dict[str, str]:
    return {"group": group}


@pytest.fixture
def gated_probe(app) -> None:  # type: ignore[no-untyped-def]
    (content,) = [m for m in MODULES if m.name == "content"]
    gate = feature_gate(content)
    marketplace_app(app).include_router(probe, dependencies=gate.dependencies)


async def test_the_organisation_in_the_path_decides_with_its_override(
    admin_api: httpx.AsyncClient,
    manager: SiteAccount,
    synced: None,
    gated_probe: None,
    owner_org: uuid.UUID,
    partner_org: uuid.UUID,
) -> None:
    async def probe_of(org: object) -> httpx.Response:
        return await admin_api.get(url(f"/organisations/{org}/probe"), headers=manager.headers)

    async def override(org: uuid.UUID, enabled: bool | None) -> None:
        response = await admin_api.patch(
            url(f"/organisations/{org}/features/content"),
            json={"enabled": enabled},
            headers=manager.headers,
        )
        assert response.status_code == 200, response.text

    assert (await probe_of(partner_org)).status_code == 200
    await override(partner_org, False)
    refused = await probe_of(partner_org)
    assert refused.status_code == 403
    assert refused.json()["type"] == "/problems/feature-disabled"
    assert refused.json()["feature"] == "content"
    assert (await probe_of(owner_org)).status_code == 200  # another organisation

    # off platform-wide: on for the partner only, whose override now says so
    off = await admin_api.patch(
        url("/features/content"), json={"enabled": False}, headers=manager.headers
    )
    assert off.status_code == 200
    await override(partner_org, True)
    assert (await probe_of(partner_org)).status_code == 200
    assert (await probe_of(owner_org)).status_code == 403
    assert (await probe_of("not-an-id")).status_code == 403  # names no organisation: platform

    await override(partner_org, None)  # cleared: the platform's state again
    assert (await probe_of(partner_org)).status_code == 403
