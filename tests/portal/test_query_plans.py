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
from sqlalchemy import event, insert, text

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
    sqlite = database.engine.dialect.name == "sqlite"
    async with database.session() as session, session.begin():
        if not sqlite:
            # The test cluster commits asynchronously: until its commit is flushed, VACUUM
            # may not mark the rows' pages all-visible, and the planner then costs an
            # index-only scan as one reading every row.
            await session.execute(text("SET LOCAL synchronous_commit = on"))
        session.add(Organisation(id=organisation, name="Acme", domains=[]))
        await session.flush()
        session.add(Team(id=team, organisation_id=organisation, name="Core"))
        await session.execute(insert(CatalogueNode), nodes)
        await session.execute(insert(NodeAudience), audiences)
    if sqlite:
        async with database.session() as session, session.begin():
            await session.execute(text("ANALYZE"))
    else:
        # what autovacuum does after a bulk load: statistics, and the visibility map an
        # index-only scan needs to skip the rows
        async with database.engine.connect() as connection:
            autocommit = await connection.execution_options(isolation_level="AUTOCOMMIT")
            await autocommit.execute(text("VACUUM ANALYZE catalogue_nodes"))
            await autocommit.execute(text("VACUUM ANALYZE catalogue_node_audiences"))
    return organisation, team


@pytest.mark.parametrize("caller", ["anonymous", "signed in", "member"])
async def test_the_count_reads_the_state_index_alone(database: Database, caller: str) -> None:
    organisation, team = await _catalogue(database)
    viewer = {
        "anonymous": ANONYMOUS,
        "signed in": Viewer(signed_in=True),
        "member": Viewer(signed_in=True, organisations={organisation: frozenset({team})}),
    }[caller]
    sqlite = database.engine.dialect.name == "sqlite"

    issued: list[tuple[str, Any]] = []

    def record(_conn: Any, _cursor: Any, statement: str, parameters: Any, *_: Any) -> None:
        issued.append((statement, parameters))

    query = ListQuery(page=1, size=50, sort=(SortKey("created_at", descending=True),))
    async with database.session() as session:
        event.listen(database.engine.sync_engine, "before_cursor_execute", record)
        try:
            page = await StorefrontRepository(session, viewer).page_of(
                Bundle.APIS, NodeFilters(), query, documentation=False
            )
        finally:
            event.remove(database.engine.sync_engine, "before_cursor_execute", record)
        assert page.total > 0
        [(count, parameters)] = [
            (statement, parameters)
            for statement, parameters in issued
            if statement.lstrip().lower().startswith("select count(*)")
        ]
        explain = "EXPLAIN QUERY PLAN " if sqlite else "EXPLAIN "
        connection = await session.connection()
        plan = await connection.exec_driver_sql(explain + count, parameters)
        lines = "\n".join(str(row[-1]) for row in plan)
    expected = f"COVERING INDEX {INDEX}" if sqlite else f"Index Only Scan using {INDEX}"
    assert expected in lines, lines
