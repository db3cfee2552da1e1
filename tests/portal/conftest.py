"""Fixtures of the developer portal API's tests: accounts with real ID tokens (the admin
API's, which the portal reads), and what the portal only reads written as an installation
holds it: catalogue nodes in a moderation state with their visibility and audiences,
organisations, teams and their members."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Coroutine, Sequence
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

import httpx
import pytest
from sqlalchemy import select

from portico.core.clock import Clock, utcnow
from portico.core.db.engine import Database
from portico.marketplace.node.models import (
    Bundle,
    CatalogueNode,
    ModerationState,
    NodeAudience,
    ProductApi,
    Visibility,
)
from portico.marketplace.organisation.models import (
    MembershipStatus,
    Organisation,
    OrganisationMembership,
    Team,
    TeamMembership,
)
from portico.portal.app import PREFIX
from tests.marketplace.conftest import SiteAccount, SiteFactory

Rows = Callable[..., Coroutine[Any, Any, list[Any]]]
DOCUMENT = {
    "openapi": "3.1.0",
    "info": {"title": "Pets", "version": "1.0.0"},
    "paths": {"/pets": {"get": {"responses": {"200": {"description": "ok"}}}}},
}


def url(path: str) -> str:
    return PREFIX + path


@pytest.fixture
def site(database: Database, app) -> SiteFactory:  # type: ignore[no-untyped-def]
    return SiteFactory(database, app)


@pytest.fixture
def rows(database: Database) -> Rows:
    """All rows of ``model`` matching ``where`` clauses, read in a fresh session."""

    async def read(model: type[Any], *where: Any) -> list[Any]:
        async with database.session() as session:
            return list(await session.scalars(select(model).where(*where)))

    return read


@dataclass(frozen=True)
class Audience:
    organisation: uuid.UUID
    team: uuid.UUID | None = None


@dataclass
class Catalogue:
    """Writes catalogue nodes, organisations, teams and members straight to the store."""

    database: Database
    site: SiteFactory
    clock: Clock

    async def node(
        self,
        title: str,
        *,
        bundle: Bundle = Bundle.APIS,
        visibility: Visibility = Visibility.PUBLIC,
        state: ModerationState = ModerationState.PUBLISHED,
        audiences: Sequence[Audience] = (),
        organisation: uuid.UUID | None = None,
        apis: Sequence[uuid.UUID] = (),
        age: int = 0,
    ) -> uuid.UUID:
        """A node; ``age`` seconds older than now (for the date orders)."""
        when = utcnow() - timedelta(seconds=age)
        node_id = uuid.uuid4()
        async with self.database.session() as session, session.begin():
            session.add(
                CatalogueNode(
                    id=node_id,
                    bundle=bundle,
                    title=title,
                    version="1.0",
                    overview=f"About {title}",
                    documentation=DOCUMENT if bundle is Bundle.APIS else None,
                    visibility=visibility,
                    moderation_state=state,
                    published=state is ModerationState.PUBLISHED,
                    organisation_id=organisation,
                    created_at=when,
                    updated_at=when,
                )
            )
            await session.flush()
            for audience in audiences:
                session.add(
                    NodeAudience(
                        id=uuid.uuid4(),
                        node_id=node_id,
                        organisation_id=audience.organisation,
                        team_id=audience.team,
                    )
                )
            for position, api in enumerate(apis):
                session.add(ProductApi(product_id=node_id, api_id=api, position=position))
        return node_id

    async def organisation(self, name: str) -> uuid.UUID:
        async with self.database.session() as session, session.begin():
            organisation = Organisation(id=uuid.uuid4(), name=name, domains=[])
            session.add(organisation)
        return organisation.id

    async def team(self, organisation_id: uuid.UUID, name: str) -> uuid.UUID:
        async with self.database.session() as session, session.begin():
            team = Team(id=uuid.uuid4(), organisation_id=organisation_id, name=name)
            session.add(team)
        return team.id

    async def member(
        self,
        organisation_id: uuid.UUID,
        *teams: uuid.UUID,
        email: str | None = None,
        status: MembershipStatus = MembershipStatus.ACTIVE,
        who: SiteAccount | None = None,
    ) -> SiteAccount:
        """A person in the organisation (active by default), in ``teams``."""
        person = who or await self.site.account(email=email)
        async with self.database.session() as session, session.begin():
            membership = OrganisationMembership(
                id=uuid.uuid4(),
                organisation_id=organisation_id,
                user_id=person.id,
                status=status,
            )
            session.add(membership)
            await session.flush()
            for team in teams:
                session.add(TeamMembership(team_id=team, membership_id=membership.id))
        return person


@pytest.fixture
def catalogue(database: Database, site: SiteFactory, clock: Clock) -> Catalogue:
    return Catalogue(database, site, clock)


async def get(
    client: httpx.AsyncClient, path: str, who: SiteAccount | None = None, **params: Any
) -> httpx.Response:
    return await client.get(url(path), params=params, headers=who.headers if who else {})


async def titles(
    client: httpx.AsyncClient, path: str, who: SiteAccount | None = None, **params: Any
) -> list[str]:
    response = await get(client, path, who, **params)
    assert response.status_code == 200, response.text
    return [item["title"] for item in response.json()["data"]]
