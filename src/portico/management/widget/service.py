"""Widgets: saved analytics queries. Create, read, change, delete (every change audited),
and run one (``data``) over its window, relative windows ending at the clock's now."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from portico.core.clock import Clock
from portico.core.errors import NotFound, ValidationFailed
from portico.core.pagination import ListQuery, Page
from portico.management.access import OrgCaller
from portico.management.analytics import service as analytics_service
from portico.management.analytics.repository import Condition
from portico.management.analytics.schemas import MAX_WINDOW_DAYS
from portico.management.api.repository import ApiRepository
from portico.management.environment.repository import EnvironmentRepository
from portico.management.widget.models import Widget
from portico.management.widget.repository import WidgetRepository
from portico.management.widget.schemas import (
    FixedWindow,
    WidgetCreate,
    WidgetFilters,
    WidgetRead,
    WidgetUpdate,
)

NO_DATA = "No data for the selected filters"
RELATIVE = {"1h": timedelta(hours=1), "24h": timedelta(hours=24), "7d": timedelta(days=7)}
#: a series' bucket by window: a line of about 24 to 168 points
SERIES_UNIT = {"1h": "minute", "24h": "hour", "7d": "day"}
_SERIES_MAX_ROWS = 1000


class WidgetNotFound(NotFound):
    default_detail = "widget not found"


def snapshot(widget: Widget) -> dict[str, Any]:
    return WidgetRead.model_validate(widget).model_dump(mode="json")


async def get(*, session: AsyncSession, caller: OrgCaller, widget_id: uuid.UUID) -> Widget:
    widget = await WidgetRepository(session).get_in_org(caller.org_id, widget_id)
    if widget is None:
        raise WidgetNotFound()
    return widget


async def list_(*, session: AsyncSession, caller: OrgCaller, query: ListQuery) -> Page[Widget]:
    repository = WidgetRepository(session)
    return await repository.page_in_org(caller.org_id, query)


async def _check(
    session: AsyncSession,
    caller: OrgCaller,
    *,
    metric: str,
    aggregation: str,
    dimensions: list[str],
    filters: WidgetFilters,
) -> dict[str, Any]:
    """The query rules of analytics, and the filters' references; the filters as stored."""
    analytics_service.check_metric(metric, pointer="/metric")
    analytics_service.check_aggregation(aggregation, "/aggregation")
    analytics_service.check_dimensions(dimensions, "/dimensions")
    window = filters.window
    if isinstance(window, FixedWindow):
        for moment, name in ((window.start_time, "startTime"), (window.end_time, "endTime")):
            if moment.tzinfo is None:
                raise ValidationFailed.at(f"/filters/window/{name}", "must carry a time zone (UTC)")
        if window.end_time < window.start_time:
            raise ValidationFailed.at("/filters/window/endTime", "must not be before startTime")
        if window.end_time - window.start_time > timedelta(days=MAX_WINDOW_DAYS):
            raise ValidationFailed.at(
                "/filters/window/endTime",
                f"the window must not exceed {MAX_WINDOW_DAYS} days",
            )
    if filters.environment_id is not None and (
        await EnvironmentRepository(session).get_in_org(caller.org_id, filters.environment_id)
        is None
    ):
        raise ValidationFailed.at("/filters/environmentId", "no such environment")
    if filters.api_id is not None and (
        await ApiRepository(session).get_in_org(caller.org_id, filters.api_id) is None
    ):
        raise ValidationFailed.at("/filters/apiId", "no such API")
    stored: dict[str, Any] = filters.model_dump(mode="json", by_alias=True, exclude_none=True)
    return stored


async def create(*, session: AsyncSession, caller: OrgCaller, data: WidgetCreate) -> Widget:
    filters = await _check(
        session,
        caller,
        metric=data.metric,
        aggregation=data.aggregation,
        dimensions=data.dimensions,
        filters=data.filters,
    )
    widget = Widget(
        id=uuid.uuid4(),
        org_id=caller.org_id,
        name=data.name,
        metric=data.metric,
        aggregation=data.aggregation,
        dimensions=list(data.dimensions),
        chart=data.chart,
        filters=filters,
    )
    await WidgetRepository(session).add(widget)
    await caller.audit(session, "widget.create", widget.id, after=snapshot(widget))
    return widget


async def update(
    *, session: AsyncSession, caller: OrgCaller, widget_id: uuid.UUID, data: WidgetUpdate
) -> Widget:
    widget = await get(session=session, caller=caller, widget_id=widget_id)
    before = snapshot(widget)
    filters = (
        data.filters
        if data.filters is not None
        else WidgetFilters.model_validate(widget.filters, strict=False)
    )
    widget.filters = await _check(
        session,
        caller,
        metric=data.metric if data.metric is not None else widget.metric,
        aggregation=data.aggregation if data.aggregation is not None else widget.aggregation,
        dimensions=data.dimensions if data.dimensions is not None else widget.dimensions,
        filters=filters,
    )
    if data.name is not None:
        widget.name = data.name
    if data.metric is not None:
        widget.metric = data.metric
    if data.aggregation is not None:
        widget.aggregation = data.aggregation
    if data.dimensions is not None:
        widget.dimensions = list(data.dimensions)
    if data.chart is not None:
        widget.chart = data.chart
    await session.flush()
    await session.refresh(widget)
    await caller.audit(session, "widget.update", widget.id, before=before, after=snapshot(widget))
    return widget


async def delete(*, session: AsyncSession, caller: OrgCaller, widget_id: uuid.UUID) -> None:
    widget = await get(session=session, caller=caller, widget_id=widget_id)
    before = snapshot(widget)
    await WidgetRepository(session).delete(widget)
    await caller.audit(session, "widget.delete", widget_id, before=before)


def _window(filters: dict[str, Any], now: datetime) -> tuple[datetime, datetime, str]:
    """(start, end, series unit) of the stored window."""
    window = filters["window"]
    if isinstance(window, str):
        return now - RELATIVE[window], now, SERIES_UNIT[window]
    start = datetime.fromisoformat(window["startTime"]).astimezone(UTC)
    end = datetime.fromisoformat(window["endTime"]).astimezone(UTC)
    length = end - start
    unit = "minute" if length <= timedelta(hours=2) else "hour"
    if length > timedelta(days=2):
        unit = "day"
    return start, end, unit


async def data(
    *, session: AsyncSession, caller: OrgCaller, widget_id: uuid.UUID, clock: Clock
) -> dict[str, Any]:
    widget = await get(session=session, caller=caller, widget_id=widget_id)
    filters = widget.filters
    start, end, unit = _window(filters, clock.now())
    conditions = []
    if "apiId" in filters:
        conditions.append(Condition("api_id", "EQ", (filters["apiId"],)))
    if "environmentId" in filters:
        conditions.append(Condition("environment_id", "EQ", (uuid.UUID(filters["environmentId"]),)))
    series = widget.chart in ("line", "bar") and widget.metric != "quota-usage"
    plan = analytics_service.Plan(
        metric=widget.metric,
        aggregation=widget.aggregation,
        dimensions=() if widget.chart == "number" else tuple(widget.dimensions),
        conditions=tuple(conditions),
        start=start,
        end=end,
        time_unit=unit if series else None,
        page=1,
        size=_SERIES_MAX_ROWS,
        sort_field="timeBucket" if series else "value",
        sort_order="ASC" if series else "DESC",
    )
    result = await analytics_service.run(session=session, caller=caller, plan=plan)
    rows: list[dict[str, Any]] = result["groupedResults"]
    if widget.chart == "number" and rows:
        rows = [{"value": result["value"]}]
    document: dict[str, Any] = {
        "data": rows,
        "value": result["value"],
        "timeRange": result["timeRange"],
        "timeUnit": unit if series else None,
    }
    if not rows:
        document["message"] = NO_DATA
    return document
