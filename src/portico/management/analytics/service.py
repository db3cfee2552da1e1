"""The analytics query engine: validate a query into a ``Plan``, read the rollup tiers it
needs, merge, aggregate, sort and page.

Tiers: a time series by minute reads minutes. Anything else reads whole hours from the
hourly tier and only the ragged edges of the window (before its first and after its last
whole hour) from minutes, so a 24-hour window reads about 24 hours' rows plus at most two
hours of minutes, whatever its alignment.

Percentiles merge the rollups' sketches (``sketch.Accumulator``): exact merges of 1 %-accurate
histograms, never averages of percentiles.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from portico.core.errors import ValidationFailed
from portico.management.access import OrgCaller
from portico.management.analytics.hour_cache import hourly_merges
from portico.management.analytics.repository import (
    AnalyticsRepository,
    Condition,
    Measure,
    Window,
)
from portico.management.analytics.schemas import (
    AGGREGATIONS,
    DIMENSIONS,
    MAX_WINDOW_DAYS,
    METRICS,
    OPERATORS,
    PERCENTILES,
    SORT_ORDERS,
    TIME_UNITS,
    FilterIn,
    MetricsQuery,
)
from portico.management.telemetry import sketch as sketches

MEASURES = {
    "response-time": Measure(
        "requests", ("latency_ms_sum",), "latency_ms_min", "latency_ms_max", "latency_sketch"
    ),
    "upstream-response-time": Measure(
        "upstream_requests",
        ("upstream_ms_sum",),
        "upstream_ms_min",
        "upstream_ms_max",
        "upstream_sketch",
    ),
    "request-size": Measure(
        "requests", ("request_bytes",), "request_bytes_min", "request_bytes_max", "request_sketch"
    ),
    "response-size": Measure(
        "requests",
        ("response_bytes",),
        "response_bytes_min",
        "response_bytes_max",
        "response_sketch",
    ),
    "total-transfer-size": Measure(
        "requests",
        ("request_bytes", "response_bytes"),
        "transfer_bytes_min",
        "transfer_bytes_max",
        "transfer_sketch",
    ),
}
_UNIT_SECONDS = {"second": 1, "minute": 60, "hour": 3600, "day": 86400}


@dataclass(frozen=True)
class Plan:
    metric: str
    aggregation: str
    dimensions: tuple[str, ...]
    conditions: tuple[Condition, ...]
    start: datetime
    end: datetime
    time_unit: str | None  # None: one row per group
    page: int
    size: int
    sort_field: str
    sort_order: str


def _fail(pointer: str, detail: str) -> ValidationFailed:
    return ValidationFailed.at(pointer, detail)


def _choice(value: str, allowed: Iterable[str], what: str, pointer: str) -> None:
    allowed = list(allowed)
    if value not in allowed:
        raise _fail(pointer, f"unknown {what} '{value}'; one of: {', '.join(allowed)}")


def check_metric(metric: str, *, pointer: str | None = None) -> None:
    if metric not in METRICS:
        detail = f"unknown metric '{metric}'; one of: {', '.join(METRICS)}"
        if pointer is None:
            raise ValidationFailed([{"parameter": "metric", "detail": detail}])
        raise _fail(pointer, detail)


def check_aggregation(aggregation: str | None, pointer: str) -> str:
    if aggregation is None:
        return "AVG"
    _choice(aggregation, AGGREGATIONS, "aggregation", pointer)
    return aggregation


def check_dimensions(dimensions: Sequence[str], pointer: str) -> tuple[str, ...]:
    for index, name in enumerate(dimensions):
        _choice(name, DIMENSIONS, "dimension", f"{pointer}/{index}")
    if len(set(dimensions)) != len(dimensions):
        raise _fail(pointer, "dimensions must be unique")
    return tuple(dimensions)


def _conditions(filters: Sequence[FilterIn]) -> tuple[Condition, ...]:
    out = []
    for index, item in enumerate(filters):
        _choice(item.column, DIMENSIONS, "dimension", f"/filters/{index}/column")
        _choice(item.operator, OPERATORS, "operator", f"/filters/{index}/operator")
        column = DIMENSIONS[item.column]
        values: list[Any] = []
        for position, value in enumerate(item.value):
            if column == "status":
                if isinstance(value, str) and item.operator in ("LIKE", "NOT_LIKE"):
                    values.append(value)
                    continue
                try:
                    number = int(value)
                except ValueError:
                    number = None
                if number is None or (isinstance(value, float) and not value.is_integer()):
                    raise _fail(
                        f"/filters/{index}/value/{position}",
                        f"'{value}' is not a status code (an integer)",
                    )
                values.append(number)
            else:
                values.append(str(value))
        out.append(Condition(column, item.operator, tuple(values)))
    return tuple(out)


def plan(*, metric: str, query: MetricsQuery, extra: Sequence[Condition] = ()) -> Plan:
    """Check every word of ``query`` (400 naming it) and the window."""
    check_metric(metric)
    aggregation = check_aggregation(query.aggregation, "/aggregation")
    dimensions = check_dimensions(query.dimensions, "/dimensions")
    conditions = _conditions(query.filters) + tuple(extra)
    start, end = query.start_time, query.end_time
    for moment, pointer in ((start, "/startTime"), (end, "/endTime")):
        if moment.tzinfo is None:
            raise _fail(pointer, "must carry a time zone (UTC)")
    start, end = start.astimezone(UTC), end.astimezone(UTC)
    if end < start:
        raise _fail("/endTime", "must not be before startTime")
    if end - start > timedelta(days=MAX_WINDOW_DAYS):
        raise _fail("/endTime", f"the window must not exceed {MAX_WINDOW_DAYS} days")
    time_unit: str | None = None
    if not query.exclude_time_unit:
        _choice(query.time_unit, TIME_UNITS, "time unit", "/timeUnit")
        time_unit = query.time_unit
    page_request = query.page_request
    page, size = (page_request.page, page_request.size) if page_request else (1, 100)
    sort = page_request.sort if page_request else None
    default_field = "timeBucket" if time_unit else "value"
    sort_field = sort.field if sort else default_field
    if sort_field not in ("value", "timeBucket", *dimensions):
        allowed = ["value", *(["timeBucket"] if time_unit else []), *dimensions]
        raise _fail(
            "/pageRequest/sort/field",
            f"cannot sort by '{sort_field}'; one of: {', '.join(allowed)}",
        )
    sort_order = sort.order if sort else ("ASC" if sort_field == "timeBucket" else "DESC")
    _choice(sort_order, SORT_ORDERS, "sort order", "/pageRequest/sort/order")
    return Plan(
        metric=metric,
        aggregation=aggregation,
        dimensions=dimensions,
        conditions=conditions,
        start=start,
        end=end,
        time_unit=time_unit,
        page=page,
        size=size,
        sort_field=sort_field,
        sort_order=sort_order,
    )


# ---------------------------------------------------------------------------- running


def _floor(moment: datetime, seconds: int) -> datetime:
    epoch = int(moment.timestamp())
    return datetime.fromtimestamp(epoch - epoch % seconds, UTC)


def _ceil(moment: datetime, seconds: int) -> datetime:
    floor = _floor(moment, seconds)
    return floor if floor == moment else floor + timedelta(seconds=seconds)


def windows(start: datetime, end: datetime, *, minutes_only: bool) -> list[Window]:
    """The tier reads that cover ``[start, end)``: whole hours from the hourly tier, the
    edges from minutes."""
    first, last = _ceil(start, 3600), _floor(end, 3600)
    if minutes_only or first >= last:
        return [Window(False, start, end)]
    out = [Window(True, first, last)]
    if start < first:
        out.append(Window(False, start, first))
    if last < end:
        out.append(Window(False, last, end))
    return out


@dataclass
class Cell:
    requests: int = 0
    count: int = 0
    total: float = 0.0
    low: float | None = None
    high: float | None = None
    sketch: sketches.Accumulator | None = None

    def add(self, row: Any, measured: bool) -> None:
        self.requests += int(row.requests or 0)
        if not measured:
            return
        self.count += int(row.measured or 0)
        self.total += float(row.total or 0)
        if row.low is not None:
            self.low = row.low if self.low is None else min(self.low, row.low)
        if row.high is not None:
            self.high = row.high if self.high is None else max(self.high, row.high)

    def merge(self, other: Cell) -> None:
        self.requests += other.requests
        self.count += other.count
        self.total += other.total
        if other.low is not None:
            self.low = other.low if self.low is None else min(self.low, other.low)
        if other.high is not None:
            self.high = other.high if self.high is None else max(self.high, other.high)
        if other.sketch is not None:
            if self.sketch is None:
                self.sketch = sketches.Accumulator()
            self.sketch.merge(other.sketch)


GroupKey = tuple[tuple[Any, ...], datetime | None]


@dataclass
class Outcome:
    cells: dict[GroupKey, Cell] = field(default_factory=dict)

    def cell(self, key: GroupKey) -> Cell:
        found = self.cells.get(key)
        if found is None:
            found = self.cells[key] = Cell()
        return found


def _bucket(period: datetime, plan: Plan) -> datetime | None:
    if plan.time_unit is None:
        return None
    return _floor(period, TIME_UNITS[plan.time_unit])


def _seconds(plan: Plan, bucket: datetime | None) -> float:
    if bucket is None:
        return max((plan.end - plan.start).total_seconds(), 0.0)
    assert plan.time_unit is not None
    bucket_end = bucket + timedelta(seconds=TIME_UNITS[plan.time_unit])
    return max((min(bucket_end, plan.end) - max(bucket, plan.start)).total_seconds(), 0.0)


def _value(plan: Plan, cell: Cell, bucket: datetime | None) -> float | int | None:
    if plan.metric == "requests-count":
        return cell.requests
    if plan.metric == "requests-per-second":
        seconds = _seconds(plan, bucket)
        return round(cell.requests / seconds, 6) if seconds else None
    if cell.count <= 0:
        return None
    aggregation = plan.aggregation
    result: float | None
    if aggregation == "AVG":
        result = cell.total / cell.count
    elif aggregation == "SUM":
        result = cell.total
    elif aggregation == "MIN":
        result = cell.low
    elif aggregation == "MAX":
        result = cell.high
    else:
        result = (
            sketches.quantile(cell.sketch.sketch(), PERCENTILES[aggregation])
            if cell.sketch is not None
            else None
        )
    return None if result is None else round(float(result), 3)


async def _read(repository: AnalyticsRepository, org_id: uuid.UUID, plan: Plan) -> Outcome:
    outcome = Outcome()
    measure = MEASURES.get(plan.metric)
    percentile = measure is not None and plan.aggregation in PERCENTILES
    groups = [DIMENSIONS[name] for name in plan.dimensions]
    width = len(groups)
    by_period = plan.time_unit is not None
    for window in windows(plan.start, plan.end, minutes_only=plan.time_unit == "minute"):
        if percentile and window.hourly:
            assert measure is not None
            merges = await hourly_merges(
                repository,
                window,
                org_id=org_id,
                conditions=plan.conditions,
                groups=groups,
                measure=measure,
            )
            for hour, merge in merges:
                bucket = _bucket(hour, plan) if by_period else None
                for group, (measured, merged) in merge.groups.items():
                    cell = outcome.cell((group, bucket))
                    if cell.sketch is None:
                        cell.sketch = sketches.Accumulator()
                    cell.sketch.merge(merged)
                    cell.count += measured
        elif percentile:
            assert measure is not None
            rows = await repository.sketches(
                window,
                org_id=org_id,
                conditions=plan.conditions,
                groups=groups,
                by_period=by_period,
                measure=measure,
            )
            for row in rows:
                if row.measured is None:  # an aggregate without groups over no rows
                    continue
                key = (tuple(row[:width]), _bucket(row.period, plan) if by_period else None)
                cell = outcome.cell(key)
                if cell.sketch is None:
                    cell.sketch = sketches.Accumulator()
                measured = int(row.measured or 0)
                cell.sketch.add_joined(row.sketches or "")
                cell.count += measured
        else:
            rows = await repository.totals(
                window,
                org_id=org_id,
                conditions=plan.conditions,
                groups=groups,
                by_period=by_period,
                measure=measure,
            )
            for row in rows:
                if row.requests is None:  # an aggregate without groups over no rows
                    continue
                key = (tuple(row[:width]), _bucket(row.period, plan) if by_period else None)
                outcome.cell(key).add(row, measure is not None)
    return outcome


def _sorted(plan: Plan, items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    field_name = plan.sort_field
    descending = plan.sort_order == "DESC"

    def value_of(item: dict[str, Any]) -> Any:
        if field_name == "value":
            return item["value"]
        if field_name == "timeBucket":
            return item.get("timeBucket")
        return item["dimensions"][field_name]

    present = [item for item in items if value_of(item) is not None]
    missing = [item for item in items if value_of(item) is None]  # last, either way
    present.sort(key=value_of, reverse=descending)
    return present + missing


def _document(plan: Plan, total: Any, items: list[dict[str, Any]]) -> dict[str, Any]:
    ordered = _sorted(plan, items)
    first = (plan.page - 1) * plan.size
    return {
        "value": total,
        "timeRange": {"startTime": _iso(plan.start), "endTime": _iso(plan.end)},
        "groupedResults": ordered[first : first + plan.size],
        "meta": {"page": plan.page, "size": plan.size, "total": len(ordered)},
    }


def _iso(moment: datetime) -> str:
    return moment.astimezone(UTC).isoformat().replace("+00:00", "Z")


def _dimension_value(name: str, value: Any) -> Any:
    if value is None:
        return ""
    return value


async def run(*, session: AsyncSession, caller: OrgCaller, plan: Plan) -> dict[str, Any]:
    """The query's result document (see ``schemas.MetricsResult``)."""
    repository = AnalyticsRepository(session)
    if plan.metric == "quota-usage":
        return await _quota_usage(repository, caller.org_id, plan)
    outcome = await _read(repository, caller.org_id, plan)
    items: list[dict[str, Any]] = []
    everything = Cell()
    for (group, bucket), cell in outcome.cells.items():
        everything.merge(cell)
        item: dict[str, Any] = {}
        if plan.dimensions:
            item["dimensions"] = {
                name: _dimension_value(name, value)
                for name, value in zip(plan.dimensions, group, strict=True)
            }
        if bucket is not None:
            item["timeBucket"] = _iso(bucket)
        item["value"] = _value(plan, cell, bucket)
        items.append(item)
    return _document(plan, _value(plan, everything, None), items)


async def query(
    *, session: AsyncSession, caller: OrgCaller, metric: str, body: MetricsQuery
) -> dict[str, Any]:
    return await run(session=session, caller=caller, plan=plan(metric=metric, query=body))


# ---------------------------------------------------------------------------- quota usage


def quota_window(moment: datetime, quota: dict[str, Any]) -> datetime | None:
    """The start of the fixed, UTC-aligned quota window holding ``moment``; None when the
    window is shorter than a minute (per-minute rollups cannot tell its usage)."""
    interval = max(int(quota.get("interval", 1)), 1)
    unit = str(quota.get("interval_unit", "minute"))
    if unit == "month":
        months = moment.year * 12 + moment.month - 1
        start = months - months % interval
        return datetime(start // 12, start % 12 + 1, 1, tzinfo=UTC)
    seconds = interval * _UNIT_SECONDS.get(unit, 60)
    if seconds < 60 or seconds % 60:
        return None
    return _floor(moment, seconds)


async def _quota_usage(
    repository: AnalyticsRepository, org_id: uuid.UUID, plan: Plan
) -> dict[str, Any]:
    """Share of each product quota spent, per app (or developer, by the quota's key scope)
    and quota window: requests metered / limit. Products without a quota or with an
    unlimited one (-1) have nothing to spend and are left out; windows shorter than a minute
    are listed with a null value."""
    quotas = await repository.quotas(org_id)
    groups = [DIMENSIONS[name] for name in plan.dimensions]
    width = len(groups)
    spent: dict[tuple[Any, ...], int] = {}
    labels: dict[tuple[Any, ...], dict[str, Any]] = {}
    for window in windows(plan.start, plan.end, minutes_only=True):
        rows = await repository.metered(
            window, org_id=org_id, conditions=plan.conditions, groups=groups
        )
        for row in rows:
            quota = quotas.get(row.product_id)
            if not quota or int(quota.get("limit", -1)) < 0:
                continue
            by_developer = quota.get("key_scope") == "developer"
            subject = row.developer_id if by_developer else row.app_id
            start = quota_window(row.period, quota)
            key = (tuple(row[:width]), row.product_id, subject, start)
            spent[key] = spent.get(key, 0) + int(row.requests)
            dimensions = dict(zip(plan.dimensions, row[:width], strict=True))
            dimensions["product_name"] = row.product_name
            if by_developer:
                dimensions["developer"] = row.developer_email
            else:
                dimensions["app_id"] = row.app_id
                dimensions["app_name"] = row.app_name
            labels[key] = {"dimensions": dimensions, "limit": int(quota["limit"])}
    items: list[dict[str, Any]] = []
    peak: float | None = None
    for key, requests in spent.items():
        start = key[3]
        limit = labels[key]["limit"]
        value: float | None = None
        if start is not None:
            value = round(requests / limit, 6) if limit else None
            if value is not None:
                peak = value if peak is None else max(peak, value)
        item: dict[str, Any] = {"dimensions": labels[key]["dimensions"], "value": value}
        if start is not None:
            item["timeBucket"] = _iso(start)
        item["requests"] = requests
        item["limit"] = limit
        items.append(item)
    return _document(plan, peak, items)
