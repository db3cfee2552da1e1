"""Fixtures of the governance tests: API nodes with documents, the callers, a jobs worker."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from portico.core.clock import Clock
from portico.core.db.engine import Database
from portico.core.job_worker import JobWorker
from portico.core.settings import Settings
from portico.marketplace.node.models import Bundle, CatalogueNode, ModerationState
from tests.marketplace.conftest import SiteAccount, SiteFactory
from tests.marketplace.content.catalogue import API_CLIENT, EPOCH, Catalogue, add_test_roles


@pytest.fixture(autouse=True)
def test_roles(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    yield from add_test_roles(monkeypatch)


@pytest.fixture
async def manager(site: SiteFactory) -> SiteAccount:
    """An API manager: publishes, and reads governance."""
    return await site.account("api_manager")


@pytest.fixture
async def client_only(site: SiteFactory) -> SiteAccount:
    """The baseline permission and nothing else."""
    return await site.account(API_CLIENT)


@pytest.fixture
def worker(database: Database, clock: Clock, settings: Settings) -> JobWorker:
    """A jobs worker with the app's settings; tests run its jobs with ``run_next``."""
    return JobWorker(database, clock, settings=settings, poll_seconds=0.05)


async def api_node(
    database: Database,
    document: dict[str, Any] | None,
    *,
    title: str | None = None,
    state: ModerationState = ModerationState.IN_REVIEW,
    bundle: Bundle = Bundle.APIS,
) -> uuid.UUID:
    node = CatalogueNode(
        id=uuid.uuid4(),
        bundle=bundle,
        title=title or f"api {uuid.uuid4().hex[:8]}",
        documentation=document,
        moderation_state=state,
        published=state is ModerationState.PUBLISHED,
        created_at=EPOCH,
        updated_at=EPOCH,
    )
    async with database.session() as session, session.begin():
        session.add(node)
    return node.id


@pytest.fixture
def catalogue(database: Database) -> Catalogue:
    return Catalogue(database)
