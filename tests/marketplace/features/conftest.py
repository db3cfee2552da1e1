"""Fixtures of the feature tests: control planes with a chosen set of modules on one store,
an account that manages features, and portal organisations."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import httpx
import pytest
from sqlalchemy import select

from portico.app import create_app
from portico.core.clock import Clock
from portico.core.db.engine import Database
from portico.core.settings import Settings
from portico.marketplace.organisation.models import PORTAL_OWNER, Organisation
from tests.marketplace.conftest import SiteAccount, SiteFactory, url

PERMISSION = "manage portal features"


@asynccontextmanager
async def installed(
    modules: list[str] | None, settings: Settings, database: Database, clock: Clock
) -> AsyncIterator[httpx.AsyncClient]:
    """A control plane on the same store with only ``modules`` installed (all: None)."""
    app = create_app(
        settings.model_copy(update={"marketplace_modules": modules}),
        database=database,
        clock=clock,
    )
    transport = httpx.ASGITransport(app=app, client=("127.0.0.1", 50000))
    async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as http:
        yield http


async def sync(client: httpx.AsyncClient, who: SiteAccount) -> dict[str, list[str]]:
    response = await client.post(url("/features/sync"), headers=who.headers)
    assert response.status_code == 200, response.text
    report: dict[str, list[str]] = response.json()["data"]
    return report


@pytest.fixture
async def manager(site: SiteFactory) -> SiteAccount:
    """The marketplace administrator role: it holds ``manage portal features``."""
    return await site.account("marketplace_admin")


@pytest.fixture
async def synced(admin_api: httpx.AsyncClient, manager: SiteAccount) -> None:
    """Every module's feature registered (what ``portico bootstrap`` leaves)."""
    await sync(admin_api, manager)


@pytest.fixture
async def owner_org(database: Database) -> uuid.UUID:
    async with database.session() as session:
        found = await session.scalar(
            select(Organisation.id).where(Organisation.name == PORTAL_OWNER)
        )
    assert found is not None
    return found


@pytest.fixture
async def partner_org(database: Database) -> uuid.UUID:
    async with database.session() as session, session.begin():
        org = Organisation(id=uuid.uuid4(), name="Partner", domains=["partner.example.com"])
        session.add(org)
    return org.id
