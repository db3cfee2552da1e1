"""``POST /api/dataplane/v1/telemetry``: gateway nodes deliver their per-minute rollups."""

from __future__ import annotations

from fastapi import APIRouter, Request, Response

from portico.core.db.engine import Database
from portico.management.dataplane.endpoints import NodeBearer, authorize_request
from portico.management.telemetry import service as telemetry_service
from portico.management.telemetry.schemas import TelemetryBatch

router = APIRouter(tags=["data plane"])


@router.post("/api/dataplane/v1/telemetry", status_code=204)
async def post_telemetry(body: TelemetryBatch, request: Request, bearer: NodeBearer) -> Response:
    """Rollups are added to what the environment has (idempotence is the node's business:
    it sends each rollup once, or keeps it when the answer was not a 2xx)."""
    state = request.app.state
    database: Database = state.database
    async with database.session() as session, session.begin():
        env = await authorize_request(request, session, body.environment_id, bearer)
        await telemetry_service.ingest(session=session, env=env, batch=body, clock=state.clock)
    return Response(status_code=204)
