"""An unfiltered page's count: on SQLite from the per-bundle counts the triggers of
migration 0024 keep (node/counts.py), equal to the nodes there are after every kind of
write; on PostgreSQL counted, the same answers."""

from __future__ import annotations

import uuid
from pathlib import Path

import httpx
from sqlalchemy import create_engine, insert, text, update

from portico.core.db.engine import Database
from portico.core.db.migrate import alembic_config, upgrade
from portico.marketplace.node.models import (
    Bundle,
    CatalogueNode,
    ModerationState,
    SourceType,
    Visibility,
)
from tests.marketplace.catalogue.conftest import new_api, new_product
from tests.marketplace.conftest import SiteAccount, url


async def _counted(client: httpx.AsyncClient, who: SiteAccount, path: str) -> int:
    answer = await client.get(url(path), headers=who.headers)
    assert answer.status_code == 200, answer.text
    return int(answer.json()["meta"]["count"])


async def _stored_counts(database: Database) -> dict[str, int] | None:
    if database.dialect != "sqlite":
        return None
    async with database.session() as session:
        rows = await session.execute(
            text("SELECT bundle, nodes FROM catalogue_bundle_counts WHERE nodes > 0")
        )
        return {bundle: nodes for bundle, nodes in rows}


async def test_the_count_of_an_unfiltered_page_follows_every_write(
    admin_api: httpx.AsyncClient, editor: SiteAccount, database: Database
) -> None:
    assert await _counted(admin_api, editor, "/apis") == 0
    made = [await new_api(admin_api, editor, title=f"API {n}") for n in range(3)]
    await new_product(admin_api, editor, title="Gold")
    assert await _counted(admin_api, editor, "/apis") == 3
    assert await _counted(admin_api, editor, "/products") == 1

    deleted = await admin_api.delete(url(f"/apis/{made[0]['id']}"), headers=editor.headers)
    assert deleted.status_code == 204, deleted.text
    # a node moved to another bundle (no endpoint does it; the store still may)
    async with database.session() as session, session.begin():
        await session.execute(
            update(CatalogueNode)
            .where(CatalogueNode.id == uuid.UUID(made[1]["id"]))
            .values(bundle=Bundle.API_PRODUCTS)
        )
    assert await _counted(admin_api, editor, "/apis") == 1
    assert await _counted(admin_api, editor, "/products") == 2
    # a filtered page is counted from the nodes, and agrees
    assert await _counted(admin_api, editor, "/apis?filter[published]=false") == 1
    assert await _stored_counts(database) in (None, {"apis": 1, "api_products": 2})


def test_the_migration_counts_the_nodes_before_it(tmp_path: Path) -> None:
    from alembic import command

    store = f"sqlite+aiosqlite:///{tmp_path / 'store.db'}"
    upgrade(store, "0023")
    engine = create_engine(f"sqlite:///{tmp_path / 'store.db'}")
    with engine.begin() as connection:
        for bundle in (Bundle.APIS, Bundle.APIS, Bundle.PAGE):
            connection.execute(
                insert(CatalogueNode).values(
                    id=uuid.uuid4(),
                    bundle=bundle,
                    title="before",
                    visibility=Visibility.PUBLIC,
                    moderation_state=ModerationState.DRAFT,
                    published=False,
                    source_type=SourceType.CUSTOM,
                )
            )
    upgrade(store, "0024")
    counted = text("SELECT bundle, nodes FROM catalogue_bundle_counts ORDER BY bundle")
    with engine.connect() as connection:
        assert [tuple(row) for row in connection.execute(counted)] == [("apis", 2), ("page", 1)]
    command.downgrade(alembic_config(store), "0023")
    with engine.connect() as connection:
        tables = text("SELECT name FROM sqlite_master WHERE name = 'catalogue_bundle_counts'")
        assert connection.execute(tables).all() == []
    engine.dispose()


async def test_sqlite_answers_an_unfiltered_count_from_the_stored_counts(
    admin_api: httpx.AsyncClient, editor: SiteAccount, database: Database
) -> None:
    """The stored count is what the page says, not a count of the rows (which costs one
    index entry per node): a count set by hand shows."""
    await new_api(admin_api, editor, title="Only")
    if database.dialect != "sqlite":
        assert await _counted(admin_api, editor, "/apis") == 1
        return
    async with database.session() as session, session.begin():
        await session.execute(
            text("UPDATE catalogue_bundle_counts SET nodes = 42 WHERE bundle = 'apis'")
        )
    assert await _counted(admin_api, editor, "/apis") == 42
    assert await _counted(admin_api, editor, "/apis?filter[search]=only") == 1
