"""Fixtures of the subscription tests: the remote side (a real management service that can
be stopped and started again, and a real gateway fed by its store: ``harness.py``), a
gateway connection to it, the jobs worker and the retry schedule running as ``portico
serve`` runs them, and the accounts that act."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest

from portico.core.clock import Clock
from portico.core.db.engine import Database
from portico.core.job_worker import JobWorker
from portico.core.settings import Settings
from portico.marketplace import permissions
from portico.marketplace.node.models import Bundle
from portico.marketplace.permissions import BASELINE, SiteRole
from portico.marketplace.subscription.schedule import SubscriptionSchedule
from tests.conftest import DatabaseTemplate
from tests.marketplace.conftest import SiteAccount, SiteFactory, url
from tests.marketplace.connections.conftest import settings  # noqa: F401  (loopback allowed)
from tests.marketplace.subscriptions.harness import RemoteSide, published_node, remote_side

#: the baseline only
OUTSIDER = "subscriptions_outsider"
#: decides subscriptions, may not read their analytics
DECIDER = "subscriptions_decider"


@pytest.fixture(autouse=True)
def test_roles(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(
        permissions.ROLES_BY_ID, OUTSIDER, SiteRole(OUTSIDER, "Outsider", 9, frozenset({BASELINE}))
    )
    monkeypatch.setitem(
        permissions.ROLES_BY_ID,
        DECIDER,
        SiteRole(DECIDER, "Decider", 10, frozenset({BASELINE, "administer apim subscriptions"})),
    )


@pytest.fixture
async def manager(site: SiteFactory) -> SiteAccount:
    """An API manager: decides subscriptions and reads their analytics."""
    return await site.account("api_manager")


@pytest.fixture
async def developer(site: SiteFactory) -> SiteAccount:
    """A portal account (no admin API permission), owner of the apps."""
    return await site.account(email=f"dev-{uuid.uuid4().hex[:8]}@example.com")


@pytest.fixture
async def remote(db_template: DatabaseTemplate, tmp_path: Path) -> AsyncIterator[RemoteSide]:
    where = tmp_path / "remote"
    where.mkdir()
    database_url = db_template.new_url(where)
    try:
        async with remote_side(database_url, where) as side:
            yield side
    finally:
        db_template.drop(database_url)


@pytest.fixture
async def workers(
    database: Database,
    clock: Clock,
    settings: Settings,  # noqa: F811
) -> AsyncIterator[JobWorker]:
    """The jobs worker and the retry schedule, running in the background."""
    jobs = JobWorker(database, clock, settings=settings, poll_seconds=0.05)
    schedule = SubscriptionSchedule(database, clock, interval=0.1)
    jobs.start()
    schedule.start()
    try:
        yield jobs
    finally:
        await schedule.stop()
        await jobs.stop()


@pytest.fixture
async def connection_id(
    client: httpx.AsyncClient, site: SiteFactory, remote: RemoteSide
) -> uuid.UUID:
    syncer = await site.account("api_manager")
    created = await client.post(
        url("/gateways/connections"), json=remote.connection_body(), headers=syncer.headers
    )
    assert created.status_code == 201, created.text
    return uuid.UUID(created.json()["data"]["id"])


@pytest.fixture
async def api_node(database: Database, remote: RemoteSide, connection_id: uuid.UUID) -> uuid.UUID:
    """The remote API, imported and published."""
    return await published_node(
        database,
        bundle=Bundle.APIS,
        title="orders",
        connection_id=connection_id,
        remote_id=remote.api_id,
    )


@pytest.fixture
async def product_node(
    database: Database, remote: RemoteSide, connection_id: uuid.UUID
) -> uuid.UUID:
    """The remote product, imported and published."""
    return await published_node(
        database,
        bundle=Bundle.API_PRODUCTS,
        title="shop",
        connection_id=connection_id,
        remote_id=remote.product_id,
    )


@pytest.fixture
async def native_node(database: Database) -> uuid.UUID:
    """An API written in the portal: no gateway connection, nothing to provision."""
    return await published_node(
        database, bundle=Bundle.APIS, title="handbook", connection_id=None, remote_id=None
    )
