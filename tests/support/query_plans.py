"""Tests of the plans a store chooses: rows loaded with their statistics, and the plan of a
statement as the store prints it."""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from sqlalchemy import event, text
from sqlalchemy.ext.asyncio import AsyncSession

from portico.core.db.engine import Database


async def load_analyzed(
    database: Database, write: Callable[[AsyncSession], Awaitable[None]], tables: Sequence[str]
) -> None:
    """``write`` in one transaction, then the statistics of ``tables`` gathered, as a store
    that has run a while has them (planners choose by them)."""
    sqlite = database.engine.dialect.name == "sqlite"
    async with database.session() as session, session.begin():
        if not sqlite:
            # The test cluster commits asynchronously: until its commit is flushed, VACUUM
            # may not mark the rows' pages all-visible, and the planner then costs an
            # index-only scan as one reading every row.
            await session.execute(text("SET LOCAL synchronous_commit = on"))
        await write(session)
    if sqlite:
        async with database.session() as session, session.begin():
            await session.execute(text("ANALYZE"))
        return
    # what autovacuum does after a bulk load: statistics, and the visibility map an
    # index-only scan needs to skip the rows
    async with database.engine.connect() as connection:
        autocommit = await connection.execution_options(isolation_level="AUTOCOMMIT")
        for table in tables:
            await autocommit.execute(text(f"VACUUM ANALYZE {table}"))


class IssuedStatements:
    """The statements a block runs, with their parameters (``with IssuedStatements(db) as
    issued``)."""

    def __init__(self, database: Database) -> None:
        self._engine = database.engine.sync_engine
        self.statements: list[tuple[str, Any]] = []

    def _record(self, _conn: Any, _cursor: Any, statement: str, parameters: Any, *_: Any) -> None:
        self.statements.append((statement, parameters))

    def __enter__(self) -> IssuedStatements:
        event.listen(self._engine, "before_cursor_execute", self._record)
        return self

    def __exit__(self, *_: object) -> None:
        event.remove(self._engine, "before_cursor_execute", self._record)

    def starting(self, prefix: str) -> list[tuple[str, Any]]:
        """Those whose text starts with ``prefix`` (case and leading space ignored)."""
        wanted = prefix.lower()
        return [(s, p) for s, p in self.statements if s.lstrip().lower().startswith(wanted)]


async def plan_of(session: AsyncSession, statement: str, parameters: Any) -> str:
    """The store's plan for ``statement``, one line per step."""
    sqlite = session.get_bind().dialect.name == "sqlite"
    explain = "EXPLAIN QUERY PLAN " if sqlite else "EXPLAIN "
    connection = await session.connection()
    plan = await connection.exec_driver_sql(explain + statement, parameters)
    return "\n".join(str(row[-1]) for row in plan)


def read_from_index_alone(database: Database, index: str, plan: str) -> bool:
    """Whether ``plan`` (of :func:`plan_of`) reads ``index`` and no row (in either
    direction)."""
    if database.engine.dialect.name == "sqlite":
        return f"COVERING INDEX {index}" in plan
    return re.search(rf"Index Only Scan (Backward )?using {re.escape(index)}\b", plan) is not None
