"""The migration that moves hourly sketches to their own table keeps every bin: rows written
before it (both older forms) read back the same after it, and after a downgrade."""

from __future__ import annotations

import asyncio
import uuid
from datetime import UTC, datetime

import sqlalchemy as sa
from alembic import command
from sqlalchemy.ext.asyncio import create_async_engine

from portico.core.db.migrate import alembic_config, upgrade_async
from portico.core.db.types import UTCDateTime
from portico.management.telemetry import sketch

REVISION = "0012"
HOUR = datetime(2026, 11, 20, 9, tzinfo=UTC)
KEY = {
    "api_id": "api-1",
    "route_id": "rev:0",
    "consumer": "",
    "method": "GET",
    "status": 200,
    "app_id": "app-1",
    "product_id": "",
    "developer_id": "",
}
LATENCY = {400: 3, 401: 70000, 405: 1}  # one bin beyond 16 bits
LEGACY_PACKED = f"400:{(1 << 160) | (70000 << 32) | 3:x}"


TYPES = {"id": sa.Uuid(), "org_id": sa.Uuid(), "created_at": UTCDateTime()}
TYPES["updated_at"] = UTCDateTime()


def table(name: str, *names: str) -> sa.TableClause:
    return sa.table(name, *(sa.column(n, TYPES.get(n)) for n in names))


async def downgrade(url: str) -> None:
    await asyncio.to_thread(command.downgrade, alembic_config(url), f"{REVISION}-1")


async def test_hourly_sketches_move_with_every_bin(database_url: str) -> None:
    await downgrade(database_url)
    engine = create_async_engine(database_url)
    org_id, env_id = uuid.uuid4(), uuid.uuid4()
    now = datetime.now(UTC)
    stamps = {"created_at": now, "updated_at": now}
    columns = ["hour", "environment_id", "org_id", *KEY]
    counters = ["requests", "latency_ms_sum", "latency_ms_max", "upstream_requests"]
    counters += ["upstream_ms_sum", "request_bytes", "response_bytes"]
    sketches = ["latency_sketch", "upstream_sketch", "request_sketch", "response_sketch"]
    sketches.append("transfer_sketch")
    hourly = sa.table(
        "telemetry_rollups_hourly",
        sa.column("hour", UTCDateTime()),
        sa.column("environment_id", sa.Uuid()),
        sa.column("org_id", sa.Uuid()),
        *(sa.column(name) for name in [*columns[3:], *counters, *sketches, "api_name"]),
    )
    async with engine.begin() as connection:
        await connection.execute(
            table("orgs", "id", "name", "description", *stamps).insert(),
            {"id": org_id, "name": "o", "description": "", **stamps},
        )
        await connection.execute(
            table("environments", "id", "org_id", "name", "description", *stamps).insert(),
            {"id": env_id, "org_id": org_id, "name": "prod", "description": "", **stamps},
        )
        await connection.execute(
            hourly.insert(),
            {
                "hour": HOUR,
                "environment_id": env_id,
                "org_id": org_id,
                **KEY,
                "api_name": "orders",
                "requests": 70004,
                "latency_ms_sum": 1.0,
                "latency_ms_max": 1.0,
                "upstream_requests": 0,
                "upstream_ms_sum": 0.0,
                "request_bytes": 0,
                "response_bytes": 0,
                "latency_sketch": LEGACY_PACKED,
                "upstream_sketch": "",
                "request_sketch": "0=70004",
                "response_sketch": "0=70004",
                "transfer_sketch": "0=70004",
            },
        )
    await engine.dispose()
    await upgrade_async(database_url, REVISION)
    stored = sa.table(
        "telemetry_sketches_hourly",
        *(sa.column(n) for n in ("measure", "count", "sketch", "api_name", "org_id")),
    )
    async with engine.connect() as connection:
        rows = {r.measure: r for r in (await connection.execute(sa.select(stored))).all()}
        names = await connection.run_sync(
            lambda sync: {
                c["name"] for c in sa.inspect(sync).get_columns("telemetry_rollups_hourly")
            }
        )
    assert "latency_sketch" not in names
    assert set(rows) == {"latency", "upstream", "request", "response", "transfer"}
    assert sketch.decode(rows["latency"].sketch) == LATENCY
    assert (rows["latency"].count, rows["latency"].api_name) == (70004, "orders")
    assert (rows["upstream"].count, rows["upstream"].sketch) == (0, "")
    assert sketch.decode(rows["transfer"].sketch) == {0: 70004}

    await engine.dispose()  # SQLite: the migration takes the file's write lock
    await downgrade(database_url)
    async with engine.connect() as connection:
        (row,) = (await connection.execute(sa.select(hourly))).mappings().all()
    assert sketch.decode(row["latency_sketch"]) == LATENCY
    assert sketch.decode(row["request_sketch"]) == {0: 70004}
    assert row["upstream_sketch"] == ""
    await engine.dispose()
    await upgrade_async(database_url, "head")
