"""The analytics queries: portable SQL over the two rollup tiers, and the products whose
quotas ``quota-usage`` reads.

Grouping by the stored names happens in SQL; so do sums, minima and maxima. Percentiles
cannot be computed in SQL portably, so their query returns one row per rollup (the group's
columns, the count and the stored sketch) for the service to merge.
"""

from __future__ import annotations

import operator
import uuid
import zlib
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import (
    ColumnElement,
    String,
    Table,
    and_,
    case,
    cast,
    delete,
    func,
    insert,
    not_,
    select,
    text,
)
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession

from portico.management.org.models import Organization
from portico.management.product.models import Product
from portico.management.telemetry.models import (
    MEASURES,
    NAMES,
    ROUTE_KEY,
    TelemetryHourlySketch,
    TelemetryRouteSketch,
    TelemetrySketchCompaction,
)
from portico.management.telemetry.repository import tier

#: the status ``product-quota`` refuses with once the quota is spent
QUOTA_REFUSED = 429
#: a minute row's sketch column → the measure the hourly sketches are stored under
_MEASURE_OF = {column: measure for measure, column in MEASURES.items()}
_FINE_SKETCHES: Table = TelemetryHourlySketch.__table__  # type: ignore[assignment]
_ROUTE_SKETCHES: Table = TelemetryRouteSketch.__table__  # type: ignore[assignment]
_COMPACTIONS: Table = TelemetrySketchCompaction.__table__  # type: ignore[assignment]
#: the columns ``telemetry_sketches_hourly_by_route`` keeps: a query grouping and filtering
#: by these only can read it
ROUTE_COLUMNS = frozenset({"environment_id", *ROUTE_KEY, *NAMES})
#: (rows, requests) of an hour in the hourly tier
Fingerprint = tuple[int, int]


def _joined(session: AsyncSession, column: Any) -> Any:
    """The group's sketches joined by ``;`` in the database."""
    bind = session.bind
    if bind is not None and bind.dialect.name == "postgresql":
        return func.string_agg(column, ";")
    return func.group_concat(column, ";")


@dataclass(frozen=True)
class Condition:
    """``column`` (a rollup column) ``operator`` ``values`` (validated already)."""

    column: str
    operator: str
    values: tuple[Any, ...]


@dataclass(frozen=True)
class Measure:
    """The rollup columns behind a time or size metric."""

    count: str
    sums: tuple[str, ...]
    low: str
    high: str
    sketch: str


@dataclass(frozen=True)
class Window:
    """Rows of one tier with ``start <= period < end``."""

    hourly: bool
    start: datetime
    end: datetime


def _where(
    table: Table, period: str, org_id: uuid.UUID, window: Window, conditions: Sequence[Condition]
) -> ColumnElement[bool]:
    clauses: list[ColumnElement[bool]] = [
        table.c.org_id == org_id,
        table.c[period] >= window.start,
        table.c[period] < window.end,
    ]
    for condition in conditions:
        clauses.append(_condition(table, condition))
    return and_(*clauses)


_COMPARISONS = {
    "EQ": operator.eq,
    "NEQ": operator.ne,
    "GT": operator.gt,
    "GTE": operator.ge,
    "LT": operator.lt,
    "LTE": operator.le,
}


def _condition(table: Table, condition: Condition) -> ColumnElement[bool]:
    column = table.c[condition.column]
    values = condition.values
    compare = _COMPARISONS.get(condition.operator)
    clause: ColumnElement[bool]
    if compare is not None:
        clause = compare(column, values[0])
    elif condition.operator == "IN":
        clause = column.in_(values)
    else:
        like = func.lower(cast(column, String)).like(str(values[0]).lower())
        clause = like if condition.operator == "LIKE" else not_(like)
    return clause


class AnalyticsRepository:
    def __init__(self, session: AsyncSession) -> None:
        self.session = session

    @property
    def store(self) -> str:
        """Which database this reads (a process may hold more than one: tests, tools)."""
        bind = self.session.bind
        if bind is None:
            return ""
        engine = bind if isinstance(bind, AsyncEngine) else bind.engine
        return engine.url.render_as_string(hide_password=True)

    async def totals(
        self,
        window: Window,
        *,
        org_id: uuid.UUID,
        conditions: Sequence[Condition],
        groups: Sequence[str],
        by_period: bool,
        measure: Measure | None,
    ) -> Sequence[Any]:
        """Per group (and period): ``requests`` and, for a measure, ``measured`` (its
        count), ``total``, ``low``, ``high`` (the extremes of rows whose count is positive)."""
        table, period = tier(window.hourly)
        keys: list[Any] = [table.c[name] for name in groups]
        if by_period:
            keys.append(table.c[period].label("period"))
        columns: list[Any] = [*keys, func.sum(table.c.requests).label("requests")]
        if measure is not None:
            count = table.c[measure.count]
            total: Any = table.c[measure.sums[0]]
            for name in measure.sums[1:]:
                total = total + table.c[name]
            columns += [
                func.sum(count).label("measured"),
                func.sum(total).label("total"),
                func.min(case((count > 0, table.c[measure.low]))).label("low"),
                func.max(case((count > 0, table.c[measure.high]))).label("high"),
            ]
        statement = (
            select(*columns)
            .where(_where(table, period, org_id, window, conditions))
            .group_by(*keys)
        )
        return (await self.session.execute(statement)).all()

    async def sketches(
        self,
        window: Window,
        *,
        org_id: uuid.UUID,
        conditions: Sequence[Condition],
        groups: Sequence[str],
        by_period: bool,
        measure: Measure,
        by_route: bool = False,
    ) -> Sequence[Any]:
        """Per group (and period): ``measured`` and ``sketches``, the group's stored sketches
        joined by ``;`` in the database (one row per group instead of one per rollup: the
        rows, not the bytes, are what costs in the driver). Hours read the measure's rows of
        ``telemetry_sketches_hourly`` (``by_route``: of ``telemetry_sketches_hourly_by_route``,
        which only a query within ``ROUTE_COLUMNS`` may read), minutes their rollups."""
        clauses: list[ColumnElement[bool]] = []
        if window.hourly:
            table = _ROUTE_SKETCHES if by_route else _FINE_SKETCHES
            period, sketch, count = "hour", table.c.sketch, table.c.count
            clauses.append(table.c.measure == _MEASURE_OF[measure.sketch])
        else:
            table, period = tier(False)
            sketch, count = table.c[measure.sketch], table.c[measure.count]
        keys: list[Any] = [table.c[name] for name in groups]
        if by_period:
            keys.append(table.c[period].label("period"))
        joined = _joined(self.session, sketch)
        statement = (
            select(*keys, func.sum(count).label("measured"), joined.label("sketches"))
            .where(_where(table, period, org_id, window, conditions), *clauses)
            .group_by(*keys)
        )
        return (await self.session.execute(statement)).all()

    async def hour_fingerprints(
        self, window: Window, *, org_id: uuid.UUID
    ) -> dict[datetime, tuple[int, int]]:
        """(rows, requests) of each hour of ``window`` that has traffic, from the hourly
        tier's covering index: they change whenever anything is written to the hour."""
        table, _ = tier(True)
        rows = await self.session.execute(
            select(table.c.hour, func.count(), func.sum(table.c.requests))
            .where(
                table.c.org_id == org_id, table.c.hour >= window.start, table.c.hour < window.end
            )
            .group_by(table.c.hour)
        )
        return {hour: (int(count), int(total or 0)) for hour, count, total in rows}

    async def compactions(
        self, org_id: uuid.UUID, hours: Sequence[datetime]
    ) -> dict[datetime, Fingerprint]:
        """The fingerprint each of ``hours`` had when it was compacted, for those that were."""
        if not hours:
            return {}
        table = _COMPACTIONS
        rows = await self.session.execute(
            select(table.c.hour, table.c.rows, table.c.requests).where(
                table.c.org_id == org_id, table.c.hour.in_(list(hours))
            )
        )
        return {hour: (int(count), int(requests)) for hour, count, requests in rows}

    async def org_ids(self) -> list[uuid.UUID]:
        """Every org (few: each one's hours are then read through its own index range)."""
        return list((await self.session.execute(select(Organization.id))).scalars())

    async def route_groups(self, org_id: uuid.UUID, hour: datetime, measure: str) -> Sequence[Any]:
        """An hour's sketches of ``measure`` per environment, route key and names: what
        compaction merges into one row each (``measured`` and the joined ``sketches``)."""
        table = _FINE_SKETCHES
        keys = [table.c[name] for name in ("environment_id", *ROUTE_KEY, *NAMES)]
        statement = (
            select(
                *keys,
                func.sum(table.c.count).label("measured"),
                _joined(self.session, table.c.sketch).label("sketches"),
            )
            .where(table.c.org_id == org_id, table.c.measure == measure, table.c.hour == hour)
            .group_by(*keys)
        )
        return (await self.session.execute(statement)).all()

    async def lock_compaction(self, org_id: uuid.UUID, hour: datetime) -> None:
        """Serialise two compactions of one hour (two workers; PostgreSQL: SQLite's write
        transactions already are)."""
        bind = self.session.bind
        if bind is not None and bind.dialect.name == "postgresql":
            key = zlib.crc32(b"compaction:" + org_id.bytes + hour.isoformat().encode())
            await self.session.execute(text("SELECT pg_advisory_xact_lock(:k)"), {"k": key})

    async def replace_compaction(
        self,
        org_id: uuid.UUID,
        hour: datetime,
        rows: Sequence[dict[str, Any]],
        fingerprint: Fingerprint | None,
        now: datetime,
    ) -> None:
        """The hour's compacted rows become ``rows``, compacted at ``fingerprint`` (None: the
        hour has no traffic left, and nothing is kept of it)."""
        for table in (_ROUTE_SKETCHES, _COMPACTIONS):
            await self.session.execute(
                delete(table).where(table.c.org_id == org_id, table.c.hour == hour)
            )
        if fingerprint is None:
            return
        if rows:
            await self.session.execute(insert(_ROUTE_SKETCHES), list(rows))
        await self.session.execute(
            insert(_COMPACTIONS).values(
                org_id=org_id,
                hour=hour,
                rows=fingerprint[0],
                requests=fingerprint[1],
                compacted_at=now,
            )
        )

    async def metered(
        self,
        window: Window,
        *,
        org_id: uuid.UUID,
        conditions: Sequence[Condition],
        groups: Sequence[str],
    ) -> Sequence[Any]:
        """Requests a product metered, per group, period, product, app and developer: those
        it admitted (a 429 is what it answers when the quota is spent: not spent again)."""
        table, period = tier(window.hourly)
        keys: list[Any] = [
            *(table.c[name] for name in groups),
            table.c[period].label("period"),
            table.c.product_id,
            table.c.app_id,
            table.c.developer_id,
        ]
        statement = (
            select(
                *keys,
                func.max(table.c.product_name).label("product_name"),
                func.max(table.c.app_name).label("app_name"),
                func.max(table.c.developer_email).label("developer_email"),
                func.sum(table.c.requests).label("requests"),
            )
            .where(
                _where(table, period, org_id, window, conditions),
                table.c.product_id != "",
                table.c.status != QUOTA_REFUSED,
            )
            .group_by(*keys)
        )
        return (await self.session.execute(statement)).all()

    async def quotas(self, org_id: uuid.UUID) -> dict[str, dict[str, Any] | None]:
        """Each product of the org's quota (None: none), by product id."""
        rows = await self.session.execute(
            select(Product.id, Product.quota).where(Product.org_id == org_id)
        )
        return {str(product_id): quota for product_id, quota in rows}
