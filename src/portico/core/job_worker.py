"""The jobs worker and the registry of job kinds.

A kind is registered with ``register("outbox.retry_failed", handler)``; a handler is
``async def handler(ctx: JobContext) -> Any`` returning the job's result (a JSON value). It
reports progress with ``await ctx.progress(done, total)``, calls ``await
ctx.check_cancelled()`` between steps (it raises ``JobCancelled`` once an administrator asked
for cancellation), records per-item problems with ``ctx.error(detail, ...)`` without failing,
and fails the job with a message for administrators by raising ``JobError``. ``ctx.settings``
is the worker's configuration (None for a worker built without one, in tests), for handlers
that reach out as the process is configured to (a connector's egress allow-list, the keys
that open a connection's secrets). Any other
exception fails the job too; the row then says only which kind of error happened (the stack
trace goes to the worker's log, never to the row). ``progress`` and ``check_cancelled`` use
their own short transactions: call them between steps, not inside a transaction of yours.

A worker runs one job at a time. It claims the oldest queued job of a kind it knows (so a
replica that lacks a kind leaves its jobs alone): ``SELECT ... FOR UPDATE SKIP LOCKED`` on
PostgreSQL, then ``UPDATE ... WHERE status = 'queued'`` checked by its row count (all the
protection SQLite needs, its writers being serialised), so two workers never run one job.
While the handler runs, a heartbeat task stamps ``heartbeat_at``.

A job whose worker died (no heartbeat for ``stale_after_seconds``, five minutes by default)
is re-queued while it has had fewer than ``max_attempts`` starts, and failed after that:
handlers are written to be re-runnable (imports are idempotent), so a crashed process costs a
retry rather than an administrator's attention; a job that keeps killing its worker stops
after a few. A stale job that was being cancelled becomes cancelled. A worker that is shut
down puts its running job back in the queue (that start does not count).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import socket
import time
import uuid
from collections.abc import Awaitable, Callable, Mapping
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import select, update
from sqlalchemy.ext.asyncio import AsyncSession

from portico.core import mailer
from portico.core.background import BackgroundLoop
from portico.core.clock import Clock, utcnow
from portico.core.db.engine import Database
from portico.core.db.session import after_commit
from portico.core.jobs import Job, JobStatus
from portico.core.settings import Settings

logger = logging.getLogger("portico.jobs")

Handler = Callable[["JobContext"], Awaitable[Any]]
_KINDS: dict[str, Handler] = {}
_RUNNING: set[JobWorker] = set()
ACTIVE = (JobStatus.RUNNING, JobStatus.CANCELLING)


class JobCancelled(Exception):
    """Raised by ``JobContext.check_cancelled``: stop here, the job ends cancelled."""


class JobError(Exception):
    """Raise to fail a job with a message meant for administrators."""


class UnknownJobKind(ValueError):
    pass


def register(kind: str, handler: Handler) -> Handler:
    if kind in _KINDS and _KINDS[kind] is not handler:
        raise ValueError(f"job kind {kind!r} is already registered")
    _KINDS[kind] = handler
    return handler


def kinds() -> frozenset[str]:
    return frozenset(_KINDS)


def wake() -> None:
    """Tell this process's workers a job was queued (call it after the commit)."""
    for worker in list(_RUNNING):
        worker.wake()


async def enqueue(
    session: AsyncSession,
    *,
    kind: str,
    params: Mapping[str, Any],
    created_by: uuid.UUID | None,
    now: datetime | None = None,
) -> Job:
    """Queue a job in the caller's transaction; the workers are woken after its commit."""
    if kind not in _KINDS:
        raise UnknownJobKind(f"unknown job kind {kind!r}; known: {sorted(_KINDS)}")
    job = Job(
        id=uuid.uuid4(),
        kind=kind,
        status=JobStatus.QUEUED,
        params=dict(params),
        progress_done=0,
        errors=[],
        created_by=created_by,
        created_at=now or utcnow(),
        attempts=0,
    )
    session.add(job)
    await session.flush()
    after_commit(session, wake)
    return job


class JobContext:
    def __init__(self, worker: JobWorker, job: Job) -> None:
        self.job_id = job.id
        self.kind = job.kind
        self.params: dict[str, Any] = dict(job.params or {})
        self.created_by = job.created_by
        self.database = worker.database
        self.clock = worker.clock
        self.settings = worker.settings
        self.errors: list[Any] = list(job.errors or [])
        self.logger = logging.LoggerAdapter(logger, {"job_id": str(job.id), "job_kind": job.kind})
        self._worker = worker

    def error(self, detail: str, **context: Any) -> None:
        """Note a problem (one item of many) without failing; saved with the next progress."""
        self.errors.append({"detail": detail, **context})

    async def progress(self, done: int, total: int | None = None) -> None:
        await self._worker.update_own(
            self.job_id,
            progress_done=done,
            progress_total=total,
            errors=list(self.errors),
            heartbeat_at=self.clock.now(),
        )

    async def check_cancelled(self) -> None:
        async with self.database.session() as session:
            row = (
                await session.execute(select(Job.status, Job.worker).where(Job.id == self.job_id))
            ).one_or_none()
        if row is None or row.status is JobStatus.CANCELLING:
            raise JobCancelled()
        if row.worker != self._worker.name:  # re-queued to another worker meanwhile
            raise JobCancelled()


class JobWorker(BackgroundLoop):
    task_name = "portico-jobs"

    def __init__(
        self,
        database: Database,
        clock: Clock,
        *,
        poll_seconds: float = 2.0,
        heartbeat_seconds: float = 30.0,
        stale_after_seconds: float = 300.0,
        max_attempts: int = 3,
        name: str | None = None,
        settings: Settings | None = None,
    ) -> None:
        super().__init__()
        self.database = database
        self.clock = clock
        self.settings = settings
        self.poll_seconds = poll_seconds
        self.heartbeat_seconds = heartbeat_seconds
        self.stale_after = timedelta(seconds=stale_after_seconds)
        self.max_attempts = max_attempts
        self.name = name or f"{socket.gethostname()}-{os.getpid()}-{uuid.uuid4().hex[:6]}"
        self._next_reap = 0.0

    async def run(self) -> None:
        _RUNNING.add(self)
        try:
            while not self._stopping:
                ran = False
                try:
                    if time.monotonic() >= self._next_reap:
                        self._next_reap = time.monotonic() + self.stale_after.total_seconds() / 10
                        await self.reap_stale()
                    ran = await self.run_next()
                except Exception:  # the worker outlives a bad moment of the store
                    logger.exception("jobs worker round failed; retrying")
                if ran:
                    continue
                await self._sleep(self.poll_seconds)
        finally:
            _RUNNING.discard(self)

    async def run_next(self) -> bool:
        """Claim and run one queued job; False when there was none."""
        job = await self._claim()
        if job is None:
            return False
        await self._run(job)
        return True

    async def _claim(self) -> Job | None:
        known = sorted(_KINDS)
        if not known:
            return None
        now = self.clock.now()
        async with self.database.session() as session, session.begin():
            job_id = await session.scalar(
                select(Job.id)
                .where(Job.status == JobStatus.QUEUED, Job.kind.in_(known))
                .order_by(Job.created_at, Job.id)
                .limit(1)
                .with_for_update(skip_locked=True)
            )
            if job_id is None:
                return None
            result = await session.execute(
                update(Job)
                .where(Job.id == job_id, Job.status == JobStatus.QUEUED)
                .values(
                    status=JobStatus.RUNNING,
                    worker=self.name,
                    started_at=now,
                    heartbeat_at=now,
                    attempts=Job.attempts + 1,
                    progress_done=0,
                    progress_total=None,
                )
            )
            if getattr(result, "rowcount", 0) != 1:  # another worker was first
                return None
            return await session.scalar(
                select(Job).where(Job.id == job_id).execution_options(populate_existing=True)
            )

    async def _run(self, job: Job) -> None:
        ctx = JobContext(self, job)
        heartbeat = asyncio.create_task(self._heartbeat(job.id))
        ctx.logger.info("job %s (%s) started", job.id, job.kind)
        try:
            result = await _KINDS[job.kind](ctx)
            json.dumps(result)  # refused here rather than by the store
        except JobCancelled:
            await self._finish(ctx, JobStatus.CANCELLED)
        except JobError as error:
            await self._finish(ctx, JobStatus.FAILED, error=str(error))
        except asyncio.CancelledError:  # shutting down: someone else will run it
            await self._release(job.id)
            raise
        except Exception as error:
            ctx.logger.exception("job %s (%s) failed", job.id, job.kind)
            detail = f"unexpected error ({type(error).__name__}); see the worker log"
            await self._finish(ctx, JobStatus.FAILED, error=detail)
        else:
            await self._finish(ctx, JobStatus.SUCCEEDED, result=result)
        finally:
            heartbeat.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await heartbeat

    async def _finish(
        self, ctx: JobContext, status: JobStatus, *, result: Any = None, error: str | None = None
    ) -> None:
        errors = [*ctx.errors, {"detail": error}] if error else list(ctx.errors)
        await self.update_own(
            ctx.job_id, status=status, result=result, errors=errors, finished_at=self.clock.now()
        )
        ctx.logger.info("job %s (%s) %s", ctx.job_id, ctx.kind, status.value)

    async def _release(self, job_id: uuid.UUID) -> None:
        async with self.database.session() as session, session.begin():
            mine = (Job.id == job_id, Job.worker == self.name)
            await session.execute(
                update(Job)
                .where(*mine, Job.status == JobStatus.RUNNING)
                .values(
                    status=JobStatus.QUEUED,
                    worker=None,
                    started_at=None,
                    heartbeat_at=None,
                    attempts=Job.attempts - 1,
                )
            )
            await session.execute(
                update(Job)
                .where(*mine, Job.status == JobStatus.CANCELLING)
                .values(status=JobStatus.CANCELLED, finished_at=self.clock.now())
            )

    async def update_own(self, job_id: uuid.UUID, **values: Any) -> bool:
        """Write to a job this worker still runs (never to one re-queued to another)."""
        async with self.database.session() as session, session.begin():
            result = await session.execute(
                update(Job)
                .where(Job.id == job_id, Job.worker == self.name, Job.status.in_(ACTIVE))
                .values(**values)
            )
        return bool(getattr(result, "rowcount", 0) == 1)

    async def _heartbeat(self, job_id: uuid.UUID) -> None:
        while True:
            await asyncio.sleep(self.heartbeat_seconds)
            with contextlib.suppress(Exception):  # a missed beat is not fatal; many are
                await self.update_own(job_id, heartbeat_at=self.clock.now())

    async def reap_stale(self) -> int:
        """Re-queue (or fail, or finish cancelling) jobs whose worker stopped beating."""
        now = self.clock.now()
        async with self.database.session() as session, session.begin():
            stale = list(
                await session.scalars(
                    select(Job)
                    .where(Job.status.in_(ACTIVE), Job.heartbeat_at < now - self.stale_after)
                    .limit(100)
                    .with_for_update(skip_locked=True)
                )
            )
            for job in stale:
                lost = f"worker {job.worker} stopped responding"
                if job.status is JobStatus.CANCELLING:
                    job.status, job.finished_at = JobStatus.CANCELLED, now
                elif job.attempts < self.max_attempts:
                    job.errors = [*job.errors, {"detail": f"{lost}; re-queued"}]
                    job.status, job.worker, job.heartbeat_at = JobStatus.QUEUED, None, None
                else:
                    detail = f"{lost}; gave up after {job.attempts} attempts"
                    job.errors = [*job.errors, {"detail": detail}]
                    job.status, job.finished_at = JobStatus.FAILED, now
                logger.warning("job %s: %s; now %s", job.id, lost, job.status.value)
        return len(stale)


# ---------------------------------------------------------------------- built-in kinds
RETRY_FAILED_EMAILS = "outbox.retry_failed"


async def retry_failed_emails(ctx: JobContext) -> dict[str, int]:
    """Re-queue the emails that failed (after the mail server was fixed), with fresh
    attempts. Params: ``{"kind": "activation"}`` to limit it to one kind of email."""
    unknown = set(ctx.params) - {"kind"}
    kind = ctx.params.get("kind")
    if unknown or not isinstance(kind, str | None):
        raise JobError("params: only 'kind' (a string) is accepted")
    ids = await mailer.failed_ids(ctx.database, kind=kind)
    await ctx.progress(0, len(ids))
    done = 0
    for start in range(0, len(ids), 100):
        await ctx.check_cancelled()
        done += await mailer.requeue(ctx.database, ctx.clock, ids=ids[start : start + 100])
        await ctx.progress(start + len(ids[start : start + 100]), len(ids))
        mailer.wake()
    return {"requeued": done}


register(RETRY_FAILED_EMAILS, retry_failed_emails)
