"""Merging rollups into the store, both tiers.

Rows are handled whole, sketches included (``SKETCHES``, encoded); an hour's sketches are
stored apart (``TelemetryHourlySketch``), and this module joins and splits them.

Counters could merge with an additive ``ON CONFLICT DO UPDATE``, but sketches cannot be added
in SQL portably, so a batch is merged in Python: the rows it touches are read, merged and
written back with an upsert. Concurrent batches of one environment (several nodes) are
serialised: SQLite takes its write lock when the transaction begins; PostgreSQL takes a
transaction-scoped advisory lock on the environment first.
"""

from __future__ import annotations

import uuid
import zlib
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import Table, delete, func, select, text
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.ext.asyncio import AsyncSession

from portico.management.telemetry.models import (
    KEY,
    MEASURES,
    NAMES,
    TelemetryHourlyRollup,
    TelemetryHourlySketch,
    TelemetryLoss,
    TelemetryRollup,
    TelemetryRouteSketch,
    TelemetrySketchCompaction,
)

#: the count of values each measure's sketch holds, by measure
_COUNTED_BY = {
    "latency": "requests",
    "upstream": "upstream_requests",
    "request": "requests",
    "response": "requests",
    "transfer": "requests",
}
_SKETCH_TABLE: Table = TelemetryHourlySketch.__table__  # type: ignore[assignment]
_ROUTE_SKETCH_TABLE: Table = TelemetryRouteSketch.__table__  # type: ignore[assignment]
_COMPACTIONS: Table = TelemetrySketchCompaction.__table__  # type: ignore[assignment]
_SKETCH_KEY = ["org_id", "measure", "hour", "environment_id", *KEY]


def _dialect(session: AsyncSession) -> str:
    bind = session.bind
    return bind.dialect.name if bind is not None else "sqlite"


def _insert(session: AsyncSession) -> Any:
    return postgresql.insert if _dialect(session) == "postgresql" else sqlite.insert


def tier(hourly: bool) -> tuple[Table, str]:
    if hourly:
        return TelemetryHourlyRollup.__table__, "hour"  # type: ignore[return-value]
    return TelemetryRollup.__table__, "minute"  # type: ignore[return-value]


def key_of(row: Mapping[str, Any], period: str) -> tuple[Any, ...]:
    return (row["environment_id"], row[period], *(row[name] for name in KEY))


class TelemetryRepository:
    def __init__(self, session: AsyncSession) -> None:
        self.session = session

    async def lock_environment(self, environment_id: uuid.UUID) -> None:
        """Serialise merges into one environment's rows (PostgreSQL; SQLite already is)."""
        if _dialect(self.session) == "postgresql":
            await self.session.execute(
                text("SELECT pg_advisory_xact_lock(:k)"),
                {"k": zlib.crc32(b"telemetry:" + environment_id.bytes)},
            )

    async def existing(
        self, hourly: bool, keys: Sequence[tuple[Any, ...]]
    ) -> dict[tuple[Any, ...], dict[str, Any]]:
        """The stored rows of ``keys`` (environment, period, *KEY), by key: the rows of the
        environment's periods in question (a prefix of the primary key; row-value ``IN`` on
        the whole key is not served by SQLite's index), kept when their key is asked for."""
        table, period = tier(hourly)
        wanted = set(keys)
        found: dict[tuple[Any, ...], dict[str, Any]] = {}
        for environment_id in {key[0] for key in wanted}:
            periods = sorted({key[1] for key in wanted if key[0] == environment_id})
            statement = select(table).where(
                table.c.environment_id == environment_id, table.c[period].in_(periods)
            )
            for row in (await self.session.execute(statement)).mappings():
                record = dict(row)
                key = key_of(record, period)
                if key in wanted:
                    found[key] = record
            if hourly:
                await self._attach_sketches(found, environment_id, periods)
        return found

    async def _attach_sketches(
        self,
        rows: dict[tuple[Any, ...], dict[str, Any]],
        environment_id: uuid.UUID,
        hours: Sequence[datetime],
    ) -> None:
        """Give the hourly ``rows`` (by key) of ``environment_id`` their sketches."""
        for row in rows.values():
            for column in MEASURES.values():
                row.setdefault(column, "")
        table = _SKETCH_TABLE
        statement = select(table).where(
            table.c.environment_id == environment_id, table.c.hour.in_(hours)
        )
        for stored in (await self.session.execute(statement)).mappings():
            found = rows.get(key_of(dict(stored), "hour"))
            if found is not None:
                found[MEASURES[stored["measure"]]] = stored["sketch"]

    async def upsert(self, hourly: bool, rows: Sequence[dict[str, Any]]) -> None:
        """Write ``rows`` (merged already): new keys inserted, known ones replaced. One
        statement executed for many rows (compiled once and cached), not a statement of
        many VALUES, whose compilation costs more than the write."""
        if not rows:
            return
        table, period = tier(hourly)
        index = ["environment_id", period, *KEY]
        await self._upsert(
            table, index, [{c.name: row[c.name] for c in table.columns} for row in rows]
        )
        if hourly:
            await self._upsert(_SKETCH_TABLE, _SKETCH_KEY, sketch_rows(rows))

    async def _upsert(self, table: Table, index: list[str], rows: list[dict[str, Any]]) -> None:
        if not rows:
            return
        statement = _insert(self.session)(table)
        new = statement.excluded
        updates = {c.name: new[c.name] for c in table.columns if c.name not in index}
        await self.session.execute(
            statement.on_conflict_do_update(index_elements=index, set_=updates), rows
        )

    async def add_loss(self, row: dict[str, Any]) -> None:
        insert = _insert(self.session)
        table = TelemetryLoss.__table__
        statement = insert(table).values(row)
        await self.session.execute(
            statement.on_conflict_do_update(
                index_elements=["environment_id", "minute", "node_id"],
                set_={"dropped": table.c.dropped + statement.excluded.dropped},
            )
        )

    # ------------------------------------------------------------------ retention

    async def totals_before(self, hourly: bool, moment: datetime) -> list[tuple[Any, ...]]:
        """(environment, period, requests) of one tier's periods before ``moment``."""
        table, period = tier(hourly)
        rows = await self.session.execute(
            select(table.c.environment_id, table.c[period], func.sum(table.c.requests))
            .where(table.c[period] < moment)
            .group_by(table.c.environment_id, table.c[period])
        )
        return [tuple(row) for row in rows]

    async def minutes_between(
        self, environment_id: uuid.UUID, start: datetime, end: datetime
    ) -> list[dict[str, Any]]:
        table, period = tier(False)
        rows = await self.session.execute(
            select(table).where(
                table.c.environment_id == environment_id,
                table.c[period] >= start,
                table.c[period] < end,
            )
        )
        return [dict(row) for row in rows.mappings()]

    async def delete_between(
        self, hourly: bool, environment_id: uuid.UUID, start: datetime, end: datetime
    ) -> None:
        tables = [tier(hourly)] + ([(_SKETCH_TABLE, "hour")] if hourly else [])
        for table, period in tables:
            await self.session.execute(
                delete(table).where(
                    table.c.environment_id == environment_id,
                    table.c[period] >= start,
                    table.c[period] < end,
                )
            )

    async def delete_before(self, hourly: bool, moment: datetime) -> dict[uuid.UUID, int]:
        """Delete one tier's rows older than ``moment``; the records they held, per org."""
        table, period = tier(hourly)
        counted = await self.session.execute(
            select(table.c.org_id, func.sum(table.c.requests))
            .where(table.c[period] < moment)
            .group_by(table.c.org_id)
        )
        records = {org_id: int(total or 0) for org_id, total in counted}
        if hourly:  # per environment: the sketches' index leads with it (the hours' key
            # leads with the hour); an hour's sketches exist only beside its rows
            sketches = _SKETCH_TABLE
            environments = await self.session.scalars(
                select(table.c.environment_id).where(table.c[period] < moment).distinct()
            )
            for environment_id in list(environments):
                for compacted in (sketches, _ROUTE_SKETCH_TABLE):
                    await self.session.execute(
                        delete(compacted).where(
                            compacted.c.environment_id == environment_id,
                            compacted.c.hour < moment,
                        )
                    )
            await self.session.execute(delete(_COMPACTIONS).where(_COMPACTIONS.c.hour < moment))
        if records:
            await self.session.execute(delete(table).where(table.c[period] < moment))
        return records

    async def delete_loss_before(self, moment: datetime) -> int:
        result = await self.session.execute(
            delete(TelemetryLoss).where(TelemetryLoss.minute < moment)
        )
        return int(getattr(result, "rowcount", 0) or 0)


def sketch_rows(rows: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """The stored sketches of hourly ``rows``: every measure's, even an empty one (an hour
    of refused requests has no upstream latency, and a query grouping by upstream latency
    still lists it, with no value)."""
    out = []
    for row in rows:
        shared = {name: row[name] for name in ("org_id", "hour", "environment_id", *KEY, *NAMES)}
        for measure, column in MEASURES.items():
            out.append(
                {
                    **shared,
                    "measure": measure,
                    "count": row[_COUNTED_BY[measure]],
                    "sketch": row[column],
                }
            )
    return out
