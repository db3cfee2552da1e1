"""HTTP shapes of asynchronous jobs (snake_case, read only)."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from pydantic import Field

from portico.core.jobs import Job, JobStatus
from portico.core.logging import redact
from portico.core.schema import PlainReadSchema


class JobProgress(PlainReadSchema):
    done: int
    total: int | None = Field(description="Null while the job does not know yet.")


class JobRead(PlainReadSchema):
    id: uuid.UUID
    kind: str = Field(description="What the job does, e.g. gateway.import_apis.")
    status: JobStatus = Field(
        description="queued → running → succeeded | failed; a cancellation request makes a "
        "queued job cancelled and a running one cancelling (it stops at its next step)."
    )
    params: dict[str, Any]
    progress: JobProgress
    result: Any = Field(description="What the job produced, once it succeeded.")
    errors: list[Any] = Field(description="Problems met, each with a detail.")
    created_by: uuid.UUID | None
    attempts: int = Field(description="How many times a worker started it.")
    created_at: datetime
    started_at: datetime | None
    heartbeat_at: datetime | None = Field(description="Last sign of life of its worker.")
    finished_at: datetime | None
    cancel_requested_at: datetime | None

    @classmethod
    def of(cls, job: Job) -> JobRead:
        return cls(
            id=job.id,
            kind=job.kind,
            status=job.status,
            params=redact(job.params or {}),  # a job's params never show a secret
            progress=JobProgress(done=job.progress_done, total=job.progress_total),
            result=job.result,
            errors=list(job.errors or []),
            created_by=job.created_by,
            attempts=job.attempts,
            created_at=job.created_at,
            started_at=job.started_at,
            heartbeat_at=job.heartbeat_at,
            finished_at=job.finished_at,
            cancel_requested_at=job.cancel_requested_at,
        )
