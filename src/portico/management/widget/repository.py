from __future__ import annotations

import uuid

from sqlalchemy import Select, select

from portico.core.db.repository import Repository
from portico.management.widget.models import Widget


class WidgetRepository(Repository[Widget]):
    model = Widget
    sort_columns = {
        "name": Widget.name,
        "createdAt": Widget.created_at,
        "updatedAt": Widget.updated_at,
    }

    def in_org(self, org_id: uuid.UUID) -> Select[Widget]:
        return select(Widget).where(Widget.org_id == org_id)

    async def get_in_org(self, org_id: uuid.UUID, widget_id: uuid.UUID) -> Widget | None:
        return await self.first(self.in_org(org_id).where(Widget.id == widget_id))
