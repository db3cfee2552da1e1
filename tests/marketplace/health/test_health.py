"""``/health``: checks of real servers on loopback through the SSRF guard (up, degraded by
body or by latency, down by status, by body or with nothing listening; unknown without a
URL or when the guard refuses it, a redirect included), ``POST /health/{node}/check`` as a
job, the scheduled round and the dashboard's counts, permissions (403) and unknown nodes
(404)."""

from __future__ import annotations

import socket
import uuid
from typing import Any

import httpx
from sqlalchemy import select

from portico.core.audit import AuditEntry
from portico.core.clock import Clock
from portico.core.db.engine import Database
from portico.core.job_worker import JobWorker
from portico.core.settings import Settings
from portico.marketplace.health.jobs import CHECK, CHECK_ALL
from portico.marketplace.health.schedule import HealthSchedule
from portico.marketplace.node.models import Bundle
from tests.marketplace.conftest import SiteAccount, url
from tests.marketplace.health.conftest import api_node, document, loopback


async def check(
    client: httpx.AsyncClient, who: SiteAccount, worker: JobWorker, node: uuid.UUID
) -> dict[str, Any]:
    """Queue a check, run it, and read the API's record."""
    queued = await client.post(url(f"/health/{node}/check"), headers=who.headers)
    assert queued.status_code == 202, queued.text
    job_id = queued.json()["job_id"]
    assert queued.headers["location"] == f"/api/admin/v1/jobs/{job_id}"
    assert await worker.run_next()
    got = await client.get(url(f"/health/{node}"), headers=who.headers)
    assert got.status_code == 200, got.text
    record: dict[str, Any] = got.json()["data"]
    return record


def closed_port() -> int:
    """A loopback port nothing listens on (bound, then closed)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    return port


async def test_up_degraded_and_down_from_real_answers(
    admin_api: httpx.AsyncClient,
    manager: SiteAccount,
    database: Database,
    worker: JobWorker,
    backend: str,
) -> None:
    cases = {
        "up": (document(f"{backend}/up"), "up", 200),
        "warn": (document(f"{backend}/warn"), "degraded", 200),
        "fail": (document(f"{backend}/fail"), "down", 503),
        "says-down": (document(f"{backend}/says-down"), "down", 200),
        "missing": (document(f"{backend}/nothing-here"), "down", 404),
        "extension": (
            document("https://api.example.com", **{"x-health-url": f"{backend}/up"}),
            "up",
            200,
        ),
        "relative": (document(f"{backend}/up/", **{"x-health-url": "/health"}), "up", 200),
    }
    for name, (doc, status, http_status) in cases.items():
        node = await api_node(database, doc)
        record = await check(admin_api, manager, worker, node)
        last = record["last_check"]
        assert (record["status"], last["status"], last["http_status"]) == (
            status,
            status,
            http_status,
        ), name
        assert last["latency_ms"] is not None and last["latency_ms"] >= 0, name
        assert last["trigger"] == "manual"
        assert last["url"] == record["health_url"], name
        assert (last["detail"] is None) == (status == "up"), name
    assert cases["extension"][0]["x-health-url"] == f"{backend}/up"


async def test_an_endless_body_is_not_read_whole(
    admin_api: httpx.AsyncClient,
    manager: SiteAccount,
    database: Database,
    worker: JobWorker,
    backend: str,
) -> None:
    # the check stops reading after 64 KiB (else it would never return) and does not look
    # into a body it did not read whole: the 200 decides
    node = await api_node(database, document(f"{backend}/endless"))
    record = await check(admin_api, manager, worker, node)
    assert (record["status"], record["last_check"]["http_status"]) == ("up", 200)


async def test_nothing_listening_is_down(
    admin_api: httpx.AsyncClient, manager: SiteAccount, database: Database, worker: JobWorker
) -> None:
    node = await api_node(database, document(f"http://127.0.0.1:{closed_port()}"))
    record = await check(admin_api, manager, worker, node)
    assert record["status"] == "down"
    assert record["last_check"]["http_status"] is None
    assert record["last_check"]["detail"].startswith("cannot connect")


async def test_a_slow_answer_is_degraded(
    admin_api: httpx.AsyncClient,
    manager: SiteAccount,
    database: Database,
    worker: JobWorker,
    settings: Settings,
    backend: str,
) -> None:
    # every answer takes more than 0 ms: the threshold, not the clock, decides
    worker.settings = loopback(settings, marketplace_health_degraded_ms=0)
    node = await api_node(database, document(f"{backend}/plain"))
    record = await check(admin_api, manager, worker, node)
    assert record["status"] == "degraded"
    assert record["last_check"]["detail"] == "answered slower than 0 ms"


async def test_the_ssrf_guard_refuses_internal_addresses(
    admin_api: httpx.AsyncClient,
    manager: SiteAccount,
    database: Database,
    clock: Clock,
    settings: Settings,
    backend: str,
) -> None:
    guarded = JobWorker(database, clock, settings=settings, poll_seconds=0.05)
    node = await api_node(database, document(f"{backend}/up"))
    record = await check(admin_api, manager, guarded, node)
    assert record["status"] == "unknown"
    last = record["last_check"]
    assert last["http_status"] is None and last["latency_ms"] is None
    assert "internal address" in last["detail"]
    assert last["detail"].startswith("not called")

    # loopback allowed, but the answer redirects to the cloud metadata address
    allowed = JobWorker(database, clock, settings=loopback(settings), poll_seconds=0.05)
    node = await api_node(database, document(f"{backend}/metadata"))
    record = await check(admin_api, manager, allowed, node)
    assert record["status"] == "unknown"
    assert "169.254.169.254" in record["last_check"]["detail"]


async def test_an_api_without_a_health_url(
    admin_api: httpx.AsyncClient, manager: SiteAccount, database: Database, worker: JobWorker
) -> None:
    for doc in (None, document(None), document("/relative/only")):
        node = await api_node(database, doc)
        record = await check(admin_api, manager, worker, node)
        assert record["status"] == "unknown"
        assert record["health_url"] is None
        assert record["last_check"]["url"] is None
        assert record["last_check"]["detail"].startswith("not called")


async def test_the_check_job_is_audited_and_reports_its_result(
    admin_api: httpx.AsyncClient,
    manager: SiteAccount,
    site_admin: SiteAccount,
    database: Database,
    worker: JobWorker,
    backend: str,
) -> None:
    node = await api_node(database, document(f"{backend}/up"), title="Pets")
    queued = await admin_api.post(url(f"/health/{node}/check"), headers=manager.headers)
    job_id = queued.json()["job_id"]
    job = (await admin_api.get(url(f"/jobs/{job_id}"), headers=site_admin.headers)).json()["data"]
    assert (job["kind"], job["status"], job["params"]) == (CHECK, "queued", {"node_id": str(node)})
    async with database.session() as session:
        [entry] = await session.scalars(select(AuditEntry).where(AuditEntry.entity_id == job_id))
    assert (entry.action, entry.module, entry.actor_id) == ("job.start", "health", manager.id)
    assert "Pets" in entry.summary
    assert await worker.run_next()
    job = (await admin_api.get(url(f"/jobs/{job_id}"), headers=site_admin.headers)).json()["data"]
    assert job["status"] == "succeeded"
    assert job["result"]["status"] == "up" and job["result"]["http_status"] == 200

    # a check of an API deleted before it ran writes nothing and says so
    queued = await admin_api.post(url(f"/health/{node}/check"), headers=manager.headers)
    deleted = await admin_api.delete(url(f"/apis/{node}"), headers=site_admin.headers)
    assert deleted.status_code == 204, deleted.text
    assert await worker.run_next()
    job_id = queued.json()["job_id"]
    job = (await admin_api.get(url(f"/jobs/{job_id}"), headers=site_admin.headers)).json()["data"]
    assert job["result"] == {"checked": False, "detail": f"API {node} no longer exists"}


async def test_the_scheduled_round_and_the_dashboard(
    admin_api: httpx.AsyncClient,
    manager: SiteAccount,
    database: Database,
    worker: JobWorker,
    clock: Clock,
    backend: str,
) -> None:
    up = await api_node(database, document(f"{backend}/up"), title="A up")
    warn = await api_node(database, document(f"{backend}/warn"), title="B warn")
    fail = await api_node(database, document(f"{backend}/fail"), title="C fail")
    nowhere = await api_node(database, document(None), title="D nowhere")
    await api_node(database, document(f"{backend}/up"), title="E draft", published=False)

    before = (await admin_api.get(url("/health"), headers=manager.headers)).json()
    assert before["meta"]["status_counts"] == {"up": 0, "degraded": 0, "down": 0, "unknown": 4}
    assert [r["last_check"] for r in before["data"]] == [None] * 4

    schedule = HealthSchedule(database, clock, interval=300)
    assert await schedule.queue_if_due()
    assert not await schedule.queue_if_due()  # one round at a time
    assert await worker.run_next()
    assert not await worker.run_next()

    dashboard = (await admin_api.get(url("/health"), headers=manager.headers)).json()
    assert dashboard["meta"]["status_counts"] == {"up": 1, "degraded": 1, "down": 1, "unknown": 1}
    assert dashboard["meta"]["count"] == 4
    rows = {r["api"]["id"]: r for r in dashboard["data"]}
    assert [r["api"]["title"] for r in dashboard["data"]] == [
        "A up",
        "B warn",
        "C fail",
        "D nowhere",
    ]
    assert rows[str(up)]["status"] == "up"
    assert rows[str(warn)]["status"] == "degraded"
    assert rows[str(fail)]["last_check"]["http_status"] == 503
    assert rows[str(nowhere)]["status"] == "unknown"
    assert {r["last_check"]["trigger"] for r in dashboard["data"]} == {"scheduled"}

    down = (await admin_api.get(url("/health?filter[status]=down"), headers=manager.headers)).json()
    assert [r["api"]["id"] for r in down["data"]] == [str(fail)]
    assert down["meta"]["status_counts"]["up"] == 1  # counts ignore the status filter
    by_status = await admin_api.get(url("/health?sort=-status"), headers=manager.headers)
    assert by_status.status_code == 200
    refused = await admin_api.get(url("/health?filter[status]=green"), headers=manager.headers)
    assert refused.status_code == 400
    assert refused.json()["errors"][0]["parameter"] == "filter[status]"
    async with database.session() as session:
        from portico.core.jobs import Job

        [round_job] = await session.scalars(select(Job).where(Job.kind == CHECK_ALL))
    assert round_job.result == {"checked": 4, "degraded": 1, "down": 1, "unknown": 1, "up": 1}


async def test_permissions_and_unknown_nodes(
    admin_api: httpx.AsyncClient,
    manager: SiteAccount,
    viewer: SiteAccount,
    client_only: SiteAccount,
    database: Database,
) -> None:
    node = await api_node(database, document(None))
    for path in ("/health", f"/health/{node}"):
        refused = await admin_api.get(url(path), headers=client_only.headers)
        assert refused.status_code == 403, path
        assert refused.json()["detail"] == "missing permission 'view api health dashboard'"
        assert (await admin_api.get(url(path), headers=viewer.headers)).status_code == 200
    refused = await admin_api.post(url(f"/health/{node}/check"), headers=viewer.headers)
    assert refused.status_code == 403
    assert refused.json()["detail"] == "missing permission 'refresh api health'"
    product = await api_node(database, None, bundle=Bundle.API_PRODUCTS)
    for missing in (str(uuid.uuid4()), "not-a-uuid", str(product)):
        answer = await admin_api.get(url(f"/health/{missing}"), headers=manager.headers)
        assert answer.status_code == 404, answer.text
        answer = await admin_api.post(url(f"/health/{missing}/check"), headers=manager.headers)
        assert answer.status_code == 404, answer.text
