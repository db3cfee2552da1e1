"""API health: the dashboard (published APIs with their latest check, counts per status),
one API's record, and queuing an immediate check (``health-check`` job, audited)."""

from __future__ import annotations

import uuid
from datetime import datetime

from sqlalchemy.ext.asyncio import AsyncSession

from portico.core.errors import NotFound
from portico.core.filter_values import FilterValues
from portico.core.job_worker import enqueue
from portico.core.jobs import Job
from portico.core.pagination import ListQuery, Page
from portico.marketplace.access import SiteCaller
from portico.marketplace.health.jobs import CHECK
from portico.marketplace.health.models import ApiHealthCheck, HealthStatus
from portico.marketplace.health.repository import DashboardFilters, HealthRepository
from portico.marketplace.node.models import Bundle, CatalogueNode
from portico.marketplace.node.repository import NodeRepository

MODULE = "health"
RECENT = 20


class ApiNotFound(NotFound):
    default_detail = "no API node has this id"


async def dashboard(
    *, session: AsyncSession, query: ListQuery
) -> tuple[Page[tuple[CatalogueNode, ApiHealthCheck | None]], dict[str, int]]:
    values = FilterValues(query.filters)
    status = values.choice("status", HealthStatus)
    organisation_id = values.identifier("organisation")
    values.check()
    repository = HealthRepository(session)
    page = await repository.dashboard(
        DashboardFilters(status=status, organisation_id=organisation_id), query
    )
    counts = await repository.status_counts(DashboardFilters(organisation_id=organisation_id))
    return page, counts


async def api(*, session: AsyncSession, node_id: uuid.UUID) -> CatalogueNode:
    """The API node (health applies to APIs: products and pages have no health URL)."""
    node = await NodeRepository(session).in_bundle(Bundle.APIS, node_id)
    if node is None:
        raise ApiNotFound(f"no API node has the id {node_id}")
    return node


async def record(
    *, session: AsyncSession, node_id: uuid.UUID
) -> tuple[CatalogueNode, list[ApiHealthCheck]]:
    """The API and its latest checks, newest first."""
    node = await api(session=session, node_id=node_id)
    return node, await HealthRepository(session).recent(node.id, RECENT)


async def queue_check(
    *, session: AsyncSession, caller: SiteCaller, node_id: uuid.UUID, now: datetime
) -> Job:
    node = await api(session=session, node_id=node_id)
    params = {"node_id": str(node.id)}
    job = await enqueue(session, kind=CHECK, params=params, created_by=caller.user.id, now=now)
    await caller.audit(
        session,
        "job.start",
        entity_type="job",
        entity_id=job.id,
        module=MODULE,
        bundle=node.bundle.value,
        summary=f"queued a health check ({CHECK} job {job.id}) of API '{node.title}'",
        after={"id": str(job.id), "kind": job.kind, "params": params},
    )
    return job
