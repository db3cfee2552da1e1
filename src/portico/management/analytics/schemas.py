"""``POST /api/orgs/{orgId}/analytics/metrics/{metric}``: the query as the seed product's
clients send it, and the names it accepts.

The body's shape is checked here (strict, unknown fields refused); its words (metric,
dimensions, operators, aggregation, time unit, sort) are checked by ``service.plan`` so that
the message names the word and the list it must come from, on this endpoint and on widgets.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import Annotated, Any

from pydantic import Field

from portico.core.schema import ReadSchema, WriteSchema

METRICS = (
    "requests-count",
    "requests-per-second",
    "response-time",
    "upstream-response-time",
    "request-size",
    "response-size",
    "total-transfer-size",
    "quota-usage",
)
AGGREGATIONS = ("AVG", "MIN", "MAX", "SUM", "P50", "P95", "P99")
PERCENTILES = {"P50": 0.5, "P95": 0.95, "P99": 0.99}
#: dimension → rollup column
DIMENSIONS = {
    "env_name": "env_name",
    "app_id": "app_id",
    "app_name": "app_name",
    "product_name": "product_name",
    "api_name": "api_name",
    "route_id": "route_id",
    "route_name": "route_name",
    "api_path": "api_path",
    "request_method": "method",
    "response_status_code": "status",
    "upstream_path": "upstream_path",
    "developer": "developer_email",
    "consumer": "consumer",
}
OPERATORS = ("EQ", "NEQ", "GT", "GTE", "LT", "LTE", "IN", "LIKE", "NOT_LIKE")
TIME_UNITS = {"minute": 60, "hour": 3600, "day": 86400}
SORT_ORDERS = ("ASC", "DESC")
MAX_WINDOW_DAYS = 31
MAX_PAGE_SIZE = 1000


def _one_of(values: Iterable[str]) -> dict[str, Any]:
    """The accepted values, stated in the document; the type stays ``str`` so that the
    service answers an unknown one with the contract's message naming it."""
    return {"enum": list(values)}


FilterValue = Annotated[str, Field(max_length=1024)] | int | float


class FilterIn(WriteSchema):
    column: str = Field(
        max_length=64, description="A dimension name.", json_schema_extra=_one_of(DIMENSIONS)
    )
    operator: str = Field(
        max_length=16,
        description="One of " + ", ".join(OPERATORS) + ".",
        json_schema_extra=_one_of(OPERATORS),
    )
    value: list[FilterValue] = Field(
        min_length=1,
        max_length=1000,
        description="IN takes every item; the other operators the first.",
    )


class SortIn(WriteSchema):
    field: str = Field(
        "value",
        max_length=64,
        description="'value' or a dimension name.",
        json_schema_extra=_one_of(("value", *DIMENSIONS)),
    )
    order: str = Field(
        "DESC", max_length=8, description="ASC or DESC.", json_schema_extra=_one_of(SORT_ORDERS)
    )


class PageRequest(WriteSchema):
    page: int = Field(1, ge=1, le=1_000_000)
    size: int = Field(20, ge=1, le=MAX_PAGE_SIZE)
    sort: SortIn | None = None


class MetricsQuery(WriteSchema):
    start_time: Annotated[datetime, Field(strict=False)]
    end_time: Annotated[datetime, Field(strict=False)]
    dimensions: list[
        Annotated[str, Field(max_length=64, json_schema_extra=_one_of(DIMENSIONS))]
    ] = Field(default_factory=list, max_length=len(DIMENSIONS))
    filters: list[FilterIn] = Field(default_factory=list, max_length=50)
    aggregation: str | None = Field(
        None,
        max_length=16,
        description="Time and size metrics: " + ", ".join(AGGREGATIONS) + " (default AVG).",
        json_schema_extra=_one_of(AGGREGATIONS),
    )
    exclude_time_unit: bool = Field(
        False, description="True: one row per group; false: a time series by timeUnit."
    )
    time_unit: str = Field(
        "hour",
        max_length=16,
        description="minute, hour or day.",
        json_schema_extra=_one_of(TIME_UNITS),
    )
    page_request: PageRequest | None = None


class TimeRange(ReadSchema):
    start_time: datetime
    end_time: datetime


class PageMeta(ReadSchema):
    page: int
    size: int
    total: int


class MetricsResult(ReadSchema):
    """``groupedResults`` items: ``{dimensions?, timeBucket?, value}`` (dimensions when the
    query groups, timeBucket for a time series)."""

    value: int | float | None = Field(
        description="The metric over the whole window and filters (quota-usage: the highest "
        "share of any app and window)."
    )
    time_range: TimeRange
    grouped_results: list[dict[str, Any]]
    meta: PageMeta
