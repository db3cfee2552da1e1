"""Fixtures of the organisations tests: organisations and teams as an installation holds
them, partner registrations as the portal will make them (``request_membership``), a
manager with the organisation permissions, and direct reads of the rows the endpoints
write."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from typing import Any

import httpx
import pytest
from sqlalchemy import select

from portico.core.account import AccountStatus, User
from portico.core.clock import Clock
from portico.core.db.engine import Database
from portico.core.mailer import Mailer
from portico.core.settings import Settings
from portico.marketplace.organisation import approvals as approval_service
from portico.marketplace.organisation.models import (
    MembershipStatus,
    Organisation,
    OrganisationMembership,
    Team,
    TeamMembership,
)
from tests.marketplace.conftest import SiteAccount, SiteFactory, url
from tests.support.smtpserver import SmtpServer

PUBLIC_URL = "https://portal.example.com/"

Rows = Callable[..., Coroutine[Any, Any, list[Any]]]


@pytest.fixture
def settings(settings: Settings) -> Settings:
    return settings.model_copy(update={"public_url": PUBLIC_URL})


@pytest.fixture
def rows(database: Database) -> Rows:
    """All rows of ``model`` matching ``where`` clauses, read in a fresh session."""

    async def read(model: type[Any], *where: Any) -> list[Any]:
        async with database.session() as session:
            return list(await session.scalars(select(model).where(*where)))

    return read


@dataclass
class Portal:
    """Writes what the endpoints under test only read: organisations, teams, people in
    teams, partner registrations."""

    database: Database
    site: SiteFactory
    clock: Clock

    async def organisation(self, name: str, domains: list[str] | None = None) -> uuid.UUID:
        async with self.database.session() as session, session.begin():
            organisation = Organisation(id=uuid.uuid4(), name=name, domains=domains or [])
            session.add(organisation)
        return organisation.id

    async def team(self, organisation_id: uuid.UUID, name: str) -> uuid.UUID:
        async with self.database.session() as session, session.begin():
            team = Team(id=uuid.uuid4(), organisation_id=organisation_id, name=name)
            session.add(team)
        return team.id

    async def registration(
        self,
        organisation_id: uuid.UUID,
        email: str,
        *,
        account: AccountStatus = AccountStatus.PENDING,
    ) -> tuple[SiteAccount, uuid.UUID]:
        """A partner registration naming the organisation: a pending relationship (and,
        by default, a pending account) as the portal will leave them."""
        person = await self.site.account(email=email, status=account)
        async with self.database.session() as session, session.begin():
            user = await session.get(User, person.id)
            assert user is not None
            membership = await approval_service.request_membership(
                session, user=user, organisation_id=organisation_id, now=self.clock.now()
            )
        return person, membership.id

    async def member(
        self, organisation_id: uuid.UUID, email: str, *teams: uuid.UUID
    ) -> tuple[SiteAccount, uuid.UUID]:
        """An active member (in ``teams``)."""
        person = await self.site.account(email=email)
        async with self.database.session() as session, session.begin():
            membership = OrganisationMembership(
                id=uuid.uuid4(),
                organisation_id=organisation_id,
                user_id=person.id,
                status=MembershipStatus.ACTIVE,
            )
            session.add(membership)
            await session.flush()
            for team in teams:
                session.add(TeamMembership(team_id=team, membership_id=membership.id))
        return person, membership.id


@pytest.fixture
def portal(database: Database, site: SiteFactory, clock: Clock) -> Portal:
    return Portal(database, site, clock)


@pytest.fixture
async def manager(site: SiteFactory) -> SiteAccount:
    """A marketplace administrator: the three organisation permissions, not every one."""
    return await site.account("marketplace_admin", email="manager@example.com")


@pytest.fixture
async def partner(portal: Portal) -> uuid.UUID:
    return await portal.organisation("Partner", ["partner.example.com"])


async def deliver(database: Database, clock: Clock, count: int) -> list[Any]:
    """Send what the outbox holds through a real SMTP server; the messages it received."""
    with SmtpServer() as server:
        await Mailer(database, clock, smtp_url=server.url).deliver_due()
        return await server.wait_for(count)


async def call(
    client: httpx.AsyncClient, who: SiteAccount, method: str, path: str, body: Any = None
) -> httpx.Response:
    return await client.request(method, url(path), json=body, headers=who.headers)
