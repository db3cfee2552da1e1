"""The catalogue's count reads the state index alone, for every kind of caller.

Counting what a caller may see tests each published node's visibility (and, for a member,
its audience): with the visibility in ``ix_catalogue_nodes_bundle_state_visibility`` (node/
models.py) the count never reads a row. Without it, 100,000 nodes cost 50 to 150 ms a page
(bench/bench_portal_catalogue.py). A change of the condition's shape, or of the index, that
makes the store read rows again fails here: a few thousand nodes with their statistics are
enough for either planner to prefer the index when it covers the query.
"""

from __future__ import annotations

import random
import uuid
from typing import Any

import pytest
from sqlalchemy import insert
from sqlalchemy.ext.asyncio import AsyncSession

from portico.core.db.engine import Database
from portico.core.pagination import ListQuery, SortKey
from portico.marketplace.catalogue.repository import NodeFilters
from portico.marketplace.node.models import (
    Bundle,
    CatalogueNode,
    ModerationState,
    NodeAudience,
    SourceType,
    Visibility,
)
from portico.marketplace.organisation.models import Organisation, Team
from portico.marketplace.storefront.repository import ANONYMOUS, StorefrontRepository, Viewer
from tests.support.query_plans import (
    IssuedStatements,
    load_analyzed,
    plan_of,
    read_from_index_alone,
)

INDEX = "ix_catalogue_nodes_bundle_state_visibility"
NODES = 4_000
OVERVIEW = "Orders, payments and refunds of the shop, with their webhooks. " * 6


async def _catalogue(database: Database) -> tuple[uuid.UUID, uuid.UUID]:
    """``NODES`` API nodes in the bench's mix, an audience row per organisation-visible node,
    statistics gathered; the organisation and its team."""
    rng = random.Random(5)
    organisation, team = uuid.uuid4(), uuid.uuid4()
    states = list(ModerationState)
    nodes: list[dict[str, Any]] = []
    audiences: list[dict[str, Any]] = []
    for n in range(NODES):
        state = rng.choices(states, weights=[25, 5, 50, 20])[0]
        visibility = rng.choices(list(Visibility), weights=[60, 30, 10])[0]
        node_id = uuid.uuid4()
        nodes.append(
            {
                "id": node_id,
                "bundle": Bundle.APIS,
                "title": f"API {n}",
                # an overview of a few lines, as written ones are: rows of a real size, so
                # that reading the table costs what it does (a table of bare rows is so small
                # that PostgreSQL rightly reads it whole)
                "overview": OVERVIEW,
                "visibility": visibility,
                "moderation_state": state,
                "published": state is ModerationState.PUBLISHED,
                "source_type": SourceType.CUSTOM,
            }
        )
        if visibility is Visibility.ORGANISATION:
            audiences.append(
                {
                    "id": uuid.uuid4(),
                    "node_id": node_id,
                    "organisation_id": organisation,
                    "team_id": team if rng.random() < 1 / 3 else None,
                }
            )

    async def write(session: AsyncSession) -> None:
        session.add(Organisation(id=organisation, name="Acme", domains=[]))
        await session.flush()
        session.add(Team(id=team, organisation_id=organisation, name="Core"))
        await session.execute(insert(CatalogueNode), nodes)
        await session.execute(insert(NodeAudience), audiences)

    await load_analyzed(database, write, ["catalogue_nodes", "catalogue_node_audiences"])
    return organisation, team


@pytest.mark.parametrize("caller", ["anonymous", "signed in", "member"])
async def test_the_count_reads_the_state_index_alone(database: Database, caller: str) -> None:
    organisation, team = await _catalogue(database)
    viewer = {
        "anonymous": ANONYMOUS,
        "signed in": Viewer(signed_in=True),
        "member": Viewer(signed_in=True, organisations={organisation: frozenset({team})}),
    }[caller]
    query = ListQuery(page=1, size=50, sort=(SortKey("created_at", descending=True),))
    async with database.session() as session:
        with IssuedStatements(database) as issued:
            page = await StorefrontRepository(session, viewer).page_of(
                Bundle.APIS, NodeFilters(), query, documentation=False
            )
        assert page.total > 0
        [(count, parameters)] = issued.starting("select count(*)")
        lines = await plan_of(session, count, parameters)
    assert read_from_index_alone(database, INDEX, lines), lines
