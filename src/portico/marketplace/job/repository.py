from __future__ import annotations

import uuid
from dataclasses import dataclass

from sqlalchemy import Select, select

from portico.core.db.repository import Repository
from portico.core.jobs import Job, JobStatus


@dataclass(frozen=True)
class JobFilters:
    status: JobStatus | None = None
    kind: str | None = None
    created_by: uuid.UUID | None = None


class JobRepository(Repository[Job]):
    model = Job
    sort_columns = {
        "created_at": Job.created_at,
        "started_at": Job.started_at,
        "finished_at": Job.finished_at,
        "status": Job.status,
        "kind": Job.kind,
    }

    def matching(self, filters: JobFilters) -> Select[Job]:
        statement = select(Job)
        if filters.status is not None:
            statement = statement.where(Job.status == filters.status)
        if filters.kind is not None:
            statement = statement.where(Job.kind == filters.kind)
        if filters.created_by is not None:
            statement = statement.where(Job.created_by == filters.created_by)
        return statement

    async def get_for_update(self, job_id: uuid.UUID) -> Job | None:
        """The job, locked until the transaction ends (PostgreSQL; SQLite's writer lock is
        already held), so that a worker's claim and a cancellation never interleave."""
        return await self.first(
            select(Job)
            .where(Job.id == job_id)
            .with_for_update()
            .execution_options(populate_existing=True)
        )
