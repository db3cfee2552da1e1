"""Engine and session factory: one code path for SQLite (WAL) and PostgreSQL."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sqlalchemy import event
from sqlalchemy.engine import make_url
from sqlalchemy.exc import DisconnectionError
from sqlalchemy.ext.asyncio import (
    AsyncEngine,
    AsyncSession,
    async_sessionmaker,
    create_async_engine,
)
from sqlalchemy.pool import NullPool

from portico.core.db.sqlite_driver import one_hop_dbapi

SQLITE_PRAGMAS = (
    "PRAGMA journal_mode=WAL",
    "PRAGMA synchronous=NORMAL",
    "PRAGMA foreign_keys=ON",
    "PRAGMA busy_timeout=10000",
    # reads through the OS page cache (mapped) rather than copied into each connection's
    # 2 MB cache page by page: a day's analytics read tens of MB (bench/bench_analytics.py)
    "PRAGMA mmap_size=268435456",
)


class Database:
    """The engine and the session factory of one process."""

    def __init__(self, url: str, *, echo: bool = False, pool: bool = True) -> None:
        self.url = url
        self.engine = build_engine(url, echo=echo, pool=pool)
        self.sessionmaker = async_sessionmaker(self.engine, expire_on_commit=False)

    @property
    def dialect(self) -> str:
        return self.engine.dialect.name

    def session(self) -> AsyncSession:
        return self.sessionmaker()

    async def dispose(self) -> None:
        await self.engine.dispose()


def build_engine(url: str, *, echo: bool = False, pool: bool = True) -> AsyncEngine:
    parsed = make_url(url)
    kwargs: dict[str, Any] = {"echo": echo}
    if not pool:
        kwargs["poolclass"] = NullPool
    if parsed.get_backend_name() == "sqlite":
        if parsed.database and parsed.database != ":memory:":
            Path(parsed.database).parent.mkdir(parents=True, exist_ok=True)
        # one thread hand-off per statement instead of four (sqlite_driver.py)
        engine = create_async_engine(
            url, connect_args={"timeout": 30}, module=one_hop_dbapi(), **kwargs
        )
        _configure_sqlite(engine)
        return engine
    engine = create_async_engine(url, **kwargs)
    _discard_closed_connections(engine)
    return engine


def _discard_closed_connections(engine: AsyncEngine) -> None:
    """A pooled PostgreSQL connection the server has closed is replaced at checkout.

    SQLAlchemy's ``pool_pre_ping`` asks the server on every checkout: on asyncpg three round
    trips (BEGIN, an empty statement, ROLLBACK), ~0.9 ms of every request. A restarted or
    terminated server closes its connections; the event loop reads that end while the
    connection idles in the pool and asyncpg marks it closed, so the check here is local.
    Raising ``DisconnectionError`` makes the pool drop the connection and check out another.
    A connection whose end has not been read yet fails its first statement; SQLAlchemy then
    invalidates it as a disconnect (the request fails once, as it would mid-transaction)."""

    @event.listens_for(engine.sync_engine, "checkout")
    def _on_checkout(dbapi_connection: Any, _record: Any, _proxy: Any) -> None:
        if dbapi_connection.driver_connection.is_closed():
            raise DisconnectionError("the server closed this pooled connection")


def _configure_sqlite(engine: AsyncEngine) -> None:
    """WAL, foreign keys, and transactions that SQLAlchemy controls.

    The sqlite3 module's own transaction handling starts transactions lazily and never for
    SELECTs, which breaks SAVEPOINTs and lets a read-then-write transaction fail with
    SQLITE_BUSY instead of waiting. Turning it off and emitting ``BEGIN IMMEDIATE`` ourselves
    takes the write lock up front, so concurrent writers queue on ``busy_timeout``.
    """

    @event.listens_for(engine.sync_engine, "connect")
    def _on_connect(dbapi_connection: Any, _record: Any) -> None:
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        for pragma in SQLITE_PRAGMAS:
            cursor.execute(pragma)
        cursor.close()

    @event.listens_for(engine.sync_engine, "begin")
    def _on_begin(connection: Any) -> None:
        connection.exec_driver_sql("BEGIN IMMEDIATE")
