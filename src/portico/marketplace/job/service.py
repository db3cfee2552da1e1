"""Reading jobs and requesting their cancellation. Jobs are queued by the operations that
start them (``core.job_worker.enqueue``) and run by the jobs worker."""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from datetime import datetime

from sqlalchemy.ext.asyncio import AsyncSession

from portico.core.errors import NotFound
from portico.core.filter_values import FilterValues
from portico.core.jobs import Job, JobStatus
from portico.core.pagination import ListQuery, Page
from portico.marketplace.access import SiteCaller
from portico.marketplace.job.repository import JobFilters, JobRepository
from portico.marketplace.job.schemas import JobRead

MODULE = "gateway_sync"


class JobNotFound(NotFound):
    default_detail = "job not found"


async def list_(*, session: AsyncSession, query: ListQuery) -> Page[Job]:
    repository = JobRepository(session)
    return await repository.page(repository.matching(_filters(query.filters)), query)


async def get(*, session: AsyncSession, job_id: uuid.UUID) -> Job:
    job = await JobRepository(session).get(job_id)
    if job is None:
        raise JobNotFound()
    return job


async def cancel(
    *, session: AsyncSession, caller: SiteCaller, job_id: uuid.UUID, now: datetime
) -> Job:
    """Request cancellation. A queued job is cancelled at once (no worker has it); a running
    one becomes cancelling and its handler stops at its next ``check_cancelled`` (a handler
    that finishes first ends succeeded: its work was done). Cancelling or finished jobs are
    left as they are, so the request is idempotent; only a change is audited."""
    job = await JobRepository(session).get_for_update(job_id)
    if job is None:
        raise JobNotFound()
    if job.status not in (JobStatus.QUEUED, JobStatus.RUNNING):
        return job
    before = JobRead.of(job).model_dump(mode="json")
    job.cancel_requested_at = now
    if job.status is JobStatus.QUEUED:
        job.status, job.finished_at = JobStatus.CANCELLED, now
    else:
        job.status = JobStatus.CANCELLING
    await session.flush()
    await caller.audit(
        session,
        "job.cancel",
        entity_type="job",
        entity_id=job.id,
        module=MODULE,
        summary=f"requested cancellation of {job.kind} job {job.id}: now {job.status.value}",
        before=before,
        after=JobRead.of(job).model_dump(mode="json"),
    )
    return job


def _filters(raw: Mapping[str, str]) -> JobFilters:
    values = FilterValues(raw)
    status = values.choice("status", JobStatus)
    created_by = values.identifier("created_by", "a user id")
    values.check()
    return JobFilters(status=status, kind=raw.get("kind"), created_by=created_by)
