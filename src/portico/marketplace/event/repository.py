"""Queries over the audit log, restricted to the marketplace surface.

The management service's entries share the table (``surface = 'management'``) and are never
read here. Counting and grouping happen in the database; the export reads keyset chunks of
plain rows (no ORM objects) so that its cost per chunk is bounded.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import (
    ColumnElement,
    Select,
    String,
    Text,
    and_,
    cast,
    func,
    or_,
    select,
)
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.ext.compiler import compiles
from sqlalchemy.orm import QueryableAttribute
from sqlalchemy.sql.compiler import SQLCompiler
from sqlalchemy.sql.functions import FunctionElement

from portico.core.audit import AuditEntry
from portico.core.pagination import ListQuery, Page, paginate
from portico.marketplace import SURFACE

Column = ColumnElement[Any] | QueryableAttribute[Any]

#: public sort key → column
SORT_COLUMNS: Mapping[str, Any] = {
    "occurred_at": AuditEntry.occurred_at,
    "operation": AuditEntry.action,
    "entity_type": AuditEntry.entity_type,
}

#: what the export reads: every column of the event shape, as plain rows; ``before`` and
#: ``after`` as their stored JSON text, which the export writes out as it is (decoding and
#: re-encoding them was half the cost of an export)
_EXPORT_COLUMNS = (
    AuditEntry.id,
    AuditEntry.occurred_at,
    AuditEntry.action,
    AuditEntry.entity_type,
    AuditEntry.entity_id,
    AuditEntry.bundle,
    AuditEntry.module,
    AuditEntry.summary,
    AuditEntry.actor_id,
    AuditEntry.actor_email,
    AuditEntry.actor_kind,
    AuditEntry.ip,
    AuditEntry.request_id,
    cast(AuditEntry.before, Text).label("before"),
    cast(AuditEntry.after, Text).label("after"),
)


@dataclass(frozen=True)
class EventFilters:
    """Parsed ``filter[...]`` values (see ``service.parse_filters``)."""

    operation: str | None = None
    entity_type: str | None = None
    entity_id: str | None = None
    actor_id: uuid.UUID | None = None
    actor_email: str | None = None
    bundle: str | None = None
    module: str | None = None
    since: datetime | None = None  # inclusive
    until: datetime | None = None  # exclusive


@dataclass(frozen=True)
class Cursor:
    """The last row of an export chunk: the next chunk starts strictly after it."""

    occurred_at: datetime
    id: uuid.UUID


class utc_day(FunctionElement[str]):  # noqa: N801 (a SQL function, named like one)
    """The UTC calendar day of a timestamp as 'YYYY-MM-DD', compiled per dialect: SQLite
    stores naive UTC text, PostgreSQL a timestamptz that must be read in UTC whatever the
    session's time zone."""

    type = String()
    name = "utc_day"
    inherit_cache = True


@compiles(utc_day, "sqlite")
def _utc_day_sqlite(element: utc_day, compiler: SQLCompiler, **kw: Any) -> str:
    return f"date({compiler.process(element.clauses, **kw)})"


@compiles(utc_day, "postgresql")
def _utc_day_postgresql(element: utc_day, compiler: SQLCompiler, **kw: Any) -> str:
    moment = compiler.process(element.clauses, **kw)
    return f"to_char(({moment}) AT TIME ZONE 'UTC', 'YYYY-MM-DD')"


def conditions(filters: EventFilters) -> list[ColumnElement[bool]]:
    out: list[ColumnElement[bool]] = [AuditEntry.surface == SURFACE]
    for column, value in (
        (AuditEntry.action, filters.operation),
        (AuditEntry.entity_type, filters.entity_type),
        (AuditEntry.entity_id, filters.entity_id),
        (AuditEntry.bundle, filters.bundle),
        (AuditEntry.module, filters.module),
        (AuditEntry.actor_id, filters.actor_id),
    ):
        if value is not None:
            out.append(column == value)
    if filters.actor_email is not None:
        out.append(func.lower(AuditEntry.actor_email) == filters.actor_email.lower())
    if filters.since is not None:
        out.append(AuditEntry.occurred_at >= filters.since)
    if filters.until is not None:
        out.append(AuditEntry.occurred_at < filters.until)
    return out


class EventRepository:
    def __init__(self, session: AsyncSession) -> None:
        self.session = session

    def matching(self, filters: EventFilters) -> Select[AuditEntry]:
        return select(AuditEntry).where(*conditions(filters))

    async def page(self, filters: EventFilters, query: ListQuery) -> Page[AuditEntry]:
        # ties are broken by id in the direction of the last key, so that the default
        # listing (-occurred_at) is in exactly the export's order
        tiebreaker = AuditEntry.id.desc() if query.sort[-1].descending else AuditEntry.id.asc()
        return await paginate(
            self.session, self.matching(filters), query, SORT_COLUMNS, tiebreaker=tiebreaker
        )

    async def get(self, event_id: uuid.UUID) -> AuditEntry | None:
        entry: AuditEntry | None = await self.session.scalar(
            select(AuditEntry).where(AuditEntry.id == event_id, AuditEntry.surface == SURFACE)
        )
        return entry

    async def chunk(
        self, filters: EventFilters, *, after: Cursor | None, size: int
    ) -> Sequence[Any]:
        """Up to ``size`` events, newest first, strictly after ``after`` in (occurred_at, id)
        descending order. The redundant ``occurred_at <= cursor`` lets the planner range-scan
        the (surface, occurred_at) index instead of filtering the whole surface."""
        statement = select(*_EXPORT_COLUMNS).where(*conditions(filters))
        if after is not None:
            statement = statement.where(
                AuditEntry.occurred_at <= after.occurred_at,
                or_(
                    AuditEntry.occurred_at < after.occurred_at,
                    and_(AuditEntry.occurred_at == after.occurred_at, AuditEntry.id < after.id),
                ),
            )
        statement = statement.order_by(AuditEntry.occurred_at.desc(), AuditEntry.id.desc())
        return (await self.session.execute(statement.limit(size))).all()

    async def counts_by(self, column: Column, filters: EventFilters) -> list[tuple[Any, int]]:
        statement = (
            select(column, func.count())
            .where(*conditions(filters))
            .group_by(column)
            .order_by(column)
        )
        return [(key, int(n)) for key, n in (await self.session.execute(statement)).all()]

    async def counts_by_operation(self, filters: EventFilters) -> list[tuple[Any, int]]:
        return await self.counts_by(AuditEntry.action, filters)

    async def counts_by_entity_type(self, filters: EventFilters) -> list[tuple[Any, int]]:
        return await self.counts_by(AuditEntry.entity_type, filters)

    async def counts_by_day(self, filters: EventFilters) -> list[tuple[Any, int]]:
        return await self.counts_by(utc_day(AuditEntry.occurred_at), filters)

    async def distinct(self, column: Column) -> list[str]:
        statement = (
            select(column)
            .where(AuditEntry.surface == SURFACE, column.is_not(None))
            .group_by(column)
            .order_by(column)
        )
        return [str(value) for value in await self.session.scalars(statement)]

    async def types(self) -> dict[str, list[str]]:
        return {
            "operations": await self.distinct(AuditEntry.action),
            "entity_types": await self.distinct(AuditEntry.entity_type),
            "bundles": await self.distinct(AuditEntry.bundle),
            "modules": await self.distinct(AuditEntry.module),
        }
