"""Health checks: an API's latest and recent ones, the dashboard (every published API with
its latest check, and the counts per status), the published APIs a scheduled round checks,
and whether a scheduled round is already queued or recent."""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import delete, func, or_, select

from portico.core.db.repository import Repository
from portico.core.jobs import TERMINAL, Job
from portico.core.pagination import ListQuery, Page
from portico.marketplace.health.models import ApiHealthCheck, HealthStatus
from portico.marketplace.node.models import Bundle, CatalogueNode
from portico.marketplace.node.repository import newest_for_node


@dataclass(frozen=True)
class DashboardFilters:
    status: HealthStatus | None = None
    organisation_id: uuid.UUID | None = None


class HealthRepository(Repository[ApiHealthCheck]):
    model = ApiHealthCheck
    dashboard_columns: Mapping[str, Any] = {
        "title": CatalogueNode.title,
        "status": ApiHealthCheck.status,
        "checked_at": ApiHealthCheck.checked_at,
        "latency_ms": ApiHealthCheck.latency_ms,
    }

    async def recent(self, node_id: uuid.UUID, limit: int) -> list[ApiHealthCheck]:
        """The node's latest checks, newest first."""
        return await self.all(
            select(ApiHealthCheck)
            .where(ApiHealthCheck.node_id == node_id)
            .order_by(ApiHealthCheck.checked_at.desc(), ApiHealthCheck.id.desc())
            .limit(limit)
        )

    async def prune(self, node_id: uuid.UUID, *, keep: int) -> None:
        stale = (
            select(ApiHealthCheck.id)
            .where(ApiHealthCheck.node_id == node_id)
            .order_by(ApiHealthCheck.checked_at.desc(), ApiHealthCheck.id.desc())
            .offset(keep)
        )
        ids = list(await self.session.scalars(stale))
        if ids:
            await self.session.execute(delete(ApiHealthCheck).where(ApiHealthCheck.id.in_(ids)))

    def _published(self, filters: DashboardFilters) -> Any:
        statement = (
            select(CatalogueNode, ApiHealthCheck)
            .outerjoin(
                ApiHealthCheck,
                ApiHealthCheck.id
                == newest_for_node(
                    ApiHealthCheck.id, ApiHealthCheck.node_id, ApiHealthCheck.checked_at
                ),
            )
            .where(CatalogueNode.bundle == Bundle.APIS, CatalogueNode.published.is_(True))
        )
        if filters.organisation_id is not None:
            statement = statement.where(CatalogueNode.organisation_id == filters.organisation_id)
        return statement

    async def dashboard(
        self, filters: DashboardFilters, query: ListQuery
    ) -> Page[tuple[CatalogueNode, ApiHealthCheck | None]]:
        statement = self._published(filters)
        if filters.status is HealthStatus.UNKNOWN:
            statement = statement.where(
                or_(ApiHealthCheck.id.is_(None), ApiHealthCheck.status == HealthStatus.UNKNOWN)
            )
        elif filters.status is not None:
            statement = statement.where(ApiHealthCheck.status == filters.status)
        total = await self.session.scalar(
            select(func.count()).select_from(statement.order_by(None).subquery())
        )
        # APIs never checked come last whichever way a check's column is sorted
        ordering = [
            (
                self.dashboard_columns[k.name].desc()
                if k.descending
                else self.dashboard_columns[k.name].asc()
            ).nulls_last()
            for k in query.sort
        ]
        rows = await self.session.execute(
            statement.order_by(*ordering, CatalogueNode.id.asc())
            .offset(query.offset)
            .limit(query.size)
        )
        items: list[tuple[CatalogueNode, ApiHealthCheck | None]] = [
            (row[0], row[1]) for row in rows
        ]
        return Page(items=items, page=query.page, size=query.size, total=int(total or 0))

    async def status_counts(self, filters: DashboardFilters) -> dict[str, int]:
        """How many published APIs are in each status now (by their latest check)."""
        latest = self._published(filters).subquery()
        status = func.coalesce(latest.c.status, HealthStatus.UNKNOWN.value)
        rows = await self.session.execute(select(status, func.count()).group_by(status))
        counts = {s.value: 0 for s in HealthStatus}
        for value, count in rows:
            counts[str(value)] = int(count)
        return counts

    async def published_apis(
        self, *, after: uuid.UUID | None, limit: int
    ) -> Sequence[tuple[uuid.UUID, dict[str, Any] | None]]:
        """Published APIs (id, document) in id order after ``after``: a scheduled round
        reads them a batch at a time."""
        statement = select(CatalogueNode.id, CatalogueNode.documentation).where(
            CatalogueNode.bundle == Bundle.APIS, CatalogueNode.published.is_(True)
        )
        if after is not None:
            statement = statement.where(CatalogueNode.id > after)
        rows = await self.session.execute(statement.order_by(CatalogueNode.id).limit(limit))
        return [(row[0], row[1]) for row in rows]

    async def round_due(self, kind: str, *, since: datetime) -> bool:
        """Whether a scheduled round should be queued: none unfinished, none since ``since``
        (every replica's scheduler asks; two asking at the same moment may both queue one, and
        the second round only checks again)."""
        busy = await self.session.scalar(
            select(Job.id)
            .where(
                Job.kind == kind,
                or_(Job.status.not_in(list(TERMINAL)), Job.created_at >= since),
            )
            .limit(1)
        )
        return busy is None
