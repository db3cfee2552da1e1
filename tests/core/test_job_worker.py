"""The jobs worker: claiming, progress, cancellation between steps, failures without stack
traces, workers that died, shutdown, concurrent workers, and the built-in kind."""

from __future__ import annotations

import asyncio
import uuid
from datetime import timedelta
from typing import Any

import pytest
from sqlalchemy import select, update

from portico.core.clock import Clock
from portico.core.db.engine import Database
from portico.core.job_worker import (
    RETRY_FAILED_EMAILS,
    JobContext,
    JobError,
    JobWorker,
    UnknownJobKind,
    enqueue,
    register,
)
from portico.core.jobs import Job, JobStatus
from portico.core.outbox import EmailStatus, OutboxEmail, enqueue_email
from tests.support.waiting import eventually

#: step tokens per test: a "test.steps" job takes one token per step
GATES: dict[str, asyncio.Queue[None]] = {}
RUNS: list[uuid.UUID] = []


async def steps(ctx: JobContext) -> dict[str, int]:
    total = int(ctx.params["steps"])
    gate = GATES[ctx.params["gate"]]
    done = 0
    await ctx.progress(done, total)
    while done < total:
        await ctx.check_cancelled()
        await gate.get()
        done += 1
        if done == 2:
            ctx.error("item 2 was skipped", item=2)
        await ctx.progress(done, total)
    return {"steps": done}


async def count(ctx: JobContext) -> None:
    RUNS.append(ctx.job_id)
    await asyncio.sleep(0)  # (the behaviour: a job that awaits, as real ones do)


async def broken(ctx: JobContext) -> Any:
    if ctx.params.get("how") == "job-error":
        raise JobError("the connection refused the credentials")
    if ctx.params.get("how") == "not-json":
        return {"at": object()}
    raise RuntimeError("SELECT secret FROM internals")


register("test.steps", steps)
register("test.count", count)
register("test.broken", broken)


async def queue_job(
    database: Database, kind: str, params: dict[str, Any] | None = None
) -> uuid.UUID:
    async with database.session() as session, session.begin():
        job = await enqueue(session, kind=kind, params=params or {}, created_by=None)
    return job.id


async def load(database: Database, job_id: uuid.UUID) -> Job:
    async with database.session() as session:
        job = await session.get(Job, job_id)
        assert job is not None
        return job


def gate(name: str) -> asyncio.Queue[None]:
    GATES[name] = asyncio.Queue()
    return GATES[name]


async def test_a_job_reports_progress_and_finishes(database: Database, clock: Clock) -> None:
    tokens = gate("progress")
    job_id = await queue_job(database, "test.steps", {"steps": 4, "gate": "progress"})
    worker = JobWorker(database, clock, name="w1")
    run = asyncio.create_task(worker.run_next())
    tokens.put_nowait(None)
    tokens.put_nowait(None)

    async def halfway() -> bool:
        return (await load(database, job_id)).progress_done == 2

    await eventually(halfway)
    running = await load(database, job_id)
    assert running.status is JobStatus.RUNNING
    assert (running.progress_total, running.worker, running.attempts) == (4, "w1", 1)
    assert running.started_at is not None and running.heartbeat_at is not None
    assert running.errors == [{"detail": "item 2 was skipped", "item": 2}]

    for _ in range(2):
        tokens.put_nowait(None)
    assert await run is True
    done = await load(database, job_id)
    assert done.status is JobStatus.SUCCEEDED
    assert done.result == {"steps": 4}
    assert (done.progress_done, done.progress_total) == (4, 4)
    assert done.finished_at is not None
    assert await worker.run_next() is False  # nothing left


async def test_cancelling_a_running_job_stops_it_between_steps(
    database: Database, clock: Clock
) -> None:
    tokens = gate("cancel")
    job_id = await queue_job(database, "test.steps", {"steps": 10, "gate": "cancel"})
    worker = JobWorker(database, clock)
    run = asyncio.create_task(worker.run_next())
    tokens.put_nowait(None)

    async def started() -> bool:
        return (await load(database, job_id)).progress_done == 1

    await eventually(started)
    async with database.session() as session, session.begin():
        await session.execute(
            update(Job).where(Job.id == job_id).values(status=JobStatus.CANCELLING)
        )
    for _ in range(10):
        tokens.put_nowait(None)
    await run
    cancelled = await load(database, job_id)
    assert cancelled.status is JobStatus.CANCELLED
    assert cancelled.progress_done < 10
    assert cancelled.finished_at is not None
    assert cancelled.result is None


@pytest.mark.parametrize(
    ("how", "detail"),
    [
        ("job-error", "the connection refused the credentials"),
        ("crash", "unexpected error (RuntimeError); see the worker log"),
        ("not-json", "unexpected error (TypeError); see the worker log"),
    ],
)
async def test_a_failing_job_keeps_a_message_never_a_trace(
    database: Database, clock: Clock, how: str, detail: str
) -> None:
    job_id = await queue_job(database, "test.broken", {"how": how})
    await JobWorker(database, clock).run_next()
    failed = await load(database, job_id)
    assert failed.status is JobStatus.FAILED
    assert failed.errors == [{"detail": detail}]
    assert "secret" not in str(failed.errors)
    assert failed.finished_at is not None


async def test_only_known_kinds_are_claimed(database: Database, clock: Clock) -> None:
    async with database.session() as session, session.begin():
        with pytest.raises(UnknownJobKind):
            await enqueue(session, kind="nobody.knows", params={}, created_by=None)
        session.add(Job(id=uuid.uuid4(), kind="newer.replica.kind", params={}))
    assert await JobWorker(database, clock).run_next() is False


async def test_jobs_whose_worker_died_are_requeued_then_failed(
    database: Database, clock: Clock
) -> None:
    old = clock.now() - timedelta(minutes=10)
    ids = {}
    async with database.session() as session, session.begin():
        for name, status, attempts in (
            ("retry", JobStatus.RUNNING, 1),
            ("give-up", JobStatus.RUNNING, 3),
            ("cancel", JobStatus.CANCELLING, 1),
            ("alive", JobStatus.RUNNING, 1),
        ):
            ids[name] = uuid.uuid4()
            session.add(
                Job(
                    id=ids[name],
                    kind="test.count",
                    status=status,
                    params={},
                    errors=[],
                    worker="dead-worker",
                    attempts=attempts,
                    started_at=old,
                    heartbeat_at=clock.now() if name == "alive" else old,
                )
            )
    worker = JobWorker(database, clock, stale_after_seconds=300, max_attempts=3)
    assert await worker.reap_stale() == 3
    retry, give_up, cancel, alive = [await load(database, ids[n]) for n in ids]
    assert retry.status is JobStatus.QUEUED and retry.worker is None
    assert retry.errors == [{"detail": "worker dead-worker stopped responding; re-queued"}]
    assert give_up.status is JobStatus.FAILED
    assert "gave up after 3 attempts" in give_up.errors[-1]["detail"]
    assert cancel.status is JobStatus.CANCELLED
    assert alive.status is JobStatus.RUNNING
    # the re-queued job runs again, and a late write of the dead worker changes nothing
    late = JobWorker(database, clock, name="dead-worker")
    assert await late.update_own(ids["retry"], heartbeat_at=clock.now()) is False
    assert await worker.run_next() is True
    rerun = await load(database, ids["retry"])
    assert (rerun.status, rerun.attempts) == (JobStatus.SUCCEEDED, 2)


async def test_stopping_the_worker_puts_its_job_back(database: Database, clock: Clock) -> None:
    gate("shutdown")
    job_id = await queue_job(database, "test.steps", {"steps": 3, "gate": "shutdown"})
    worker = JobWorker(database, clock, poll_seconds=0.05)
    worker.start()

    async def running() -> bool:
        return (await load(database, job_id)).status is JobStatus.RUNNING

    await eventually(running)
    await worker.stop(grace=0.05)
    released = await load(database, job_id)
    assert released.status is JobStatus.QUEUED
    assert (released.worker, released.attempts) == (None, 0)


async def test_two_workers_never_run_one_job_twice(
    database_url: str, database: Database, clock: Clock
) -> None:
    RUNS.clear()
    ids = [await queue_job(database, "test.count") for _ in range(30)]
    other = Database(database_url)  # a second process, as far as the store can tell
    try:
        workers = [JobWorker(database, clock, name="a"), JobWorker(other, clock, name="b")]

        async def drain(worker: JobWorker) -> int:
            ran = 0
            while await worker.run_next():
                ran += 1
            return ran

        counts = await asyncio.gather(*(drain(w) for w in workers))
    finally:
        await other.dispose()
    assert sorted(RUNS) == sorted(ids)  # each exactly once
    assert sum(counts) == 30
    async with database.session() as session:
        statuses = set(await session.scalars(select(Job.status)))
        attempts = set(await session.scalars(select(Job.attempts)))
    assert statuses == {JobStatus.SUCCEEDED}
    assert attempts == {1}


async def test_retry_failed_emails(database: Database, clock: Clock) -> None:
    async with database.session() as session, session.begin():
        emails = []
        for kind in ("activation", "activation", "activation", "invitation"):
            email = await enqueue_email(
                session, kind=kind, to="x@example.com", subject="s", body="b", now=clock.now()
            )
            email.status, email.attempts, email.last_error = EmailStatus.FAILED, 8, "down"
            emails.append(email.id)
    job_id = await queue_job(database, RETRY_FAILED_EMAILS, {"kind": "activation"})
    await JobWorker(database, clock).run_next()
    job = await load(database, job_id)
    assert job.status is JobStatus.SUCCEEDED, job.errors
    assert job.result == {"requeued": 3}
    assert (job.progress_done, job.progress_total) == (3, 3)
    async with database.session() as session:
        rows = {
            e.id: e
            for e in await session.scalars(select(OutboxEmail).where(OutboxEmail.id.in_(emails)))
        }
    assert [(rows[i].status, rows[i].attempts) for i in emails] == [
        (EmailStatus.PENDING, 0),
        (EmailStatus.PENDING, 0),
        (EmailStatus.PENDING, 0),
        (EmailStatus.FAILED, 8),
    ]

    bad = await queue_job(database, RETRY_FAILED_EMAILS, {"kinds": ["x"]})
    await JobWorker(database, clock).run_next()
    refused = await load(database, bad)
    assert refused.status is JobStatus.FAILED
    assert refused.errors == [{"detail": "params: only 'kind' (a string) is accepted"}]
