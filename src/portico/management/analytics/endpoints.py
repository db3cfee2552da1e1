from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Path

from portico.core.db.session import SessionDep
from portico.management.access import OrgCaller, require
from portico.management.analytics import service as analytics_service
from portico.management.analytics.schemas import METRICS, MetricsQuery, MetricsResult

router = APIRouter(prefix="/api/orgs/{orgId}/analytics", tags=["analytics"])

Reader = Annotated[OrgCaller, Depends(require("analytics.read"))]


@router.post("/metrics/{metric}", response_model=MetricsResult)
async def query_metric(
    metric: Annotated[
        str, Path(description="The metric.", json_schema_extra={"enum": list(METRICS)})
    ],
    body: MetricsQuery,
    caller: Reader,
    session: SessionDep,
) -> dict[str, Any]:
    """One metric over a window (at most 31 days), grouped by dimensions, filtered, as one
    row per group or a time series; see the README's Analytics section."""
    return await analytics_service.query(session=session, caller=caller, metric=metric, body=body)
