from __future__ import annotations

import uuid

from portico.core.db.repository import OrgScopedRepository
from portico.management.consumer.models import Consumer


class ConsumerRepository(OrgScopedRepository[Consumer]):
    model = Consumer
    sort_columns = {
        "username": Consumer.username,
        "createdAt": Consumer.created_at,
        "updatedAt": Consumer.updated_at,
    }
    filter_columns = {"username": Consumer.username}
    name_column = "username"

    async def credential_taken(
        self,
        org_id: uuid.UUID,
        plugin: str,
        field: str,
        value: str,
        *,
        except_id: uuid.UUID | None = None,
    ) -> bool:
        """Whether another consumer of the org holds ``plugins[plugin][field] == value``
        (a JSON path: ``json_extract`` on SQLite, ``#>>`` on PostgreSQL)."""
        statement = self.in_org(org_id).where(
            Consumer.plugins[(plugin, field)].as_string() == value
        )
        if except_id is not None:
            statement = statement.where(Consumer.id != except_id)
        return await self.first(statement) is not None

    async def all_in_org(self, org_id: uuid.UUID) -> list[Consumer]:
        return await self.all(self.in_org(org_id).order_by(Consumer.username, Consumer.id))
