"""``POST /api/orgs/{orgId}/analytics/metrics/{metric}``: the query as the seed product's
clients send it, and the names it accepts.

The body's shape is checked here (strict, unknown fields refused); its words (metric,
dimensions, operators, aggregation, time unit, sort) are checked by ``service.plan`` so that
the message names the word and the list it must come from, on this endpoint and on widgets.
"""

from __future__ import annotations

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

FilterValue = Annotated[str, Field(max_length=1024)] | int | float


class FilterIn(WriteSchema):
    column: str = Field(max_length=64, description="A dimension name.")
    operator: str = Field(max_length=16, description="One of " + ", ".join(OPERATORS) + ".")
    value: list[FilterValue] = Field(
        min_length=1,
        max_length=1000,
        description="IN takes every item; the other operators the first.",
    )


class SortIn(WriteSchema):
    field: str = Field("value", max_length=64, description="'value' or a dimension name.")
    order: str = Field("DESC", max_length=8, description="ASC or DESC.")


class PageRequest(WriteSchema):
    page: int = Field(1, ge=1, le=1_000_000)
    size: int = Field(20, ge=1, le=MAX_PAGE_SIZE)
    sort: SortIn | None = None


class MetricsQuery(WriteSchema):
    start_time: Annotated[datetime, Field(strict=False)]
    end_time: Annotated[datetime, Field(strict=False)]
    dimensions: list[Annotated[str, Field(max_length=64)]] = Field(
        default_factory=list, max_length=len(DIMENSIONS)
    )
    filters: list[FilterIn] = Field(default_factory=list, max_length=50)
    aggregation: str | None = Field(
        None,
        max_length=16,
        description="Time and size metrics: " + ", ".join(AGGREGATIONS) + " (default AVG).",
    )
    exclude_time_unit: bool = Field(
        False, description="True: one row per group; false: a time series by timeUnit."
    )
    time_unit: str = Field("hour", max_length=16, description="minute, hour or day.")
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
