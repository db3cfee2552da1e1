"""API health: the dashboard and one API's record (permission ``view api health
dashboard``), and an immediate check queued as a job (``refresh api health``)."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Request, Response

from portico.core.db.session import SessionDep
from portico.core.envelope import Envelope, JobAccepted, accepted, collection
from portico.core.pagination import ListQuery, ListSpec, list_query
from portico.marketplace.access import SiteCaller, parse_uuid, require
from portico.marketplace.health import service as health_service
from portico.marketplace.health.models import HealthStatus
from portico.marketplace.health.schemas import (
    ApiRef,
    CheckRead,
    DashboardMeta,
    HealthDashboard,
    HealthRecord,
    HealthRow,
    StatusCounts,
)
from portico.marketplace.health.service import ApiNotFound
from portico.marketplace.health.target import health_url

router = APIRouter(prefix="/health", tags=["API health"])

DASHBOARD = ListSpec(
    sortable=frozenset({"title", "status", "checked_at", "latency_ms"}),
    default_sort="title",
    filterable=frozenset({"status", "organisation"}),
    filter_style="bracket",
    size_param="limit",
    default_size=50,
    max_size=500,
)
DASHBOARD_FILTERS: dict[str, dict[str, Any]] = {
    "status": {
        "description": "APIs whose latest check has this status (unknown: never checked, "
        "no health URL, or a URL the SSRF guard refuses).",
        "schema": {"type": "string", "enum": [s.value for s in HealthStatus]},
    },
    "organisation": {
        "description": "APIs of this portal organisation (its id).",
        "schema": {"type": "string", "format": "uuid"},
    },
}
Viewer = Annotated[SiteCaller, Depends(require("view api health dashboard"))]
Refresher = Annotated[SiteCaller, Depends(require("refresh api health"))]


@router.get(
    "",
    response_model=HealthDashboard,
    openapi_extra={"parameters": DASHBOARD.openapi_parameters(DASHBOARD_FILTERS)},
)
async def list_health(
    request: Request,
    _caller: Viewer,
    session: SessionDep,
    query: ListQuery = Depends(list_query(DASHBOARD)),
) -> HealthDashboard:
    """Every published API with its latest check, by title; ``meta.status_counts`` counts
    the APIs per status across all pages. Filters ``filter[status]``,
    ``filter[organisation]``."""
    page, counts = await health_service.dashboard(session=session, query=query)
    rows = [
        HealthRow(
            api=ApiRef.of(node),
            status=check.status if check else HealthStatus.UNKNOWN,
            last_check=CheckRead.of(check) if check else None,
        )
        for node, check in page.items
    ]
    listed = collection(request, page, rows)
    meta = DashboardMeta(
        **listed.meta.model_dump(), status_counts=StatusCounts.model_validate(counts)
    )
    return HealthDashboard(data=listed.data, meta=meta, links=listed.links)


@router.get("/{node}", response_model=Envelope[HealthRecord])
async def get_health(
    node: str, request: Request, _caller: Viewer, session: SessionDep
) -> Envelope[HealthRecord]:
    """The API's health: its status (its latest check's), the URL a check calls and how it
    was found, and its 20 latest checks."""
    api, checks = await health_service.record(
        session=session, node_id=parse_uuid(node, ApiNotFound)
    )
    url, source = health_url(api.documentation, request.app.state.settings.marketplace_health_path)
    latest = CheckRead.of(checks[0]) if checks else None
    record = HealthRecord(
        api=ApiRef.of(api),
        status=latest.status if latest else HealthStatus.UNKNOWN,
        health_url=url,
        health_url_source=source,
        last_check=latest,
        recent_checks=[CheckRead.of(c) for c in checks],
    )
    return Envelope[HealthRecord](data=record)


@router.post("/{node}/check", response_model=JobAccepted, status_code=202)
async def check_health(
    node: str, request: Request, caller: Refresher, session: SessionDep
) -> Response:
    """Queue an immediate check of the API's health URL: 202 with the ``health-check``
    job's id, followed at ``GET /jobs/{job}`` (its result: status, HTTP status, latency);
    the check then shows in ``GET /health/{node}``."""
    job = await health_service.queue_check(
        session=session,
        caller=caller,
        node_id=parse_uuid(node, ApiNotFound),
        now=request.app.state.clock.now(),
    )
    return accepted(request, str(job.id))
