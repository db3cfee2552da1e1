"""Adding rollups into the store: one upsert per chunk of rows, additive on conflict."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy import case
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.ext.asyncio import AsyncSession

from portico.management.telemetry.models import BUCKET_COLUMNS, TelemetryLoss, TelemetryRollup

_ROLLUP_KEY = ("environment_id", "minute", "api_id", "route_id", "consumer", "method", "status")
_ADDED = (
    "requests",
    "latency_ms_sum",
    "upstream_requests",
    "upstream_ms_sum",
    "request_bytes",
    "response_bytes",
    *BUCKET_COLUMNS,
)
#: rows per statement: 27 parameters each stays far below SQLite's 32,766 variables
_CHUNK = 500


def _insert(session: AsyncSession) -> Any:
    bind = session.bind
    name = bind.dialect.name if bind is not None else "sqlite"
    return postgresql.insert if name == "postgresql" else sqlite.insert


class TelemetryRepository:
    def __init__(self, session: AsyncSession) -> None:
        self.session = session

    async def add_rollups(self, rows: Sequence[dict[str, Any]]) -> None:
        insert = _insert(self.session)
        table = TelemetryRollup.__table__
        for start in range(0, len(rows), _CHUNK):
            statement = insert(table).values(list(rows[start : start + _CHUNK]))
            new = statement.excluded
            updates: dict[str, Any] = {name: table.c[name] + new[name] for name in _ADDED}
            updates["latency_ms_max"] = case(
                (new.latency_ms_max > table.c.latency_ms_max, new.latency_ms_max),
                else_=table.c.latency_ms_max,
            )
            await self.session.execute(
                statement.on_conflict_do_update(index_elements=list(_ROLLUP_KEY), set_=updates)
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
