"""The engine's pool on PostgreSQL: a connection the server closed is replaced at checkout,
without asking the server on every checkout (core/db/engine.py)."""

from __future__ import annotations

import os
from typing import Any

import pytest
from sqlalchemy import text

from portico.core.db.engine import Database
from tests.support.waiting import eventually

pytestmark = pytest.mark.skipif(
    os.environ.get("PORTICO_TEST_STORE") != "postgresql",
    reason="the pool's check of its PostgreSQL connections (SQLite connects to a file)",
)


async def _backend(database: Database) -> tuple[int, Any]:
    """The server process of the connection a session checks out, and that connection."""
    async with database.session() as session:
        pid = await session.scalar(text("SELECT pg_backend_pid()"))
        raw = await (await session.connection()).get_raw_connection()
        driver = raw.driver_connection
    assert isinstance(pid, int)
    return pid, driver


async def test_a_connection_the_server_closed_is_replaced(database: Database) -> None:
    pooled, idle = await _backend(database)
    assert (await _backend(database))[0] == pooled  # the pool hands back the same one

    # the server ends that connection (as a restart or an administrator would)
    async with Database(database.url, pool=False).session() as other:
        assert await other.scalar(text(f"SELECT pg_terminate_backend({pooled})"))
    pool = database.engine.sync_engine.pool
    assert not pool._pre_ping  # type: ignore[attr-defined]  # the check is not a round trip
    await eventually(lambda: idle.is_closed(), what="asyncpg saw the close")

    replaced, _ = await _backend(database)
    assert replaced != pooled
