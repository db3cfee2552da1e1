"""``GET /jobs``, ``GET /jobs/{job}`` and ``DELETE /jobs/{job}`` (cancellation requests)."""

from __future__ import annotations

import asyncio
import uuid
from datetime import timedelta
from typing import Any

import httpx
import pytest
from sqlalchemy import select

from portico.core.audit import AuditEntry
from portico.core.clock import Clock
from portico.core.db.engine import Database
from portico.core.job_worker import JobContext, JobWorker, enqueue, register
from portico.core.jobs import Job, JobStatus
from tests.marketplace.conftest import SiteAccount, SiteFactory, url
from tests.support.waiting import eventually

PERMISSION = "administer gateway sync"
# an id that names nothing; fixed, not drawn at import: it is part of test ids, which every
# xdist worker must collect alike
UNKNOWN_ID = "45058b31-fc55-4a58-82a5-dc21f78582b0"
GATES: dict[str, asyncio.Queue[None]] = {}


async def stepper(ctx: JobContext) -> dict[str, int]:
    """One step per token put in its gate; a step takes its token, then checks for
    cancellation. So once a step's progress is visible the job is waiting at its gate: a
    cancellation asked for then is found at the next step, never by a check already under way
    (which would finish the job before the test looks at it)."""
    total = int(ctx.params["steps"])
    for done in range(1, total + 1):
        await GATES[ctx.params["gate"]].get()
        await ctx.check_cancelled()
        await ctx.progress(done, total)
    return {"imported": total}


async def noop(ctx: JobContext) -> dict[str, bool]:
    return {"ok": True}


register("test.api.stepper", stepper)
register("test.api.noop", noop)


async def make_job(
    database: Database,
    kind: str = "test.api.noop",
    *,
    params: dict[str, Any] | None = None,
    created_by: uuid.UUID | None = None,
    age: timedelta = timedelta(),
) -> uuid.UUID:
    async with database.session() as session, session.begin():
        job = await enqueue(session, kind=kind, params=params or {}, created_by=created_by)
        job.created_at -= age
    return job.id


async def load(database: Database, job_id: uuid.UUID) -> Job:
    async with database.session() as session:
        job = await session.get(Job, job_id)
        assert job is not None
        return job


async def cancellations(database: Database, job_id: uuid.UUID) -> list[AuditEntry]:
    async with database.session() as session:
        return list(
            await session.scalars(
                select(AuditEntry).where(
                    AuditEntry.action == "job.cancel", AuditEntry.entity_id == str(job_id)
                )
            )
        )


async def test_list_newest_first_and_filters(
    client: httpx.AsyncClient, site_admin: SiteAccount, database: Database, clock: Clock
) -> None:
    old = await make_job(database, age=timedelta(hours=2), created_by=site_admin.id)
    middle = await make_job(database, age=timedelta(hours=1), params={"token": "hunter2"})
    new = await make_job(database, "test.api.stepper", params={"steps": 1, "gate": "x"})
    await JobWorker(database, clock).run_next()  # runs the oldest: `old`

    response = await client.get(url("/jobs"), headers=site_admin.headers)
    assert response.status_code == 200
    body = response.json()
    assert [j["id"] for j in body["data"]] == [str(new), str(middle), str(old)]
    assert body["meta"] == {"count": 3, "page": 1, "limit": 50, "pages": 1}
    assert body["data"][1]["params"] == {"token": "[REDACTED]"}
    finished = body["data"][2]
    assert finished["status"] == "succeeded"
    assert finished["result"] == {"ok": True}
    assert finished["created_by"] == str(site_admin.id)

    cases = {
        "filter[status]=queued": [new, middle],
        "filter[status]=succeeded": [old],
        "filter[kind]=test.api.stepper": [new],
        f"filter[created_by]={site_admin.id}": [old],
        "sort=created_at&limit=2": [old, middle],
        "sort=created_at&limit=2&page=2": [new],
    }
    for query, expected in cases.items():
        listed = await client.get(url(f"/jobs?{query}"), headers=site_admin.headers)
        assert listed.status_code == 200, query
        assert [j["id"] for j in listed.json()["data"]] == [str(i) for i in expected], query


async def test_one_job_with_its_progress(
    client: httpx.AsyncClient, site: SiteFactory, database: Database, clock: Clock
) -> None:
    manager = await site.account("api_manager")
    GATES["progress"] = asyncio.Queue()
    job_id = await make_job(
        database, "test.api.stepper", params={"steps": 3, "gate": "progress"}, created_by=manager.id
    )
    queued = (await client.get(url(f"/jobs/{job_id}"), headers=manager.headers)).json()["data"]
    assert queued["status"] == "queued"
    assert queued["progress"] == {"done": 0, "total": None}
    assert queued["started_at"] is None

    run = asyncio.create_task(JobWorker(database, clock).run_next())
    GATES["progress"].put_nowait(None)
    data = await poll(client, manager, job_id, lambda d: d["progress"]["done"] == 1)
    assert data["status"] == "running"
    assert data["progress"] == {"done": 1, "total": 3}
    assert data["started_at"] is not None and data["heartbeat_at"] is not None
    for _ in range(2):
        GATES["progress"].put_nowait(None)
    await run
    done = (await client.get(url(f"/jobs/{job_id}"), headers=manager.headers)).json()["data"]
    assert done["status"] == "succeeded"
    assert done["result"] == {"imported": 3}
    assert done["progress"] == {"done": 3, "total": 3}
    assert done["finished_at"] is not None
    assert done["attempts"] == 1


async def poll(
    client: httpx.AsyncClient, caller: SiteAccount, job_id: uuid.UUID, check: Any
) -> dict[str, Any]:
    seen: dict[str, Any] = {}

    async def reached() -> bool:
        seen.update((await client.get(url(f"/jobs/{job_id}"), headers=caller.headers)).json())
        return bool(check(seen["data"]))

    await eventually(reached, what=lambda: f"the job as last read: {seen.get('data')}")
    data: dict[str, Any] = seen["data"]
    return data


async def test_cancelling_a_queued_job_is_immediate_and_idempotent(
    client: httpx.AsyncClient, site_admin: SiteAccount, database: Database, clock: Clock
) -> None:
    job_id = await make_job(database)
    first = await client.delete(url(f"/jobs/{job_id}"), headers=site_admin.headers)
    assert first.status_code == 200
    data = first.json()["data"]
    assert data["status"] == "cancelled"
    assert data["cancel_requested_at"] is not None and data["finished_at"] is not None
    [entry] = await cancellations(database, job_id)
    assert entry.surface == "marketplace"
    assert entry.actor_id == site_admin.id
    assert entry.module == "gateway_sync"
    assert (entry.before["status"], entry.after["status"]) == ("queued", "cancelled")

    again = await client.delete(url(f"/jobs/{job_id}"), headers=site_admin.headers)
    assert again.status_code == 200
    assert again.json()["data"] == data  # unchanged
    assert len(await cancellations(database, job_id)) == 1  # a no-op is not audited
    assert await JobWorker(database, clock).run_next() is False  # never runs


async def test_cancelling_a_running_job_stops_it_at_its_next_step(
    client: httpx.AsyncClient, site_admin: SiteAccount, database: Database, clock: Clock
) -> None:
    GATES["cancel"] = asyncio.Queue()
    job_id = await make_job(database, "test.api.stepper", params={"steps": 5, "gate": "cancel"})
    run = asyncio.create_task(JobWorker(database, clock).run_next())
    GATES["cancel"].put_nowait(None)
    await poll(client, site_admin, job_id, lambda d: d["progress"]["done"] == 1)

    response = await client.delete(url(f"/jobs/{job_id}"), headers=site_admin.headers)
    assert response.status_code == 200
    assert response.json()["data"]["status"] == "cancelling"
    repeated = await client.delete(url(f"/jobs/{job_id}"), headers=site_admin.headers)
    assert repeated.json()["data"]["status"] == "cancelling"
    assert len(await cancellations(database, job_id)) == 1

    for _ in range(5):
        GATES["cancel"].put_nowait(None)
    await run
    job = await load(database, job_id)
    assert job.status is JobStatus.CANCELLED
    assert job.progress_done < 5
    assert job.result is None


async def test_cancelling_a_finished_job_is_a_no_op(
    client: httpx.AsyncClient, site_admin: SiteAccount, database: Database, clock: Clock
) -> None:
    job_id = await make_job(database)
    await JobWorker(database, clock).run_next()
    before = (await client.get(url(f"/jobs/{job_id}"), headers=site_admin.headers)).json()
    for _ in range(2):
        response = await client.delete(url(f"/jobs/{job_id}"), headers=site_admin.headers)
        assert response.status_code == 200
        assert response.json() == before
    assert before["data"]["status"] == "succeeded"
    assert await cancellations(database, job_id) == []


@pytest.mark.parametrize(
    ("method", "path"),
    [("GET", "/jobs"), ("GET", "/jobs/{id}"), ("DELETE", "/jobs/{id}")],
)
async def test_authentication_and_permission(
    client: httpx.AsyncClient, site: SiteFactory, database: Database, method: str, path: str
) -> None:
    job_id = await make_job(database)
    target = url(path.format(id=job_id))
    assert (await client.request(method, target)).status_code == 401
    admin = await site.account("marketplace_admin")  # the baseline, not this permission
    denied = await client.request(method, target, headers=admin.headers)
    assert denied.status_code == 403
    assert denied.json()["detail"] == f"missing permission '{PERMISSION}'"
    editor = await site.account("content_editor")
    refused = await client.request(method, target, headers=editor.headers)
    assert refused.status_code == 403
    assert refused.json()["detail"] == "missing permission 'access marketplace admin api'"
    assert (await load(database, job_id)).status is JobStatus.QUEUED  # nothing cancelled


@pytest.mark.parametrize("method", ["GET", "DELETE"])
@pytest.mark.parametrize("job", [UNKNOWN_ID, "not-a-uuid"])
async def test_unknown_jobs_are_404(
    client: httpx.AsyncClient, site_admin: SiteAccount, method: str, job: str
) -> None:
    response = await client.request(method, url(f"/jobs/{job}"), headers=site_admin.headers)
    assert response.status_code == 404
    assert response.headers["content-type"] == "application/problem+json"
    assert response.json()["detail"] == "job not found"


@pytest.mark.parametrize(
    ("query", "parameter"),
    [
        ("filter[colour]=red", "filter[colour]"),
        ("filter[status]=done", "filter[status]"),
        ("filter[created_by]=me", "filter[created_by]"),
        ("sort=colour", "sort"),
        ("page=0", "page"),
        ("limit=501", "limit"),
        ("limit=ten", "limit"),
        ("colour=red", "colour"),
    ],
)
async def test_bad_queries_are_400_naming_the_parameter(
    client: httpx.AsyncClient, site_admin: SiteAccount, query: str, parameter: str
) -> None:
    response = await client.get(url(f"/jobs?{query}"), headers=site_admin.headers)
    assert response.status_code == 400
    assert response.headers["content-type"] == "application/problem+json"
    assert [e["parameter"] for e in response.json()["errors"]] == [parameter]


async def test_the_api_description_covers_the_job_endpoints(
    client: httpx.AsyncClient, site_admin: SiteAccount
) -> None:
    document = (await client.get(url("/openapi.json"), headers=site_admin.headers)).json()
    assert set(document["paths"]["/jobs/{job}"]) == {"get", "delete"}
    job_schema = document["components"]["schemas"]["JobRead"]
    assert {"status", "progress", "result", "errors", "created_by"} <= set(job_schema["properties"])
