"""``/governance``: an API is linted when published (a job), its latest run read with its
findings, its history newest first, the overview across published APIs with their scores;
a new imported revision of a published API is linted again, the same document is not;
permissions (403) and unknown or non-API nodes (404)."""

from __future__ import annotations

import copy
import uuid
from typing import Any

import httpx
from sqlalchemy import select

from portico.core.audit import Actor
from portico.core.db.engine import Database
from portico.core.job_worker import JobWorker
from portico.core.jobs import Job, JobStatus
from portico.marketplace.connectors.base import RemoteApiDetail
from portico.marketplace.governance.jobs import LINT
from portico.marketplace.imports import writer
from portico.marketplace.node.models import Bundle, ModerationState
from tests.marketplace.conftest import SiteAccount, url
from tests.marketplace.content.catalogue import EPOCH, Catalogue
from tests.marketplace.governance.conftest import api_node
from tests.marketplace.governance.documents import CLEAN, MIXED, MIXED_SCORES


async def publish(client: httpx.AsyncClient, who: SiteAccount, node: uuid.UUID) -> None:
    answer = await client.post(
        url(f"/content/apis/{node}/transitions/publish"), headers=who.headers
    )
    assert answer.status_code == 200, answer.text


async def transition(
    client: httpx.AsyncClient, who: SiteAccount, node: uuid.UUID, name: str
) -> None:
    answer = await client.post(url(f"/content/apis/{node}/transitions/{name}"), headers=who.headers)
    assert answer.status_code == 200, answer.text


async def get(client: httpx.AsyncClient, who: SiteAccount, path: str) -> Any:
    answer = await client.get(url(path), headers=who.headers)
    assert answer.status_code == 200, answer.text
    return answer.json()


async def lint_jobs(database: Database) -> list[Job]:
    async with database.session() as session:
        return list(
            await session.scalars(select(Job).where(Job.kind == LINT).order_by(Job.created_at))
        )


async def test_publishing_queues_a_lint_whose_result_is_read_back(
    admin_api: httpx.AsyncClient, manager: SiteAccount, database: Database, worker: JobWorker
) -> None:
    node = await api_node(database, MIXED, title="Legacy")
    before = await get(admin_api, manager, f"/governance/{node}")
    assert before["data"]["latest_run"] is None

    await publish(admin_api, manager, node)
    [job] = await lint_jobs(database)
    assert job.params == {"node_id": str(node), "trigger": "publish"}
    assert job.created_by == manager.id
    assert await worker.run_next()

    data = (await get(admin_api, manager, f"/governance/{node}"))["data"]
    assert data["api"]["id"] == str(node)
    run = data["latest_run"]
    assert run["trigger"] == "publish"
    assert run["valid"] is False
    assert run["scores"] == {**MIXED_SCORES, "band": "fair"}
    assert run["counts"]["security"] == {"error": 3, "warning": 5, "info": 1}
    assert run["ruleset_version"] and run["disabled_rules"] == []
    assert len(run["document_hash"]) == 64
    assert run["findings_total"] == len(run["findings"]) == 21
    severities = [f["severity"] for f in run["findings"]]
    assert severities == sorted(severities, key=["error", "warning", "info"].index)
    https = next(f for f in run["findings"] if f["rule"] == "security-https-servers")
    assert https == {
        "rule": "security-https-servers",
        "category": "security",
        "severity": "error",
        "pointer": "/servers/0/url",
        "message": "the server http://legacy.example.com is not reached over HTTPS",
        "fix": https["fix"],
    }
    assert "HTTPS" in https["fix"]
    done = (await get(admin_api, manager, f"/jobs/{job.id}"))["data"]
    assert done["status"] == "succeeded"
    assert done["result"] == {"linted": True, "run_id": run["id"], "overall": 70}


async def test_history_is_newest_first_and_publishing_again_lints_again(
    admin_api: httpx.AsyncClient, manager: SiteAccount, database: Database, worker: JobWorker
) -> None:
    node = await api_node(database, MIXED)
    await publish(admin_api, manager, node)
    assert await worker.run_next()
    # the document is fixed while the API is a draft again, then published again
    for name in ("create_new_draft", "submit_for_review"):
        await transition(admin_api, manager, node, name)
    async with database.session() as session, session.begin():
        from portico.marketplace.node.models import CatalogueNode

        stored = await session.get(CatalogueNode, node)
        assert stored is not None
        stored.documentation = copy.deepcopy(CLEAN)
    await publish(admin_api, manager, node)
    assert await worker.run_next()
    assert not await worker.run_next()

    history = await get(admin_api, manager, f"/governance/{node}/history")
    assert history["meta"]["count"] == 2
    newest, oldest = history["data"]
    assert newest["scores"]["overall"] == 100 and oldest["scores"]["overall"] == 70
    assert newest["linted_at"] > oldest["linted_at"]
    assert "findings" not in newest
    ascending = await get(admin_api, manager, f"/governance/{node}/history?sort=created_at")
    assert [r["id"] for r in ascending["data"]] == [oldest["id"], newest["id"]]
    latest = (await get(admin_api, manager, f"/governance/{node}"))["data"]["latest_run"]
    assert latest["id"] == newest["id"] and latest["findings"] == []


async def test_the_overview_lists_published_apis_with_their_latest_scores(
    admin_api: httpx.AsyncClient,
    manager: SiteAccount,
    database: Database,
    worker: JobWorker,
    catalogue: Catalogue,
) -> None:
    clean = await api_node(database, CLEAN, title="B clean")
    mixed = await api_node(database, MIXED, title="A mixed")
    unlinted = await api_node(database, CLEAN, title="C unlinted", state=ModerationState.PUBLISHED)
    await api_node(database, CLEAN, title="D draft", state=ModerationState.DRAFT)
    for node in (clean, mixed):
        await publish(admin_api, manager, node)
        assert await worker.run_next()

    overview = await get(admin_api, manager, "/governance")
    assert [r["api"]["title"] for r in overview["data"]] == ["A mixed", "B clean", "C unlinted"]
    assert overview["meta"]["count"] == 3
    scores = {r["api"]["id"]: r["latest_run"] for r in overview["data"]}
    assert scores[str(clean)]["scores"]["overall"] == 100
    assert scores[str(mixed)]["scores"]["band"] == "fair"
    assert scores[str(unlinted)] is None

    by_score = await get(admin_api, manager, "/governance?sort=-score")
    assert [r["api"]["id"] for r in by_score["data"]] == [str(clean), str(mixed), str(unlinted)]
    by_score = await get(admin_api, manager, "/governance?sort=score")
    assert [r["api"]["id"] for r in by_score["data"]] == [str(mixed), str(clean), str(unlinted)]
    for band, expected in (("good", [clean]), ("fair", [mixed]), ("unlinted", [unlinted])):
        found = await get(admin_api, manager, f"/governance?filter[band]={band}")
        assert [r["api"]["id"] for r in found["data"]] == [str(n) for n in expected], band
    invalid = await get(admin_api, manager, "/governance?filter[valid]=false")
    assert [r["api"]["id"] for r in invalid["data"]] == [str(mixed)]

    refused = await admin_api.get(url("/governance?filter[band]=great"), headers=manager.headers)
    assert refused.status_code == 400
    assert refused.json()["errors"][0]["parameter"] == "filter[band]"
    refused = await admin_api.get(url("/governance?filter[colour]=red"), headers=manager.headers)
    assert refused.status_code == 400


async def test_a_new_imported_revision_of_a_published_api_is_linted_again(
    admin_api: httpx.AsyncClient,
    manager: SiteAccount,
    database: Database,
    worker: JobWorker,
    catalogue: Catalogue,
) -> None:
    connection_id = await catalogue.connection()
    origin = writer.Origin(
        connection_id=connection_id,
        connection_name="remote",
        source="openapi",
        actor=Actor(id=manager.id, email=manager.email),
        now=EPOCH,
    )

    async def imported(document: dict[str, Any], revision: str) -> uuid.UUID:
        detail = RemoteApiDetail(
            api_id="legacy",
            title="Legacy",
            version="1",
            overview="",
            documentation=document,
            uuid=None,
            revision=revision,
        )
        async with database.session() as session, session.begin():
            written = await writer.write_api(session, origin, detail)
        return written.node.id

    node = await imported(MIXED, "1")
    assert await lint_jobs(database) == []  # a draft is not linted
    for name in ("submit_for_review", "publish"):
        await transition(admin_api, manager, node, name)
    assert await worker.run_next()

    assert await imported(MIXED, "1") == node  # the same document again: nothing to lint
    assert len(await lint_jobs(database)) == 1
    await imported(CLEAN, "2")
    jobs = await lint_jobs(database)
    assert [j.params["trigger"] for j in jobs] == ["publish", "import"]
    assert jobs[1].created_by == manager.id
    assert await worker.run_next()
    history = await get(admin_api, manager, f"/governance/{node}/history")
    assert [(r["trigger"], r["scores"]["overall"]) for r in history["data"]] == [
        ("import", 100),
        ("publish", 70),
    ]


async def test_rules_switched_off_in_settings(
    admin_api: httpx.AsyncClient, manager: SiteAccount, database: Database, worker: JobWorker
) -> None:
    assert worker.settings is not None
    worker.settings = worker.settings.model_copy(
        update={"marketplace_governance_disabled_rules": ["security-429-documented"]}
    )
    node = await api_node(database, MIXED)
    await publish(admin_api, manager, node)
    assert await worker.run_next()
    run = (await get(admin_api, manager, f"/governance/{node}"))["data"]["latest_run"]
    assert run["disabled_rules"] == ["security-429-documented"]
    assert run["scores"]["security"] == 63  # E 3, W 3, I 1: the two 429 warnings gone
    assert not [f for f in run["findings"] if f["rule"] == "security-429-documented"]

    worker.settings = worker.settings.model_copy(
        update={"marketplace_governance_disabled_rules": ["no-such-rule"]}
    )
    for name in ("create_new_draft", "submit_for_review", "publish"):
        await transition(admin_api, manager, node, name)
    assert await worker.run_next()
    failed = (await lint_jobs(database))[-1]
    assert failed.status is JobStatus.FAILED
    assert "no-such-rule" in failed.errors[-1]["detail"]


async def test_permissions_and_unknown_nodes(
    admin_api: httpx.AsyncClient,
    manager: SiteAccount,
    client_only: SiteAccount,
    database: Database,
    catalogue: Catalogue,
) -> None:
    node = await api_node(database, CLEAN)
    for path in ("/governance", f"/governance/{node}", f"/governance/{node}/history"):
        refused = await admin_api.get(url(path), headers=client_only.headers)
        assert refused.status_code == 403, path
        assert refused.json()["detail"] == "missing permission 'view api governance'"
    product = await catalogue.node(Bundle.API_PRODUCTS)
    for missing in (str(uuid.uuid4()), "not-a-uuid", str(product)):
        for path in (f"/governance/{missing}", f"/governance/{missing}/history"):
            answer = await admin_api.get(url(path), headers=manager.headers)
            assert answer.status_code == 404, (path, answer.text)
            assert answer.headers["content-type"].startswith("application/problem+json")
