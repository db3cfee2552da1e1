from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Request, Response

from portico.core.db.session import SessionDep
from portico.core.pagination import ListQuery, ListSpec, list_query
from portico.management.access import OrgCaller, parse_id, require
from portico.management.pages import PageRead, page_of
from portico.management.widget import service as widget_service
from portico.management.widget.schemas import WidgetCreate, WidgetData, WidgetRead, WidgetUpdate
from portico.management.widget.service import WidgetNotFound

router = APIRouter(prefix="/api/orgs/{orgId}/widgets", tags=["analytics"])

LIST = ListSpec(
    sortable=frozenset({"name", "createdAt", "updatedAt"}),
    default_sort="name",
    filterable=frozenset(),
)
Reader = Annotated[OrgCaller, Depends(require("analytics.read"))]
Manager = Annotated[OrgCaller, Depends(require("analytics.manage"))]


@router.get("", response_model=PageRead[WidgetRead])
async def list_widgets(
    caller: Reader, session: SessionDep, query: ListQuery = Depends(list_query(LIST))
) -> PageRead[WidgetRead]:
    page = await widget_service.list_(session=session, caller=caller, query=query)
    return page_of(page, WidgetRead)


@router.post("", response_model=WidgetRead, status_code=201)
async def create_widget(body: WidgetCreate, caller: Manager, session: SessionDep) -> WidgetRead:
    widget = await widget_service.create(session=session, caller=caller, data=body)
    return WidgetRead.model_validate(widget)


@router.get("/{widgetId}", response_model=WidgetRead)
async def get_widget(widgetId: str, caller: Reader, session: SessionDep) -> WidgetRead:
    widget = await widget_service.get(
        session=session, caller=caller, widget_id=parse_id(widgetId, WidgetNotFound)
    )
    return WidgetRead.model_validate(widget)


@router.patch("/{widgetId}", response_model=WidgetRead)
async def update_widget(
    widgetId: str, body: WidgetUpdate, caller: Manager, session: SessionDep
) -> WidgetRead:
    widget = await widget_service.update(
        session=session, caller=caller, widget_id=parse_id(widgetId, WidgetNotFound), data=body
    )
    return WidgetRead.model_validate(widget)


@router.delete("/{widgetId}", status_code=204)
async def delete_widget(widgetId: str, caller: Manager, session: SessionDep) -> Response:
    await widget_service.delete(
        session=session, caller=caller, widget_id=parse_id(widgetId, WidgetNotFound)
    )
    return Response(status_code=204)


@router.get("/{widgetId}/data", response_model=WidgetData, response_model_exclude_unset=True)
async def get_widget_data(
    widgetId: str, caller: Reader, session: SessionDep, request: Request
) -> dict[str, Any]:
    """The widget's query over its window; ``message`` when nothing matches."""
    return await widget_service.data(
        session=session,
        caller=caller,
        widget_id=parse_id(widgetId, WidgetNotFound),
        clock=request.app.state.clock,
    )
