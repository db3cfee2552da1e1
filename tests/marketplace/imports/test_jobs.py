"""``POST /gateways/connections/{id}/jobs`` (``import-apis``): 202 with the job, which the
jobs worker runs in batches with its progress visible; cancelled mid-way it leaves whole
APIs only; its result counts the outcomes and its errors name each API that failed."""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

import httpx
from sqlalchemy import select

from portico.core.audit import AuditEntry
from portico.core.clock import Clock
from portico.core.db.engine import Database
from portico.core.job_worker import JobWorker, kinds
from portico.core.settings import Settings
from portico.marketplace.connection.models import ConnectionStatus, GatewayConnection
from portico.marketplace.imports.jobs import BATCH, IMPORT_APIS
from portico.marketplace.node.models import Bundle, CatalogueNode
from tests.marketplace.conftest import SiteAccount, url
from tests.marketplace.imports.conftest import (
    CONNECTIONS,
    RemoteOrg,
    Steerable,
    connect,
    document,
)
from tests.support.waiting import eventually

UNKNOWN_ID = "45058b31-fc55-4a58-82a5-dc21f78582b0"


async def start(
    client: httpx.AsyncClient, who: SiteAccount, connection_id: str, body: dict[str, Any]
) -> httpx.Response:
    return await client.post(
        url(f"{CONNECTIONS}/{connection_id}/jobs"), json=body, headers=who.headers
    )


async def job(client: httpx.AsyncClient, who: SiteAccount, job_id: str) -> dict[str, Any]:
    got = await client.get(url(f"/jobs/{job_id}"), headers=who.headers)
    assert got.status_code == 200, got.text
    data: dict[str, Any] = got.json()["data"]
    return data


async def nodes(database: Database) -> list[CatalogueNode]:
    async with database.session() as session:
        return list(
            await session.scalars(
                select(CatalogueNode)
                .where(CatalogueNode.bundle == Bundle.APIS)
                .order_by(CatalogueNode.title)
            )
        )


async def test_the_job_imports_every_api_and_reports_its_result(
    admin_api: httpx.AsyncClient,
    site_admin: SiteAccount,
    remote_org: RemoteOrg,
    worker: JobWorker,
    database: Database,
) -> None:
    for name in ("One", "Two", "Three"):
        await remote_org.api(name)
    connection = await connect(admin_api, site_admin, remote_org.connection("jobs"))

    started = await start(admin_api, site_admin, connection["id"], {"kind": "import-apis"})
    assert started.status_code == 202, started.text
    job_id = started.json()["job_id"]
    assert started.headers["location"] == f"/api/admin/v1/jobs/{job_id}"
    queued = await job(admin_api, site_admin, job_id)
    assert (queued["kind"], queued["status"]) == (IMPORT_APIS, "queued")
    assert queued["params"] == {"connection_id": connection["id"]}
    assert queued["created_by"] == str(site_admin.id)

    assert await worker.run_next()
    done = await job(admin_api, site_admin, job_id)
    assert done["status"] == "succeeded", done
    assert done["progress"] == {"done": 3, "total": 3}
    assert done["result"] == {"total": 3, "created": 3, "updated": 0, "failed": 0}
    assert done["errors"] == []
    assert [n.title for n in await nodes(database)] == ["One", "Three", "Two"]
    async with database.session() as session:
        entries = list(
            await session.scalars(select(AuditEntry).where(AuditEntry.action == "api.import"))
        )
        started_entries = list(
            await session.scalars(select(AuditEntry).where(AuditEntry.action == "job.start"))
        )
    assert len(entries) == 3
    assert all(f"(job {job_id})" in e.summary for e in entries)
    assert {e.actor_id for e in entries} == {site_admin.id}
    assert [e.entity_id for e in started_entries] == [job_id]

    again = await start(admin_api, site_admin, connection["id"], {"kind": "import-apis"})
    assert await worker.run_next()
    rerun = await job(admin_api, site_admin, again.json()["job_id"])
    assert rerun["result"] == {"total": 3, "created": 0, "updated": 3, "failed": 0}


async def test_a_subset_with_an_unknown_api(
    admin_api: httpx.AsyncClient,
    site_admin: SiteAccount,
    remote_org: RemoteOrg,
    worker: JobWorker,
    database: Database,
) -> None:
    wanted = await remote_org.api("Wanted")
    await remote_org.api("Other")
    connection = await connect(admin_api, site_admin, remote_org.connection())
    started = await start(
        admin_api,
        site_admin,
        connection["id"],
        {"kind": "import-apis", "api_ids": [wanted, UNKNOWN_ID]},
    )
    assert await worker.run_next()
    done = await job(admin_api, site_admin, started.json()["job_id"])
    assert done["status"] == "succeeded"
    assert done["result"] == {"total": 2, "created": 1, "updated": 0, "failed": 1}
    [error] = done["errors"]
    assert error["api_id"] == UNKNOWN_ID
    assert f"api_id '{UNKNOWN_ID}'" in error["detail"]
    assert [n.title for n in await nodes(database)] == ["Wanted"]


async def test_the_kind_and_the_body_are_checked(
    admin_api: httpx.AsyncClient, site_admin: SiteAccount, remote_org: RemoteOrg
) -> None:
    connection = await connect(admin_api, site_admin, remote_org.connection())
    for body, pointer in (
        ({"kind": "sync-users"}, "/kind"),
        ({}, "/kind"),
        ({"kind": "import-apis", "api_ids": []}, "/api_ids"),
        ({"kind": "import-apis", "colour": "red"}, "/colour"),
    ):
        refused = await start(admin_api, site_admin, connection["id"], body)
        assert refused.status_code == 400, refused.text
        assert [e["pointer"] for e in refused.json()["errors"]] == [pointer]
    missing = await start(admin_api, site_admin, UNKNOWN_ID, {"kind": "import-apis"})
    assert missing.status_code == 404


async def test_cancelled_mid_way_the_job_leaves_whole_apis_only(
    admin_api: httpx.AsyncClient,
    site_admin: SiteAccount,
    remote_org: RemoteOrg,
    steerable: Steerable,
    worker: JobWorker,
    database: Database,
) -> None:
    """The remote side is reached through a server that holds one document of the second
    batch until the test lets it go (the job reads the second batch while it writes the
    first): while it waits, the first batch is written and its progress visible; a
    cancellation asked for then stops the job before the second batch is written."""
    total = BATCH + 5
    ids = list(await asyncio.gather(*(remote_org.api(f"api-{n:02d}") for n in range(total))))
    steerable.board.upstream = remote_org.base_url
    steerable.board.held = f"/api/orgs/{remote_org.org_id}/apis/{ids[BATCH + 2]}/spec"
    connection = await connect(
        admin_api, site_admin, remote_org.connection(base_url=steerable.base_url)
    )
    started = await start(admin_api, site_admin, connection["id"], {"kind": "import-apis"})
    job_id = started.json()["job_id"]

    running = asyncio.create_task(worker.run_next())
    try:
        await eventually(steerable.board.arrived.is_set, 30, what="the second batch's reads")

        async def first_batch_written() -> bool:
            progress = (await job(admin_api, site_admin, job_id))["progress"]
            return bool(progress == {"done": BATCH, "total": total})

        await eventually(first_batch_written, 30)
        assert (await job(admin_api, site_admin, job_id))["status"] == "running"
        assert len(await nodes(database)) == BATCH

        cancelled = await admin_api.delete(url(f"/jobs/{job_id}"), headers=site_admin.headers)
        assert cancelled.json()["data"]["status"] == "cancelling"
    finally:
        steerable.board.release.set()
        await running

    finished = await job(admin_api, site_admin, job_id)
    assert finished["status"] == "cancelled"
    assert finished["progress"] == {"done": BATCH, "total": total}
    written = await nodes(database)
    assert [n.title for n in written] == [f"api-{n:02d}" for n in range(BATCH)]
    for node in written:  # each one whole: its document and its revision
        assert node.documentation == document(node.title)
        assert node.remote_revision == "1"


async def test_a_remote_that_fails_fails_the_job_naming_the_connection(
    admin_api: httpx.AsyncClient,
    site_admin: SiteAccount,
    remote_org: RemoteOrg,
    worker: JobWorker,
    database: Database,
) -> None:
    connection = await connect(admin_api, site_admin, remote_org.connection("lost"))
    await remote_org.revoke_token()
    started = await start(admin_api, site_admin, connection["id"], {"kind": "import-apis"})
    assert await worker.run_next()
    failed = await job(admin_api, site_admin, started.json()["job_id"])
    assert failed["status"] == "failed"
    [error] = failed["errors"]
    assert f"gateway connection 'lost' ({connection['id']})" in error["detail"]
    assert "refused the token" in error["detail"]
    async with database.session() as session:
        row = await session.get(GatewayConnection, uuid.UUID(connection["id"]))
        assert row is not None and row.status is ConnectionStatus.FAILING


async def test_the_serve_workers_run_import_jobs_with_the_settings(
    settings: Settings, database: Database, clock: Clock
) -> None:
    from portico.worker import build_workers

    workers = build_workers(settings, database=database, clock=clock)
    assert workers is not None
    assert workers.jobs.settings is settings
    assert IMPORT_APIS in kinds()
