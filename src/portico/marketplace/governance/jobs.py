"""The ``governance-lint`` job: one API's OpenAPI document linted, its run stored.

A job rather than work inside the publishing request: validating a 300 kB document takes
about 1.5 s of CPU (measured), a bulk transition may publish hundreds of APIs, and a lint
must never delay or fail a publication. The document is read in a short session, linted in
a thread (the worker's loop keeps beating), and the run written in a transaction of its own;
an API deleted meanwhile ends the job with nothing written. Re-runnable: a re-run lints the
document as it is then.

Registered when this module loads: by the governance triggers (which enqueue it) and by
``portico serve``'s workers (``worker.py``).
"""

from __future__ import annotations

import asyncio
import uuid
from datetime import datetime
from typing import Any

from portico.core.job_worker import JobContext, JobError, register
from portico.marketplace.governance import linter
from portico.marketplace.governance.models import GovernanceRun, LintTrigger
from portico.marketplace.governance.repository import GovernanceRepository
from portico.marketplace.governance.rules import Category
from portico.marketplace.node.models import Bundle
from portico.marketplace.node.repository import NodeRepository

LINT = "governance-lint"
#: runs kept per API (the history endpoint's "recent runs")
KEEP_RUNS = 100


async def lint_api(ctx: JobContext) -> dict[str, Any]:
    node_id, trigger = _params(ctx.params)
    disabled = ctx.settings.marketplace_governance_disabled_rules if ctx.settings else []
    async with ctx.database.session() as session:
        node = await NodeRepository(session).in_bundle(Bundle.APIS, node_id)
        if node is None:
            return {"linted": False, "detail": f"API {node_id} no longer exists"}
        document = node.documentation
    try:
        result = await asyncio.to_thread(linter.lint, document, disabled=disabled)
    except linter.UnknownRules as error:
        raise JobError(str(error)) from None
    async with ctx.database.session() as session, session.begin():
        if await NodeRepository(session).in_bundle_for_update(Bundle.APIS, node_id) is None:
            return {"linted": False, "detail": f"API {node_id} was deleted while linted"}
        run = record(result, node_id=node_id, trigger=trigger, now=ctx.clock.now())
        repository = GovernanceRepository(session)
        await repository.add(run)
        await repository.prune(node_id, keep=KEEP_RUNS)
    return {"linted": True, "run_id": str(run.id), "overall": run.score_overall}


def record(
    result: linter.Result, *, node_id: uuid.UUID, trigger: LintTrigger, now: datetime
) -> GovernanceRun:
    return GovernanceRun(
        id=uuid.uuid4(),
        node_id=node_id,
        created_at=now,
        trigger=trigger,
        ruleset_version=result.ruleset_version,
        disabled_rules=result.disabled_rules,
        document_hash=result.document_hash,
        valid=result.valid,
        score_overall=result.overall,
        score_security=result.scores[Category.SECURITY],
        score_style=result.scores[Category.STYLE],
        score_documentation=result.scores[Category.DOCUMENTATION],
        counts={category.value: counts for category, counts in result.counts.items()},
        findings=[finding.as_json() for finding in result.findings],
        findings_total=result.findings_total,
    )


def _params(params: dict[str, Any]) -> tuple[uuid.UUID, LintTrigger]:
    """``{node_id, trigger}`` as the triggers queued them; anything else is refused."""
    if set(params) != {"node_id", "trigger"}:
        raise JobError("params: node_id (an API node's id) and trigger (publish or import)")
    try:
        return uuid.UUID(str(params["node_id"])), LintTrigger(params["trigger"])
    except ValueError:
        raise JobError("params: node_id must be a node id, trigger publish or import") from None


register(LINT, lint_api)
