from __future__ import annotations

from portico.core.db.repository import OrgScopedRepository
from portico.management.widget.models import Widget


class WidgetRepository(OrgScopedRepository[Widget]):
    model = Widget
    sort_columns = {
        "name": Widget.name,
        "createdAt": Widget.created_at,
        "updatedAt": Widget.updated_at,
    }
