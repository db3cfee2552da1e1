"""A page's count when its filters are all facet columns (bundle, source type, state,
visibility, published): read from the counts the triggers of migration 0024 keep
(node/counts.py), equal to the nodes there are after every kind of write, on both stores."""

from __future__ import annotations

import asyncio
import itertools
import os
import uuid
from typing import Any

import httpx
import pytest
from alembic import command
from sqlalchemy import delete, func, insert, select, text, update
from sqlalchemy.ext.asyncio import create_async_engine

from portico.core.db.engine import Database
from portico.core.db.migrate import alembic_config, upgrade_async
from portico.marketplace.node.counts import FACET_COUNTS
from portico.marketplace.node.models import (
    Bundle,
    CatalogueNode,
    ModerationState,
    SourceType,
    Visibility,
)
from tests.marketplace.catalogue.conftest import new_api, new_product
from tests.marketplace.conftest import SiteAccount, url

N = CatalogueNode
#: decided at collection, as the store of the run is
POSTGRESQL_ONLY = pytest.mark.skipif(
    os.environ.get("PORTICO_TEST_STORE") != "postgresql",
    reason="how PostgreSQL keeps the counts (SQLite runs one writer at a time)",
)

#: the facet filters of the admin API, with the condition each stands for on the nodes
FILTERS: dict[str, Any] = {
    "": None,
    "filter[source]=custom": N.source_type == SourceType.CUSTOM,
    "filter[source]=imported": N.source_type == SourceType.IMPORTED,
    "filter[moderation_state]=draft": N.moderation_state == ModerationState.DRAFT,
    "filter[moderation_state]=published": N.moderation_state == ModerationState.PUBLISHED,
    "filter[visibility]=public": N.visibility == Visibility.PUBLIC,
    "filter[visibility]=internal": N.visibility == Visibility.INTERNAL,
    "filter[published]=true": N.moderation_state == ModerationState.PUBLISHED,
    "filter[published]=false": N.moderation_state != ModerationState.PUBLISHED,
}


async def _counted(client: httpx.AsyncClient, who: SiteAccount, path: str) -> int:
    answer = await client.get(url(path), headers=who.headers)
    assert answer.status_code == 200, answer.text
    return int(answer.json()["meta"]["count"])


async def _nodes(database: Database, bundle: Bundle, *conditions: Any) -> int:
    """The nodes counted one by one, as the page counted them before."""
    async with database.session() as session:
        counted = await session.scalar(
            select(func.count()).select_from(N).where(N.bundle == bundle, *conditions)
        )
        return int(counted or 0)


async def _every_count_agrees(
    client: httpx.AsyncClient, who: SiteAccount, database: Database
) -> None:
    paths = {Bundle.APIS: "/apis", Bundle.API_PRODUCTS: "/products"}
    for (bundle, path), (one, two) in itertools.product(
        paths.items(), itertools.combinations(FILTERS, 2)
    ):
        if one and one.split("=")[0] == two.split("=")[0]:
            continue  # a filter given twice is refused
        query = "&".join(q for q in (one, two) if q)
        conditions = [c for c in (FILTERS[one], FILTERS[two]) if c is not None]
        expected = await _nodes(database, bundle, *conditions)
        assert await _counted(client, who, f"{path}?{query}") == expected, (bundle, query)


def _node(bundle: Bundle, **values: Any) -> dict[str, Any]:
    return {
        "id": uuid.uuid4(),
        "bundle": bundle,
        "title": values.pop("title", "bulk"),
        "visibility": values.pop("visibility", Visibility.PUBLIC),
        "moderation_state": values.pop("moderation_state", ModerationState.DRAFT),
        "published": False,
        "source_type": values.pop("source_type", SourceType.CUSTOM),
        **values,
    }


async def test_the_counts_follow_every_kind_of_write(
    admin_api: httpx.AsyncClient, editor: SiteAccount, database: Database
) -> None:
    assert await _counted(admin_api, editor, "/apis") == 0
    made = [await new_api(admin_api, editor, title=f"API {n}") for n in range(3)]
    await new_product(admin_api, editor, title="Gold")
    assert await _counted(admin_api, editor, "/apis") == 3
    assert await _counted(admin_api, editor, "/products") == 1

    deleted = await admin_api.delete(url(f"/apis/{made[0]['id']}"), headers=editor.headers)
    assert deleted.status_code == 204, deleted.text
    async with database.session() as session, session.begin():
        # many nodes in one statement, of several facets (a bulk import)
        states = itertools.cycle(ModerationState)
        visibilities = itertools.cycle(Visibility)
        await session.execute(
            insert(N),
            [
                _node(
                    Bundle.APIS,
                    moderation_state=next(states),
                    visibility=next(visibilities),
                    source_type=SourceType.IMPORTED if n % 3 else SourceType.CUSTOM,
                )
                for n in range(40)
            ],
        )
        # a node moved to another bundle (no endpoint does it; the store still may)
        await session.execute(
            update(N).where(N.id == uuid.UUID(made[1]["id"])).values(bundle=Bundle.API_PRODUCTS)
        )
        # many nodes changing facet in one statement, some into a facet others leave
        await session.execute(
            update(N)
            .where(N.moderation_state == ModerationState.DRAFT)
            .values(moderation_state=ModerationState.PUBLISHED)
        )
        await session.execute(
            update(N)
            .where(N.moderation_state == ModerationState.ARCHIVED)
            .values(moderation_state=ModerationState.DRAFT, visibility=Visibility.INTERNAL)
        )
        # a change of a column no facet holds: no count moves
        await session.execute(update(N).values(title=N.title + " (renamed)"))
        await session.execute(delete(N).where(N.visibility == Visibility.ORGANISATION))
    await _every_count_agrees(admin_api, editor, database)


async def test_the_page_reads_the_stored_counts(
    admin_api: httpx.AsyncClient, editor: SiteAccount, database: Database
) -> None:
    """The stored count is what the page says, not a count of the rows (which costs one
    index entry per node): a count added by hand shows, where the filters are facets."""
    await new_api(admin_api, editor, title="Only")
    facet = {
        "bundle": "apis",
        "source_type": "custom",
        "moderation_state": "draft",
        "visibility": "internal",
    }
    stored = FACET_COUNTS.c
    async with database.session() as session, session.begin():
        found = select(stored.bundle, stored.source_type, stored.moderation_state)
        found = found.add_columns(stored.visibility, func.sum(stored.nodes))
        found = found.group_by(*found.selected_columns[:4]).having(func.sum(stored.nodes) != 0)
        assert [tuple(row) for row in await session.execute(found)] == [(*facet.values(), 1)]
        if database.dialect == "sqlite":  # one row per facet
            of_facet = [getattr(stored, name) == value for name, value in facet.items()]
            await session.execute(update(FACET_COUNTS).where(*of_facet).values(nodes=42))
        else:  # rows of changes, summed
            await session.execute(insert(FACET_COUNTS).values(**facet, nodes=41))
    assert await _counted(admin_api, editor, "/apis") == 42
    assert await _counted(admin_api, editor, "/apis?filter[moderation_state]=draft") == 42
    assert await _counted(admin_api, editor, "/apis?filter[published]=true") == 0
    assert await _counted(admin_api, editor, "/apis?filter[search]=only") == 1  # not a facet


@POSTGRESQL_ONLY
async def test_postgresql_writers_of_one_facet_do_not_wait_on_each_other(
    database: Database,
) -> None:
    """Two transactions adding nodes of the same facet both commit without waiting: each
    appends its own change (a shared counter row would hold the second until the first
    ended)."""
    async with database.session() as first, first.begin():
        await first.execute(insert(N), [_node(Bundle.APIS)])
        async with database.session() as second, second.begin():
            await second.execute(text("SET LOCAL lock_timeout = '2s'"))
            await second.execute(insert(N), [_node(Bundle.APIS)])
    assert await _stored_sum(database) == 2


@POSTGRESQL_ONLY
async def test_postgresql_folds_the_appended_changes(database: Database) -> None:
    for n in range(300):  # one statement each: one appended row each, folded past 256
        async with database.session() as session, session.begin():
            await session.execute(
                insert(N), [_node(Bundle.APIS, visibility=list(Visibility)[n % 3])]
            )
    async with database.session() as session, session.begin():
        await session.execute(delete(N).where(N.visibility == Visibility.ORGANISATION))
    async with database.session() as session:
        rows = await session.scalar(select(func.count()).select_from(FACET_COUNTS))
    assert rows is not None and rows <= 256
    assert await _stored_sum(database) == 200


async def _stored_sum(database: Database) -> int:
    async with database.session() as session:
        return int(await session.scalar(select(func.sum(FACET_COUNTS.c.nodes))) or 0)


async def test_the_migration_counts_the_nodes_before_it(database_url: str) -> None:
    config = alembic_config(database_url)
    await asyncio.to_thread(command.downgrade, config, "0023")
    engine = create_async_engine(database_url)
    try:
        async with engine.begin() as connection:
            await connection.execute(
                insert(N),
                [
                    _node(Bundle.APIS),
                    _node(Bundle.APIS),
                    _node(Bundle.PAGE, moderation_state=None),
                ],
            )
        await upgrade_async(database_url, "0024")
        stored = FACET_COUNTS.c
        counted = select(stored.bundle, stored.moderation_state, stored.nodes).order_by(
            stored.bundle
        )
        async with engine.connect() as connection:
            assert [tuple(r) for r in await connection.execute(counted)] == [
                ("apis", "draft", 2),
                ("page", "", 1),
            ]
        await asyncio.to_thread(command.downgrade, config, "0023")
        async with engine.connect() as connection:
            left = await connection.execute(select(func.count()).select_from(N))
            assert left.scalar() == 3
            with pytest.raises(Exception, match="catalogue_facet_counts"):
                await connection.execute(select(FACET_COUNTS))
    finally:
        await engine.dispose()
