from __future__ import annotations

import uuid
from collections.abc import Mapping

from sqlalchemy import Select, select

from portico.core.audit import AuditEntry
from portico.core.db.repository import Repository

#: public filter name → column
FILTER_COLUMNS = {
    "action": AuditEntry.action,
    "entityType": AuditEntry.entity_type,
    "entityId": AuditEntry.entity_id,
    "actorEmail": AuditEntry.actor_email,
}


class AuditLogRepository(Repository[AuditEntry]):
    model = AuditEntry
    sort_columns = {"occurredAt": AuditEntry.occurred_at}

    def of_org(self, org_id: uuid.UUID, filters: Mapping[str, str]) -> Select[AuditEntry]:
        statement = select(AuditEntry).where(
            AuditEntry.org_id == org_id, AuditEntry.surface == "management"
        )
        for name, value in filters.items():
            statement = statement.where(FILTER_COLUMNS[name] == value)
        return statement
