"""Fixtures of the catalogue's tests: accounts by what they may do, a gateway connection and a
second organisation as rows of the store, and small helpers that go through the API."""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from typing import Any

import httpx
import pytest
from sqlalchemy import select

from portico.core.audit import AuditEntry
from portico.core.clock import utcnow
from portico.core.db.engine import Database
from portico.marketplace.connection.models import ConnectionStatus, GatewayConnection
from portico.marketplace.organisation.models import PORTAL_OWNER, Organisation
from portico.marketplace.permissions import BASELINE, ROLES_BY_ID, SiteRole
from tests.marketplace.conftest import SiteAccount, SiteFactory, url

#: a role with the baseline permission and nothing else. No predefined site role holds the
#: baseline without every content permission (and the content editor lacks the baseline), so
#: what one content permission alone allows needs a role of the test's own: it is added to
#: the site roles for the test, as a role definition would be
API_USER = "test_api_user"
UNKNOWN_ID = "45058b31-fc55-4a58-82a5-dc21f78582b0"

OPENAPI_30 = {
    "openapi": "3.0.3",
    "info": {"title": "Orders", "version": "1.0.0"},
    "paths": {"/orders": {"get": {"responses": {"200": {"description": "the orders"}}}}},
}
OPENAPI_31_YAML = """\
openapi: 3.1.0
info:
  title: Payments
  version: "2.1"
components:
  schemas:
    Payment: {type: object}
"""


@pytest.fixture(autouse=True)
def api_user_role(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(
        ROLES_BY_ID, API_USER, SiteRole(API_USER, "API user (test)", 9, frozenset({BASELINE}))
    )


@pytest.fixture
async def editor(site: SiteFactory) -> SiteAccount:
    """A content editor who may call the admin API."""
    return await site.account("content_editor", API_USER)


@pytest.fixture
async def reader(site: SiteFactory) -> SiteAccount:
    """Signed in (``authenticated``: access content) with the baseline, nothing more."""
    return await site.account(API_USER)


@pytest.fixture
async def owner_org(database: Database) -> uuid.UUID:
    """The organisation every installation starts with."""
    async with database.session() as session:
        found = await session.scalar(
            select(Organisation.id).where(Organisation.name == PORTAL_OWNER)
        )
    assert found is not None
    return found


@pytest.fixture
async def other_org(database: Database) -> uuid.UUID:
    async with database.session() as session, session.begin():
        org = Organisation(id=uuid.uuid4(), name="Partner", domains=["partner.example.com"])
        session.add(org)
    return org.id


async def add_connection(database: Database, name: str = "remote") -> uuid.UUID:
    """A saved gateway connection, as ``POST /gateways/connections`` leaves one once its
    check passed (the catalogue reads only its id and source type)."""
    async with database.session() as session, session.begin():
        connection = GatewayConnection(
            id=uuid.uuid4(),
            name=name,
            source="portico",
            config={"base_url": "https://gateway.example.com", "org_id": str(uuid.uuid4())},
            status=ConnectionStatus.CONNECTED,
            last_checked=utcnow(),
        )
        session.add(connection)
    return connection.id


@pytest.fixture
async def connection(database: Database) -> uuid.UUID:
    return await add_connection(database)


async def post(
    client: httpx.AsyncClient, who: SiteAccount, path: str, body: Mapping[str, Any]
) -> dict[str, Any]:
    """Create through the API; the created node."""
    response = await client.post(url(path), json=dict(body), headers=who.headers)
    assert response.status_code == 201, response.text
    data: dict[str, Any] = response.json()["data"]
    return data


async def new_api(client: httpx.AsyncClient, who: SiteAccount, **body: Any) -> dict[str, Any]:
    return await post(client, who, "/apis", {"title": "Orders", **body})


async def new_product(client: httpx.AsyncClient, who: SiteAccount, **body: Any) -> dict[str, Any]:
    return await post(client, who, "/products", {"title": "Gold", **body})


def refused(response: httpx.Response, status: int = 400) -> dict[str, Any]:
    assert response.status_code == status, response.text
    assert response.headers["content-type"] == "application/problem+json"
    problem: dict[str, Any] = response.json()
    return problem


def pointers(response: httpx.Response) -> dict[str, str]:
    """The body fields a 400 names, with what it says of each."""
    return {e["pointer"]: e["detail"] for e in refused(response)["errors"]}


async def audit_entries(database: Database, *operations: str) -> list[AuditEntry]:
    async with database.session() as session:
        statement = select(AuditEntry).order_by(AuditEntry.occurred_at, AuditEntry.action)
        if operations:
            statement = statement.where(AuditEntry.action.in_(operations))
        return list(await session.scalars(statement))
