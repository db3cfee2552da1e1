"""The health jobs: ``health-check`` (one API, queued by ``POST /health/{node}/check``) and
``health-check-all`` (every published API, queued by the schedule, ``schedule.py``).

No transaction is held while an API is called: the documents are read in a short session,
the calls made, and what was seen written in a transaction of its own (an API deleted
meanwhile is skipped). A round works in batches of :data:`BATCH` APIs called together,
reports its progress and stops between batches when asked. Each API keeps its
:data:`KEEP_CHECKS` latest checks.
"""

from __future__ import annotations

import asyncio
import uuid
from collections import Counter
from typing import Any

from portico.core.job_worker import JobContext, JobError, register
from portico.marketplace.health.checker import Checker, row
from portico.marketplace.health.models import CheckTrigger
from portico.marketplace.health.probe import Observation
from portico.marketplace.health.repository import HealthRepository
from portico.marketplace.node.models import Bundle
from portico.marketplace.node.repository import NodeRepository

CHECK = "health-check"
CHECK_ALL = "health-check-all"
BATCH = 20
KEEP_CHECKS = 100


def _checker(ctx: JobContext) -> Checker:
    if ctx.settings is None:
        raise JobError("this worker has no settings: it cannot reach APIs' health URLs")
    return Checker.of(ctx.settings)


async def check_api(ctx: JobContext) -> dict[str, Any]:
    if set(ctx.params) != {"node_id"}:
        raise JobError("params: node_id (an API node's id)")
    try:
        node_id = uuid.UUID(str(ctx.params["node_id"]))
    except ValueError:
        raise JobError("params: node_id must be an API node's id") from None
    checker = _checker(ctx)
    async with ctx.database.session() as session:
        node = await NodeRepository(session).in_bundle(Bundle.APIS, node_id)
        if node is None:
            return {"checked": False, "detail": f"API {node_id} no longer exists"}
        document = node.documentation
    async with checker.client() as client:
        url, seen = await checker.observe(client, document)
    written = await _write(ctx, [(node_id, url, seen)], CheckTrigger.MANUAL)
    if not written:
        return {"checked": False, "detail": f"API {node_id} was deleted while checked"}
    return {
        "checked": True,
        "status": seen.status.value,
        "http_status": seen.http_status,
        "latency_ms": seen.latency_ms,
    }


async def check_all(ctx: JobContext) -> dict[str, int]:
    if ctx.params not in ({}, {"trigger": "scheduled"}):
        raise JobError("params: none")
    checker = _checker(ctx)
    counts: Counter[str] = Counter()
    after: uuid.UUID | None = None
    done = 0
    async with checker.client() as client:
        while True:
            await ctx.check_cancelled()
            async with ctx.database.session() as session:
                batch = await HealthRepository(session).published_apis(after=after, limit=BATCH)
            if not batch:
                break
            seen = await asyncio.gather(*(checker.observe(client, doc) for _, doc in batch))
            results = [
                (node_id, url, o) for (node_id, _), (url, o) in zip(batch, seen, strict=True)
            ]
            await _write(ctx, results, CheckTrigger.SCHEDULED)
            counts.update(o.status.value for _, _, o in results)
            after = batch[-1][0]
            done += len(batch)
            await ctx.progress(done)
    return {"checked": done, **{status: counts[status] for status in sorted(counts)}}


async def _write(
    ctx: JobContext,
    results: list[tuple[uuid.UUID, str | None, Observation]],
    trigger: CheckTrigger,
) -> int:
    """The checks of the APIs that still exist, in one transaction; how many were written."""
    now = ctx.clock.now()
    async with ctx.database.session() as session, session.begin():
        existing = await NodeRepository(session).many([node_id for node_id, _, _ in results])
        repository = HealthRepository(session)
        written = 0
        for node_id, url, seen in results:
            if node_id not in existing:
                continue
            await repository.add(row(node_id, url, seen, trigger=trigger, now=now))
            await repository.prune(node_id, keep=KEEP_CHECKS)
            written += 1
    return written


register(CHECK, check_api)
register(CHECK_ALL, check_all)
