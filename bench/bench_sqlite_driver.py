"""SQLite statements through SQLAlchemy's stock aiosqlite adapter and through Portico's
one-hop cursor (``portico/core/db/sqlite_driver.py``), side by side in one run.

One migrated SQLite file; two engines on it, configured as ``core/db/engine.py`` does (WAL,
``BEGIN IMMEDIATE``), one with ``module=one_hop_dbapi()``. Each round runs, on each engine in
turn, ``TRANSACTIONS`` transactions shaped like an authenticated catalogue read: a user by
primary key, its roles, a feature flag, the schema version, then up to 50 rows of a table;
medians of the rounds are printed with their ratio. Printed, never asserted.

    .venv/bin/python bench/bench_sqlite_driver.py
"""

from __future__ import annotations

import asyncio
import os
import statistics
import tempfile
import time
from pathlib import Path

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine

from portico.core.db import engine as engine_module
from portico.core.db.migrate import upgrade_async

TRANSACTIONS = int(os.environ.get("BENCH_TRANSACTIONS", "2000"))
ROUNDS = int(os.environ.get("BENCH_ROUNDS", "5"))

STATEMENTS = (
    "SELECT id, email, status FROM users WHERE id = :id",
    "SELECT role FROM user_site_roles WHERE user_id = :id",
    "SELECT enabled FROM portal_features WHERE key = 'catalogue'",
    "SELECT version_num FROM alembic_version",
    "SELECT key, enabled FROM portal_features ORDER BY key LIMIT 50",
)


def stock_engine(url: str) -> AsyncEngine:
    engine = create_async_engine(url, connect_args={"timeout": 30})
    engine_module._configure_sqlite(engine)
    return engine


async def transactions(engine: AsyncEngine) -> float:
    started = time.perf_counter()
    for _ in range(TRANSACTIONS):
        async with engine.begin() as connection:
            for statement in STATEMENTS:
                (await connection.execute(text(statement), {"id": "x"})).all()
    return (time.perf_counter() - started) / TRANSACTIONS * 1e6


async def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        url = f"sqlite+aiosqlite:///{Path(tmp) / 'bench.db'}"
        await upgrade_async(url)
        engines = {"stock aiosqlite": stock_engine(url), "one hop": engine_module.build_engine(url)}
        times: dict[str, list[float]] = {name: [] for name in engines}
        for engine in engines.values():  # warm: connections open, statements cached
            await transactions(engine)
        for _ in range(ROUNDS):
            for name, engine in engines.items():
                times[name].append(await transactions(engine))
        for engine in engines.values():
            await engine.dispose()
    stock = statistics.median(times["stock aiosqlite"])
    one_hop = statistics.median(times["one hop"])
    print(f"{TRANSACTIONS} transactions x {len(STATEMENTS)} statements, {ROUNDS} rounds (median)")
    print(f"  stock aiosqlite adapter: {stock:8.1f} us a transaction")
    print(f"  one-hop cursor:          {one_hop:8.1f} us a transaction")
    print(f"  one hop / stock: {one_hop / stock:.2f} of the time ({stock / one_hop:.2f}x faster)")


if __name__ == "__main__":
    asyncio.run(main())
