"""Asynchronous jobs (permission ``administer gateway sync``): gateway imports, syncs and
maintenance, run by the jobs worker of ``portico serve``."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Request

from portico.core.db.session import SessionDep
from portico.core.envelope import Collection, Envelope, collection
from portico.core.jobs import JobStatus
from portico.core.pagination import ListQuery, ListSpec, list_query
from portico.marketplace.access import SiteCaller, parse_uuid, require
from portico.marketplace.job import service as job_service
from portico.marketplace.job.schemas import JobRead
from portico.marketplace.job.service import JobNotFound

router = APIRouter(prefix="/jobs", tags=["jobs"])

LIST = ListSpec(
    sortable=frozenset({"created_at", "started_at", "finished_at", "status", "kind"}),
    default_sort="-created_at",
    filterable=frozenset({"status", "kind", "created_by"}),
    filter_style="bracket",
    size_param="limit",
    default_size=50,
    max_size=500,
)
FILTER_PARAMETERS: dict[str, dict[str, Any]] = {
    "status": {
        "description": "Jobs in this status.",
        "schema": {"type": "string", "enum": [s.value for s in JobStatus]},
    },
    "kind": {"description": "Jobs of this kind, e.g. import-apis."},
    "created_by": {
        "description": "Jobs started by this account (its id).",
        "schema": {"type": "string", "format": "uuid"},
    },
}
Syncer = Annotated[SiteCaller, Depends(require("administer gateway sync"))]


@router.get(
    "",
    response_model=Collection[JobRead],
    openapi_extra={"parameters": LIST.openapi_parameters(FILTER_PARAMETERS)},
)
async def list_jobs(
    request: Request,
    _caller: Syncer,
    session: SessionDep,
    query: ListQuery = Depends(list_query(LIST)),
) -> Collection[JobRead]:
    """Newest first. Filters: ``filter[status]``, ``filter[kind]``, ``filter[created_by]``."""
    page = await job_service.list_(session=session, query=query)
    return collection(request, page, [JobRead.of(job) for job in page.items])


@router.get("/{job}", response_model=Envelope[JobRead])
async def get_job(job: str, _caller: Syncer, session: SessionDep) -> Envelope[JobRead]:
    """Status, progress ``{done, total}``, result, errors, who started it and when."""
    found = await job_service.get(session=session, job_id=parse_uuid(job, JobNotFound))
    return Envelope[JobRead](data=JobRead.of(found))


@router.delete("/{job}", response_model=Envelope[JobRead])
async def cancel_job(
    job: str, request: Request, caller: Syncer, session: SessionDep
) -> Envelope[JobRead]:
    """Request cancellation; the answer is always 200 with the job as it now stands.

    A queued job becomes ``cancelled`` at once; a running one ``cancelling`` (it stops at
    its next step, then ``cancelled``). A job already cancelling or finished is unchanged:
    the request is idempotent. A job is never deleted: its row is its history.
    """
    cancelled = await job_service.cancel(
        session=session,
        caller=caller,
        job_id=parse_uuid(job, JobNotFound),
        now=request.app.state.clock.now(),
    )
    return Envelope[JobRead](data=JobRead.of(cancelled))
