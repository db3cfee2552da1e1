"""Widgets: ``{name, metric, aggregation, dimensions, chart, filters}``. The metric, the
aggregation and the dimensions are checked by the analytics query's own rules
(``analytics.service``), so a widget saves only what the query would accept."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, Field, ValidationError, model_validator

from portico.core.schema import ReadSchema, WriteSchema, no_control_characters
from portico.core.validation import describe, invalid

Chart = Literal["line", "bar", "pie", "table", "number"]
RelativeWindow = Literal["1h", "24h", "7d"]
WINDOWS = ("1h", "24h", "7d")
WidgetName = Annotated[
    str,
    Field(min_length=1, max_length=128, pattern=r"^\S(.*\S)?$"),
    AfterValidator(no_control_characters),
]


class FixedWindow(WriteSchema):
    start_time: Annotated[datetime, Field(strict=False)]
    end_time: Annotated[datetime, Field(strict=False)]


class WidgetFilters(WriteSchema):
    api_id: Annotated[uuid.UUID, Field(strict=False)] | None = None
    environment_id: Annotated[uuid.UUID, Field(strict=False)] | None = None
    window: RelativeWindow | FixedWindow = Field(
        description="'1h', '24h' or '7d' back from now, or a fixed {startTime, endTime}."
    )

    @model_validator(mode="before")
    @classmethod
    def _one_window(cls, data: Any) -> Any:
        """Errors name the window (or its field), not a branch of the union."""
        if not isinstance(data, dict) or "window" not in data:
            return data
        window = data["window"]
        if isinstance(window, dict):
            try:
                return {**data, "window": FixedWindow.model_validate(window)}
            except ValidationError as error:
                first = error.errors()[0]
                invalid(("window", *first["loc"]), describe(first, ("window", *first["loc"])))
        if window not in WINDOWS:
            invalid(("window",), "must be '1h', '24h', '7d' or an object {startTime, endTime}")
        return data


class WidgetCreate(WriteSchema):
    name: WidgetName
    metric: str = Field(max_length=64)
    aggregation: str = Field("AVG", max_length=16)
    dimensions: list[Annotated[str, Field(max_length=64)]] = Field(
        default_factory=list, max_length=13
    )
    chart: Chart
    filters: WidgetFilters


class WidgetUpdate(WriteSchema):
    name: WidgetName | None = None
    metric: str | None = Field(None, max_length=64)
    aggregation: str | None = Field(None, max_length=16)
    dimensions: list[Annotated[str, Field(max_length=64)]] | None = Field(None, max_length=13)
    chart: Chart | None = None
    filters: WidgetFilters | None = None


class WidgetRead(ReadSchema):
    id: uuid.UUID
    org_id: uuid.UUID
    name: str
    metric: str
    aggregation: str
    dimensions: list[str]
    chart: str
    filters: dict[str, Any]
    created_at: datetime
    updated_at: datetime


class WidgetData(ReadSchema):
    """The widget's query result: ``data`` holds the query's ``groupedResults`` (a time
    series for line and bar charts, one row per group for pie and table, ``[{value}]`` for
    number); ``message`` is there only when nothing matched."""

    data: list[dict[str, Any]]
    message: str | None = None
    value: int | float | None = Field(description="The metric over the whole window.")
    time_range: dict[str, str]
    time_unit: str | None = Field(description="The series' bucket (line, bar); else null.")
