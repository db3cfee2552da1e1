"""An organisation's catalogue page is counted and ordered from one index, in every order.

``ix_catalogue_nodes_organisation_orders`` (node/models.py, migration 0025) holds the bundle
and every sort column after the organisation: the count and the page's ids never read a
node's row. With an index of the organisation alone, each of its nodes was a random read for
its bundle and sort keys (bench/bench_catalogue.py: the slowest filter of the admin
catalogue). A change of the filter's shape, or of the index, that makes the store read rows
again fails here: a few thousand nodes with their statistics are enough for either planner
to prefer the index that covers the query.
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
from portico.marketplace.catalogue.repository import CatalogueRepository, NodeFilters
from portico.marketplace.node.models import Bundle, CatalogueNode, ModerationState, Visibility
from portico.marketplace.organisation.models import Organisation
from tests.support.query_plans import (
    IssuedStatements,
    load_analyzed,
    plan_of,
    read_from_index_alone,
)

INDEX = "ix_catalogue_nodes_organisation_orders"
NODES = 4_000
ORGANISATIONS = 20
OVERVIEW = "Orders, payments and refunds of the shop, with their webhooks. " * 6


async def _catalogue(database: Database) -> uuid.UUID:
    """``NODES`` API and product nodes, a fifth of them without an organisation and the
    others spread over ``ORGANISATIONS``, statistics gathered; one of the organisations."""
    rng = random.Random(7)
    organisations = [uuid.uuid4() for _ in range(ORGANISATIONS)]
    nodes: list[dict[str, Any]] = []
    for n in range(NODES):
        state = rng.choice(list(ModerationState))
        nodes.append(
            {
                "id": uuid.uuid4(),
                "bundle": Bundle.APIS if n % 10 else Bundle.API_PRODUCTS,
                "title": f"API {rng.randrange(10**6)}",
                # rows of a real size, so that reading them costs what it does
                "overview": OVERVIEW,
                "organisation_id": rng.choice(organisations) if n % 5 else None,
                "visibility": Visibility.ORGANISATION,
                "moderation_state": state,
                "published": state is ModerationState.PUBLISHED,
            }
        )

    async def write(session: AsyncSession) -> None:
        for i, organisation in enumerate(organisations):
            session.add(Organisation(id=organisation, name=f"Org {i}", domains=[]))
        await session.flush()
        await session.execute(insert(CatalogueNode), nodes)

    await load_analyzed(database, write, ["catalogue_nodes"])
    return organisations[0]


SORTS = ["title", "-title", "created_at", "-updated_at", "moderation_state", "-moderation_state"]


@pytest.mark.parametrize("sort", SORTS)
async def test_an_organisations_page_reads_its_index_alone(database: Database, sort: str) -> None:
    organisation = await _catalogue(database)
    key = SortKey(sort.lstrip("-"), descending=sort.startswith("-"))
    query = ListQuery(page=1, size=50, sort=(key,))
    async with database.session() as session:
        with IssuedStatements(database) as issued:
            page = await CatalogueRepository(session).page_of(
                Bundle.APIS, NodeFilters(organisation_id=organisation), query, documentation=False
            )
        assert 0 < len(page.items) <= page.total
        assert {node.organisation_id for node in page.items} == {organisation}
        [count] = issued.starting("select count(*)")
        [ids] = issued.starting("select catalogue_nodes.id")
        plans = [await plan_of(session, *statement) for statement in (count, ids)]
    for lines in plans:
        assert read_from_index_alone(database, INDEX, lines), lines
