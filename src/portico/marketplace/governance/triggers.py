"""When an API is linted: on publication, and when an import brings a new revision of a
published API (its document differs from the one its latest run linted). Each queues a
``governance-lint`` job in the transaction of the change (``node/hooks.py``), so a
publication that fails queues nothing and a lint never delays or fails a publication.

Registered when this module loads, by the governance endpoints (the module installed)."""

from __future__ import annotations

import uuid

from sqlalchemy.ext.asyncio import AsyncSession

from portico.core.job_worker import enqueue
from portico.marketplace.governance.jobs import LINT
from portico.marketplace.governance.linter import document_hash
from portico.marketplace.governance.models import LintTrigger
from portico.marketplace.governance.repository import GovernanceRepository
from portico.marketplace.node import hooks
from portico.marketplace.node.models import Bundle, CatalogueNode


async def lint_published(
    session: AsyncSession, node: CatalogueNode, actor_id: uuid.UUID | None
) -> None:
    if node.bundle is Bundle.APIS:
        await _queue(session, node, LintTrigger.PUBLISH, actor_id)


async def lint_new_revision(
    session: AsyncSession, node: CatalogueNode, actor_id: uuid.UUID | None
) -> None:
    """Only a published API, and only when its document changed since its latest run (an
    import that brings the same document again lints nothing)."""
    if node.bundle is not Bundle.APIS or not node.published:
        return
    current = document_hash(node.documentation) if node.documentation is not None else None
    if await GovernanceRepository(session).latest_hash(node.id) == current:
        return
    await _queue(session, node, LintTrigger.IMPORT, actor_id)


async def _queue(
    session: AsyncSession, node: CatalogueNode, trigger: LintTrigger, actor_id: uuid.UUID | None
) -> None:
    await enqueue(
        session,
        kind=LINT,
        params={"node_id": str(node.id), "trigger": trigger.value},
        created_by=actor_id,
    )


hooks.on_published(lint_published)
hooks.on_imported(lint_new_revision)
