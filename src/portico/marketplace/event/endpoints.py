"""Audit events of the marketplace: list, one event, export, statistics, types.

Every route needs ``view marketplace audit log``. The query string is strict as everywhere
(``core/query.py``): ``filter[...]`` keys other than the documented ones, and
``page``/``limit``/``sort`` where a route does not page (its description leaves them out),
are 400s naming the parameter.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Query, Request
from fastapi.responses import StreamingResponse

from portico.core.clock import Clock
from portico.core.db.session import SessionDep
from portico.core.envelope import Collection, Envelope, collection
from portico.core.errors import ValidationFailed
from portico.core.pagination import ListQuery, ListSpec, list_query
from portico.marketplace.access import SiteCaller, parse_uuid, require
from portico.marketplace.event import export
from portico.marketplace.event import service as event_service
from portico.marketplace.event.repository import EventFilters
from portico.marketplace.event.schemas import EventRead, EventStats, EventTypes
from portico.marketplace.event.service import FILTERS, EventNotFound

router = APIRouter(prefix="/events", tags=["events"])

Viewer = Annotated[SiteCaller, Depends(require("view marketplace audit log"))]

LIST = ListSpec(
    sortable=frozenset({"occurred_at", "operation", "entity_type"}),
    default_sort="-occurred_at",
    filterable=FILTERS,
    filter_style="bracket",
    size_param="limit",
    default_size=50,
    max_size=500,
)

_DATE_TIME = {"type": "string", "format": "date-time"}
FILTER_PARAMETERS: dict[str, dict[str, Any]] = {
    "operation": {"description": "Operation, e.g. user.approve."},
    "entity_type": {"description": "Entity type, e.g. user."},
    "entity_id": {"description": "Id of the entity changed."},
    "actor": {"description": "Who acted: an account id, or an email (case-insensitive)."},
    "bundle": {"description": "Content bundle, e.g. apis."},
    "module": {"description": "Module that made the change."},
    "from": {
        "description": "Events at or after this ISO-8601 date-time (with a time zone).",
        "schema": _DATE_TIME,
    },
    "to": {
        "description": "Events before this ISO-8601 date-time (with a time zone).",
        "schema": _DATE_TIME,
    },
}


def _described(*, paged: bool) -> dict[str, Any]:
    return {"parameters": LIST.openapi_parameters(FILTER_PARAMETERS, paged=paged)}


def _only_filters(
    *, filterable: frozenset[str], extra: frozenset[str] = frozenset()
) -> Callable[[Request], EventFilters]:
    """A dependency for the routes that do not page: filters (and ``extra``) only. That
    they take no page, limit or sort is for the strict query check to say: these routes
    describe (``_described(paged=False)``) only what they read."""
    spec = ListSpec(
        sortable=LIST.sortable,
        default_sort=LIST.default_sort,
        filterable=filterable,
        filter_style="bracket",
        size_param="limit",
        extra_params=extra,
    )

    def dependency(request: Request) -> EventFilters:
        params = list(request.query_params.multi_items())
        return event_service.parse_filters(spec.parse(params).filters)

    return dependency


@router.get(
    "",
    response_model=Collection[EventRead],
    openapi_extra=_described(paged=True),
)
async def list_events(
    request: Request,
    _caller: Viewer,
    session: SessionDep,
    query: Annotated[ListQuery, Depends(list_query(LIST))],
) -> Collection[EventRead]:
    """Audit events of the marketplace, newest first by default."""
    page = await event_service.list_events(session=session, query=query)
    return collection(request, page, [EventRead.of(e) for e in page.items])


@router.get(
    "/export",
    response_class=StreamingResponse,
    responses={
        200: {
            "description": "Every matched event, newest first: NDJSON (one event per line, "
            "the shape of GET /events/{event}) or CSV with a header row.",
            "content": {
                "application/x-ndjson": {"schema": {"type": "string"}},
                "text/csv": {"schema": {"type": "string"}},
            },
        }
    },
    openapi_extra=_described(paged=False),
)
async def export_events(
    request: Request,
    _caller: Viewer,
    filters: Annotated[
        EventFilters, Depends(_only_filters(filterable=FILTERS, extra=frozenset({"format"})))
    ],
    format_: Annotated[
        str,
        Query(
            alias="format",
            description="ndjson (default) or csv.",
            json_schema_extra={"enum": sorted(export.FORMATS)},
        ),
    ] = "ndjson",
) -> StreamingResponse:
    """Stream the matched events as a download, in constant memory."""
    fmt = export.FORMATS.get(format_)
    if fmt is None:  # checked before the response starts: a stream cannot turn into a 400
        raise ValidationFailed(
            [{"parameter": "format", "detail": "format: must be one of csv, ndjson"}]
        )
    clock: Clock = request.app.state.clock
    return StreamingResponse(
        export.stream(request.app.state.database, filters, fmt),
        media_type=fmt.media_type,
        headers={
            "Content-Disposition": f'attachment; filename="{export.filename(fmt, clock.now())}"',
            "Cache-Control": "no-store",
        },
    )


@router.get(
    "/stats",
    response_model=Envelope[EventStats],
    openapi_extra=_described(paged=False),
)
async def event_stats(
    _caller: Viewer,
    session: SessionDep,
    filters: Annotated[EventFilters, Depends(_only_filters(filterable=FILTERS))],
) -> Envelope[EventStats]:
    """Counts of the matched events by operation, entity type and UTC day."""
    return Envelope[EventStats](data=await event_service.stats(session=session, filters=filters))


@router.get("/types", response_model=Envelope[EventTypes])
async def event_types(
    _caller: Viewer,
    session: SessionDep,
    _filters: Annotated[EventFilters, Depends(_only_filters(filterable=frozenset()))],
) -> Envelope[EventTypes]:
    """The operations, entity types, bundles and modules present in the log."""
    return Envelope[EventTypes](data=await event_service.types(session=session))


@router.get("/{event}", response_model=Envelope[EventRead])
async def get_event(event: str, _caller: Viewer, session: SessionDep) -> Envelope[EventRead]:
    entry = await event_service.get_event(
        session=session, event_id=parse_uuid(event, EventNotFound)
    )
    return Envelope[EventRead](data=EventRead.of(entry))
