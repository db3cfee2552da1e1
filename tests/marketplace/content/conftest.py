"""Fixtures of the content tests: catalogue rows and the callers that act on them."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from portico.core.db.engine import Database
from tests.marketplace.conftest import SiteAccount, SiteFactory
from tests.marketplace.content.catalogue import API_CLIENT, Catalogue, add_test_roles


@pytest.fixture(autouse=True)
def test_roles(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    yield from add_test_roles(monkeypatch)


@pytest.fixture
def catalogue(database: Database) -> Catalogue:
    return Catalogue(database)


@pytest.fixture
async def manager(site: SiteFactory) -> SiteAccount:
    """An API manager: every transition, every content permission, syndication too."""
    return await site.account("api_manager")


@pytest.fixture
async def editor(site: SiteFactory) -> SiteAccount:
    """A content editor (who drafts and submits) allowed to call the admin API."""
    return await site.account("content_editor", API_CLIENT)


@pytest.fixture
async def client_only(site: SiteFactory) -> SiteAccount:
    """The baseline permission and nothing else."""
    return await site.account(API_CLIENT)
