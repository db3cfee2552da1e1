"""The one-hop SQLite cursor (core/db/sqlite_driver.py) answers as the stock adapter does:
rows, counts, last row ids, RETURNING, executemany, errors, streamed results; and one
statement costs one hand-off to the connection's thread."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiosqlite
import pytest
from sqlalchemy import text
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncEngine

from portico.core.db.engine import build_engine


@pytest.fixture
async def engine(tmp_path: Path) -> AsyncIterator[AsyncEngine]:
    engine = build_engine(f"sqlite+aiosqlite:///{tmp_path / 'driver.db'}")
    async with engine.begin() as connection:
        await connection.execute(
            text("CREATE TABLE things (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE)")
        )
    yield engine
    await engine.dispose()


async def test_rows_counts_and_row_ids(engine: AsyncEngine) -> None:
    async with engine.begin() as connection:
        inserted = await connection.execute(text("INSERT INTO things (name) VALUES ('a')"))
        assert inserted.rowcount == 1 and inserted.lastrowid == 1
        await connection.execute(
            text("INSERT INTO things (name) VALUES (:name)"), [{"name": "b"}, {"name": "c"}]
        )
        returned = await connection.execute(
            text("INSERT INTO things (name) VALUES ('d') RETURNING id, name")
        )
        assert returned.all() == [(4, "d")]
        updated = await connection.execute(text("UPDATE things SET name = name || '!'"))
        assert updated.rowcount == 4
        rows = await connection.execute(text("SELECT id, name FROM things ORDER BY id"))
        assert list(rows.keys()) == ["id", "name"]
        assert rows.all() == [(1, "a!"), (2, "b!"), (3, "c!"), (4, "d!")]
        one = await connection.execute(text("SELECT name FROM things WHERE id = 2"))
        assert one.scalar_one() == "b!"
        none = await connection.execute(text("SELECT name FROM things WHERE id = 99"))
        assert none.first() is None


async def test_errors_are_the_stores_and_the_transaction_rolls_back(engine: AsyncEngine) -> None:
    async with engine.connect() as connection:
        await connection.execute(text("INSERT INTO things (name) VALUES ('x')"))
        with pytest.raises(IntegrityError, match="UNIQUE"):
            await connection.execute(text("INSERT INTO things (name) VALUES ('x')"))
        await connection.rollback()
    async with engine.connect() as connection:
        count = await connection.scalar(text("SELECT count(*) FROM things"))
    assert count == 0


async def test_streamed_results_keep_their_server_side_cursor(engine: AsyncEngine) -> None:
    async with engine.begin() as connection:
        await connection.execute(
            text("INSERT INTO things (name) VALUES (:name)"),
            [{"name": f"n{i:04d}"} for i in range(1500)],
        )
        stream = await connection.stream(text("SELECT name FROM things ORDER BY name"))
        names = [row.name async for row in stream]
    assert len(names) == 1500 and names[0] == "n0000" and names[-1] == "n1499"


async def test_a_statement_is_one_hand_off_to_the_connection_thread(
    engine: AsyncEngine, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with engine.connect() as connection:
        await connection.execute(text("SELECT 1"))  # connected, the statement cached
        hand_offs: list[Any] = []
        original = aiosqlite.Connection._execute

        async def counted(self: aiosqlite.Connection, fn: Any, *args: Any, **kwargs: Any) -> Any:
            hand_offs.append(fn)
            return await original(self, fn, *args, **kwargs)

        monkeypatch.setattr(aiosqlite.Connection, "_execute", counted)
        rows = await connection.execute(text("SELECT 1 UNION ALL SELECT 2"))
        assert rows.all() == [(1,), (2,)]
        # the stock adapter makes four: open a cursor, execute, fetch all, close
        assert len(hand_offs) == 1
