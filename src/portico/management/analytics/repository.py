"""The analytics queries: portable SQL over the two rollup tiers, and the products whose
quotas ``quota-usage`` reads.

Grouping by the stored names happens in SQL; so do sums, minima and maxima. Percentiles
cannot be computed in SQL portably, so their query returns one row per rollup (the group's
columns, the count and the stored sketch) for the service to merge.
"""

from __future__ import annotations

import operator
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import ColumnElement, String, Table, and_, case, cast, func, not_, select
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession

from portico.management.product.models import Product
from portico.management.telemetry.models import MEASURES, TelemetryHourlySketch
from portico.management.telemetry.repository import tier

#: the status ``product-quota`` refuses with once the quota is spent
QUOTA_REFUSED = 429
#: a minute row's sketch column → the measure the hourly sketches are stored under
_MEASURE_OF = {column: measure for measure, column in MEASURES.items()}


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
    ) -> Sequence[Any]:
        """Per group (and period): ``measured`` and ``sketches``, the group's stored sketches
        joined by ``;`` in the database (one row per group instead of one per rollup: the
        rows, not the bytes, are what costs in the driver). Hours read the measure's rows of
        ``telemetry_sketches_hourly``, minutes their rollups."""
        clauses: list[ColumnElement[bool]] = []
        if window.hourly:
            table: Table = TelemetryHourlySketch.__table__  # type: ignore[assignment]
            period, sketch, count = "hour", table.c.sketch, table.c.count
            clauses.append(table.c.measure == _MEASURE_OF[measure.sketch])
        else:
            table, period = tier(False)
            sketch, count = table.c[measure.sketch], table.c[measure.count]
        keys: list[Any] = [table.c[name] for name in groups]
        if by_period:
            keys.append(table.c[period].label("period"))
        bind = self.session.bind
        joined = (
            func.string_agg(sketch, ";")
            if bind is not None and bind.dialect.name == "postgresql"
            else func.group_concat(sketch, ";")
        )
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
