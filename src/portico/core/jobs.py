"""Asynchronous jobs: a row per job, picked up by a worker (``core.job_worker``).

Status: queued → running → succeeded | failed; a cancellation request on a queued or running
job makes it cancelling (running jobs check between steps) → cancelled. On PostgreSQL a worker
claims a job with ``SELECT ... FOR UPDATE SKIP LOCKED`` so several workers never run one job
twice; SQLite serialises writers, which gives the same guarantee.
"""

from __future__ import annotations

import enum
import uuid
from datetime import datetime
from typing import Any

from sqlalchemy import Enum, Index, Integer, String
from sqlalchemy.orm import Mapped, mapped_column

from portico.core.clock import utcnow
from portico.core.db.base import Base, IdMixin
from portico.core.db.types import UTCDateTime, json_type


class JobStatus(enum.StrEnum):
    QUEUED = "queued"
    RUNNING = "running"
    SUCCEEDED = "succeeded"
    FAILED = "failed"
    CANCELLING = "cancelling"
    CANCELLED = "cancelled"


TERMINAL = frozenset({JobStatus.SUCCEEDED, JobStatus.FAILED, JobStatus.CANCELLED})


class Job(IdMixin, Base):
    __tablename__ = "jobs"
    __table_args__ = (Index("ix_jobs_status_created", "status", "created_at"),)

    kind: Mapped[str] = mapped_column(String(64))
    status: Mapped[JobStatus] = mapped_column(
        Enum(
            JobStatus, native_enum=False, length=16, values_callable=lambda e: [m.value for m in e]
        ),
        default=JobStatus.QUEUED,
    )
    params: Mapped[dict[str, Any]] = mapped_column(json_type(), default=dict)
    progress_done: Mapped[int] = mapped_column(Integer, default=0)
    progress_total: Mapped[int | None] = mapped_column(Integer, default=None)
    result: Mapped[Any] = mapped_column(json_type(), nullable=True, default=None)
    errors: Mapped[list[Any]] = mapped_column(json_type(), default=list)
    created_by: Mapped[uuid.UUID | None] = mapped_column(default=None)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
    started_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), default=None)
    finished_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), default=None)
    cancel_requested_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), default=None)
    worker: Mapped[str | None] = mapped_column(String(128), default=None)
    heartbeat_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), default=None)
    attempts: Mapped[int] = mapped_column(Integer, default=0)
