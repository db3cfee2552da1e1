from __future__ import annotations

import uuid

from portico.core.db.repository import OrgScopedRepository
from portico.management.secret.models import StoredSecret


class SecretRepository(OrgScopedRepository[StoredSecret]):
    model = StoredSecret
    sort_columns = {
        "name": StoredSecret.name,
        "createdAt": StoredSecret.created_at,
        "updatedAt": StoredSecret.updated_at,
    }
    filter_columns = {"name": StoredSecret.name}

    async def by_name(self, org_id: uuid.UUID, name: str) -> StoredSecret | None:
        return await self.first(self.in_org(org_id).where(StoredSecret.name == name))
