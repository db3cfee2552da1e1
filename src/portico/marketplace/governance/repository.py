"""Linting runs: an API's latest and its history, the latest of every published API, and the
pruning that keeps an API's history to its most recent runs."""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Select, and_, delete, func, select

from portico.core.db.repository import Repository
from portico.core.pagination import ListQuery, Page
from portico.marketplace.governance.models import GovernanceRun
from portico.marketplace.node.models import Bundle, CatalogueNode
from portico.marketplace.node.repository import newest_for_node

#: bands of the overall score (linter.band), as conditions on the latest run
BANDS: Mapping[str, tuple[int, int]] = {
    "good": (80, 100),
    "fair": (60, 79),
    "poor": (40, 59),
    "failing": (0, 39),
}
UNLINTED = "unlinted"


@dataclass(frozen=True)
class OverviewFilters:
    #: a key of BANDS, or UNLINTED
    band: str | None = None
    valid: bool | None = None
    organisation_id: uuid.UUID | None = None


class GovernanceRepository(Repository[GovernanceRun]):
    model = GovernanceRun
    sort_columns = {"created_at": GovernanceRun.created_at}
    #: the overview's sort keys
    overview_columns: Mapping[str, Any] = {
        "title": CatalogueNode.title,
        "score": GovernanceRun.score_overall,
        "security": GovernanceRun.score_security,
        "style": GovernanceRun.score_style,
        "documentation": GovernanceRun.score_documentation,
        "linted_at": GovernanceRun.created_at,
    }

    def of_node(self, node_id: uuid.UUID) -> Select[GovernanceRun]:
        return select(GovernanceRun).where(GovernanceRun.node_id == node_id)

    async def latest(self, node_id: uuid.UUID) -> GovernanceRun | None:
        return await self.first(
            self.of_node(node_id).order_by(GovernanceRun.created_at.desc(), GovernanceRun.id.desc())
        )

    async def latest_hash(self, node_id: uuid.UUID) -> str | None:
        found: str | None = await self.session.scalar(
            select(GovernanceRun.document_hash)
            .where(GovernanceRun.node_id == node_id)
            .order_by(GovernanceRun.created_at.desc(), GovernanceRun.id.desc())
            .limit(1)
        )
        return found

    async def prune(self, node_id: uuid.UUID, *, keep: int) -> None:
        """Delete the node's runs older than its ``keep`` newest."""
        stale = (
            select(GovernanceRun.id)
            .where(GovernanceRun.node_id == node_id)
            .order_by(GovernanceRun.created_at.desc(), GovernanceRun.id.desc())
            .offset(keep)
        )
        ids = list(await self.session.scalars(stale))
        if ids:
            await self.session.execute(delete(GovernanceRun).where(GovernanceRun.id.in_(ids)))

    async def overview(
        self, filters: OverviewFilters, query: ListQuery
    ) -> Page[tuple[CatalogueNode, GovernanceRun | None]]:
        """Every published API with its latest run (None before its first), one page."""
        statement = (
            select(CatalogueNode, GovernanceRun)
            .outerjoin(
                GovernanceRun,
                GovernanceRun.id
                == newest_for_node(
                    GovernanceRun.id, GovernanceRun.node_id, GovernanceRun.created_at
                ),
            )
            .where(CatalogueNode.bundle == Bundle.APIS, CatalogueNode.published.is_(True))
        )
        if filters.band == UNLINTED:
            statement = statement.where(GovernanceRun.id.is_(None))
        elif filters.band is not None:
            low, high = BANDS[filters.band]
            statement = statement.where(
                and_(GovernanceRun.score_overall >= low, GovernanceRun.score_overall <= high)
            )
        if filters.valid is not None:
            statement = statement.where(GovernanceRun.valid.is_(filters.valid))
        if filters.organisation_id is not None:
            statement = statement.where(CatalogueNode.organisation_id == filters.organisation_id)
        total = await self.session.scalar(
            select(func.count()).select_from(statement.order_by(None).subquery())
        )
        # APIs never linted come last whichever way a score is sorted (both stores alike)
        ordering = [
            (
                self.overview_columns[k.name].desc()
                if k.descending
                else self.overview_columns[k.name].asc()
            ).nulls_last()
            for k in query.sort
        ]
        rows = await self.session.execute(
            statement.order_by(*ordering, CatalogueNode.id.asc())
            .offset(query.offset)
            .limit(query.size)
        )
        items: list[tuple[CatalogueNode, GovernanceRun | None]] = [(row[0], row[1]) for row in rows]
        count = int(total or 0)
        return Page(items=items, page=query.page, size=query.size, total=count)
