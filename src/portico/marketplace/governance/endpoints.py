"""Governance (permission ``view api governance``): the latest linting scores of every
published API, one API's latest result with its findings, and its recent runs."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Request

from portico.core.db.session import SessionDep
from portico.core.envelope import Collection, Envelope, collection
from portico.core.pagination import ListQuery, ListSpec, list_query
from portico.marketplace.access import SiteCaller, parse_uuid, require
from portico.marketplace.governance import service as governance_service
from portico.marketplace.governance import triggers as _triggers  # noqa: F401  (registers)
from portico.marketplace.governance.schemas import (
    ApiRef,
    GovernanceDetail,
    GovernanceRow,
    RunRead,
    RunSummary,
)
from portico.marketplace.governance.service import BAND_FILTER, ApiNotFound

router = APIRouter(prefix="/governance", tags=["governance"])

OVERVIEW = ListSpec(
    sortable=frozenset({"title", "score", "security", "style", "documentation", "linted_at"}),
    default_sort="title",
    filterable=frozenset({"band", "valid", "organisation"}),
    filter_style="bracket",
    size_param="limit",
    default_size=50,
    max_size=500,
)
OVERVIEW_FILTERS: dict[str, dict[str, Any]] = {
    "band": {
        "description": "APIs whose latest overall score is in this band (good ≥ 80, fair "
        "60–79, poor 40–59, failing < 40), or unlinted: never linted yet.",
        "schema": {"type": "string", "enum": list(BAND_FILTER)},
    },
    "valid": {
        "description": "APIs whose latest run found the document valid (true) or not.",
        "schema": {"type": "string", "enum": ["true", "false"]},
    },
    "organisation": {
        "description": "APIs of this portal organisation (its id).",
        "schema": {"type": "string", "format": "uuid"},
    },
}
HISTORY = ListSpec(
    sortable=frozenset({"created_at"}),
    default_sort="-created_at",
    size_param="limit",
    default_size=50,
    max_size=500,
)
Viewer = Annotated[SiteCaller, Depends(require("view api governance"))]


@router.get(
    "",
    response_model=Collection[GovernanceRow],
    openapi_extra={"parameters": OVERVIEW.openapi_parameters(OVERVIEW_FILTERS)},
)
async def list_governance(
    request: Request,
    _caller: Viewer,
    session: SessionDep,
    query: ListQuery = Depends(list_query(OVERVIEW)),
) -> Collection[GovernanceRow]:
    """Every published API with the scores of its latest linting run (null before its
    first), by title. Sort by ``score``, a category or ``linted_at`` (never-linted APIs
    last); filters ``filter[band]``, ``filter[valid]``, ``filter[organisation]``."""
    page = await governance_service.overview(session=session, query=query)
    rows = [
        GovernanceRow(api=ApiRef.of(node), latest_run=RunSummary.of(run) if run else None)
        for node, run in page.items
    ]
    return collection(request, page, rows)


@router.get("/{node}", response_model=Envelope[GovernanceDetail])
async def get_governance(
    node: str, _caller: Viewer, session: SessionDep
) -> Envelope[GovernanceDetail]:
    """The API's latest linting run with its findings (JSON pointers into the document and
    a suggested fix each); ``latest_run`` is null until its first run."""
    api, run = await governance_service.latest(
        session=session, node_id=parse_uuid(node, ApiNotFound)
    )
    detail = GovernanceDetail(api=ApiRef.of(api), latest_run=RunRead.of(run) if run else None)
    return Envelope[GovernanceDetail](data=detail)


@router.get(
    "/{node}/history",
    response_model=Collection[RunSummary],
    openapi_extra={"parameters": HISTORY.openapi_parameters()},
)
async def list_governance_history(
    node: str,
    request: Request,
    _caller: Viewer,
    session: SessionDep,
    query: ListQuery = Depends(list_query(HISTORY)),
) -> Collection[RunSummary]:
    """The API's recent linting runs (its 100 latest are kept), newest first, without
    their findings (``GET /governance/{node}`` has the latest's)."""
    page = await governance_service.history(
        session=session, node_id=parse_uuid(node, ApiNotFound), query=query
    )
    return collection(request, page, [RunSummary.of(run) for run in page.items])
