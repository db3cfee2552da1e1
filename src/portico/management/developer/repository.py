from __future__ import annotations

import uuid
from collections.abc import Iterable

from sqlalchemy import ColumnElement, func, select

from portico.core.db.repository import OrgScopedRepository
from portico.core.pagination import ListQuery
from portico.management.app.models import App
from portico.management.developer.models import Developer


class DeveloperRepository(OrgScopedRepository[Developer]):
    model = Developer
    sort_columns = {
        "email": Developer.email,
        "lastName": Developer.last_name,
        "createdAt": Developer.created_at,
    }
    name_column = "email"

    def conditions(self, query: ListQuery) -> list[ColumnElement[bool]]:
        conditions = []
        if "email" in query.filters:  # stored lower-cased
            conditions.append(Developer.email == query.filters["email"].strip().lower())
        if "status" in query.filters:
            conditions.append(Developer.status == query.filters["status"])
        return conditions

    async def app_counts(self, developer_ids: Iterable[uuid.UUID]) -> dict[uuid.UUID, int]:
        """Developer id → how many apps they own (0 for none)."""
        wanted = list(developer_ids)
        counts = dict.fromkeys(wanted, 0)
        if not wanted:
            return counts
        rows = await self.session.execute(
            select(App.developer_id, func.count(App.id))
            .where(App.developer_id.in_(wanted))
            .group_by(App.developer_id)
        )
        for developer_id, count in rows:
            counts[developer_id] = int(count)
        return counts

    async def apps(self, developer_id: uuid.UUID) -> list[App]:
        return list(
            await self.session.scalars(
                select(App).where(App.developer_id == developer_id).order_by(App.id)
            )
        )

    async def app_environment_ids(self, developer_id: uuid.UUID) -> set[uuid.UUID]:
        rows = await self.session.scalars(
            select(App.environment_id).where(App.developer_id == developer_id).distinct()
        )
        return set(rows)
