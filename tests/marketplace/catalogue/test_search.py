"""``filter[search]`` through each store's trigram index (node/search/): the index follows
every write of a title, its answers are the exact filter's, and the query is one the index
serves."""

from __future__ import annotations

import uuid
from datetime import timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
from sqlalchemy import create_engine, insert, inspect, select, text

from portico.core.clock import Clock
from portico.core.db.engine import Database
from portico.core.db.migrate import alembic_config, upgrade
from portico.marketplace.catalogue import repository
from portico.marketplace.node import search as node_search
from portico.marketplace.node.models import (
    Bundle,
    CatalogueNode,
    ModerationState,
    SourceType,
    Visibility,
)
from portico.marketplace.node.search import repository as search_queries
from tests.marketplace.catalogue.conftest import new_api, new_product
from tests.marketplace.catalogue.test_listing import restate, titles
from tests.marketplace.conftest import SiteAccount, url


def searching(client: httpx.AsyncClient, who: SiteAccount, path: str = "/apis") -> Any:
    def search(term: str, **params: str) -> Any:
        return titles(client, who, path, **{"filter[search]": term}, **params)

    return search


@pytest.mark.parametrize("few", [True, False], ids=["index", "scan"])
async def test_the_index_follows_created_renamed_and_deleted_titles(
    admin_api: httpx.AsyncClient,
    editor: SiteAccount,
    monkeypatch: pytest.MonkeyPatch,
    few: bool,
) -> None:
    # "scan": more candidates than the set tested alone, so SQLite reads every title
    monkeypatch.setattr(repository, "SEARCH_SET", 5_000 if few else 0)
    search = searching(admin_api, editor)
    orders = await new_api(admin_api, editor, title="Orders Ledger")
    await new_api(admin_api, editor, title="Payments")
    assert await search("ledger") == ["Orders Ledger"]

    renamed = await admin_api.patch(
        url(f"/apis/{orders['id']}"), json={"title": "Invoices"}, headers=editor.headers
    )
    assert renamed.status_code == 200, renamed.text
    assert await search("ledger") == []
    assert await search("voice") == ["Invoices"]
    # a write that keeps the title keeps its entry
    kept = await admin_api.patch(
        url(f"/apis/{orders['id']}"),
        json={"title": "Invoices", "overview": "x"},
        headers=editor.headers,
    )
    assert kept.status_code == 200, kept.text
    assert await search("voice") == ["Invoices"]

    deleted = await admin_api.delete(url(f"/apis/{orders['id']}"), headers=editor.headers)
    assert deleted.status_code == 204, deleted.text
    assert await search("voice") == []
    assert await search("ments") == ["Payments"]


async def test_the_index_answers_exactly_the_filter(
    admin_api: httpx.AsyncClient, editor: SiteAccount
) -> None:
    search = searching(admin_api, editor)
    for title in ('Say "hello" API', "Über Orders", "Orders 2024", "orders-v2", "Ord"):
        await new_api(admin_api, editor, title=title)
    await new_product(admin_api, editor, title="Orders bundle")

    # FTS query syntax is text, quotes included
    assert await search('"hello"') == ['Say "hello" API']
    assert await search('y "h') == ['Say "hello" API']
    assert await search("AND") == []
    # the index folds beyond ASCII; the filter does not, and it decides
    assert await search("üBER") == []
    assert await search("ÜBER ord") == ["Über Orders"]
    # products are other nodes of the same index
    assert await search("ORDERS", sort="title") == ["Orders 2024", "orders-v2", "Über Orders"]
    assert await titles(admin_api, editor, "/products", **{"filter[search]": "orders"}) == [
        "Orders bundle"
    ]
    # shorter than a trigram: every title is read, same answers
    assert await search("rd", sort="title") == ["Ord", "Orders 2024", "orders-v2", "Über Orders"]
    assert await search("4", sort="title") == ["Orders 2024"]


async def test_the_query_is_one_the_index_serves(database: Database) -> None:
    """With a table of some size and its statistics, the planner answers a rare text from
    the index: a change of the filter's expression that the index does not cover would make
    every search read every title again."""
    words = ["Orders", "Payments", "Ledger", "Tickets", "Maps"]
    rows = [
        {
            "id": uuid.uuid4(),
            "bundle": Bundle.APIS,
            "title": f"{words[n % 5]} {n}",
            "visibility": Visibility.PUBLIC,
            "moderation_state": ModerationState.DRAFT,
            "published": False,
            "source_type": SourceType.CUSTOM,
        }
        for n in range(2_000)
    ]
    async with database.session() as session, session.begin():
        await session.execute(insert(CatalogueNode), rows)
        sqlite = session.get_bind().dialect.name == "sqlite"
        await session.execute(text("ANALYZE" if sqlite else "ANALYZE catalogue_nodes"))
    async with database.session() as session, session.begin():
        if sqlite:
            condition = search_queries.sqlite_candidates("1999")
        else:
            condition = search_queries.title_contains("1999", sqlite=False)
        statement = select(CatalogueNode.id).where(condition)
        explain = "EXPLAIN QUERY PLAN " if sqlite else "EXPLAIN "
        compiled = statement.compile(
            dialect=session.get_bind().dialect, compile_kwargs={"literal_binds": True}
        )
        plan = await session.execute(text(explain + str(compiled).replace("%%", "%")))
        lines = " ".join(str(row[-1]) for row in plan)
    used = "VIRTUAL TABLE INDEX" if sqlite else node_search.TRIGRAM_INDEX
    assert used in lines, lines


SORTS = [
    f"{sign}{key}"
    for key in ("title", "created_at", "updated_at", "moderation_state")
    for sign in ("", "-")
]


async def test_the_search_keys_answer_as_the_nodes_do(
    admin_api: httpx.AsyncClient,
    editor: SiteAccount,
    database: Database,
    clock: Clock,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """SQLite answers a search with no other filter than the state from the search keys'
    copies of the nodes' columns (migration 0023): every order, page and state filter gives
    what reading the nodes gives, after creations, renames, edits and state changes."""
    made = {}
    for title in ("Orders Delta", "orders alpha", "Orders Charlie", "ORDERS bravo", "Payments"):
        made[title] = await new_api(admin_api, editor, title=title)
        clock.advance(timedelta(minutes=1))
    await new_product(admin_api, editor, title="Orders bundle")
    renamed = await admin_api.patch(
        url(f"/apis/{made['Payments']['id']}"),
        json={"title": "Payment orders"},
        headers=editor.headers,
    )
    assert renamed.status_code == 200, renamed.text
    clock.advance(timedelta(minutes=1))
    edited = await admin_api.patch(
        url(f"/apis/{made['Orders Delta']['id']}"), json={"overview": "x"}, headers=editor.headers
    )
    assert edited.status_code == 200, edited.text
    await restate(
        database,
        made["orders alpha"]["id"],
        moderation_state=ModerationState.PUBLISHED,
        published=True,
    )
    await restate(database, made["ORDERS bravo"]["id"], moderation_state=ModerationState.ARCHIVED)

    keyed_calls = 0
    keyed = search_queries.sqlite_keyed

    def counting(bundle: Bundle, text_: str) -> Any:
        nonlocal keyed_calls
        keyed_calls += 1
        return keyed(bundle, text_)

    monkeypatch.setattr(search_queries, "sqlite_keyed", counting)
    cases = [
        {"sort": sort, **extra}
        for sort in SORTS
        for extra in (
            {},
            {"filter[published]": "true"},
            {"filter[published]": "false"},
            {"filter[moderation_state]": "draft"},
            {"limit": "2", "page": "2"},
        )
    ]
    search = searching(admin_api, editor)
    answers = [await search("orders", **case) for case in cases]
    assert answers[0] == [
        "ORDERS bravo",
        "Orders Charlie",
        "Orders Delta",
        "Payment orders",
        "orders alpha",
    ]
    monkeypatch.setattr(repository, "SEARCH_SET", 0)  # every title read from the nodes
    assert [await search("orders", **case) for case in cases] == answers
    sqlite = database.dialect == "sqlite"
    assert keyed_calls == (len(cases) if sqlite else 0)
    if sqlite:  # the copies are the nodes' columns
        async with database.session() as session:
            differing = await session.scalar(
                text(
                    "SELECT count(*) FROM catalogue_node_search_keys k "
                    "JOIN catalogue_nodes n ON n.id = k.node_id WHERE "
                    "k.bundle IS NOT n.bundle OR k.title IS NOT n.title "
                    "OR k.created_at IS NOT n.created_at OR k.updated_at IS NOT n.updated_at "
                    "OR k.moderation_state IS NOT n.moderation_state"
                )
            )
            keys = await session.scalar(text("SELECT count(*) FROM catalogue_node_search_keys"))
        assert differing == 0 and keys == 6


def test_the_migration_copies_the_columns_of_the_nodes_before_it(tmp_path: Path) -> None:
    from alembic import command

    url = f"sqlite+aiosqlite:///{tmp_path / 'store.db'}"
    upgrade(url, "0022")
    engine = create_engine(f"sqlite:///{tmp_path / 'store.db'}")
    node_id = uuid.uuid4()
    with engine.begin() as connection:
        connection.execute(
            insert(CatalogueNode).values(
                id=node_id,
                bundle=Bundle.APIS,
                title="Orders before",
                visibility=Visibility.PUBLIC,
                moderation_state=ModerationState.IN_REVIEW,
                published=False,
                source_type=SourceType.CUSTOM,
            )
        )
    upgrade(url, "0023")
    copied = text(
        "SELECT bundle, title, moderation_state FROM catalogue_node_search_keys WHERE node_id = :id"
    )
    with engine.connect() as connection:
        row = connection.execute(copied, {"id": node_id.hex}).one()
    assert tuple(row) == ("apis", "Orders before", "in_review")
    command.downgrade(alembic_config(url), "0022")
    with engine.connect() as connection:
        columns = {c["name"] for c in inspect(connection).get_columns("catalogue_node_search_keys")}
    assert columns == {"key", "node_id"}
    engine.dispose()
