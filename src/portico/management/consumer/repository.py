from __future__ import annotations

import uuid

from sqlalchemy import Select, select

from portico.core.db.repository import Repository
from portico.management.consumer.models import Consumer


class ConsumerRepository(Repository[Consumer]):
    model = Consumer
    sort_columns = {
        "username": Consumer.username,
        "createdAt": Consumer.created_at,
        "updatedAt": Consumer.updated_at,
    }

    def in_org(self, org_id: uuid.UUID) -> Select[Consumer]:
        return select(Consumer).where(Consumer.org_id == org_id)

    async def get_in_org(self, org_id: uuid.UUID, consumer_id: uuid.UUID) -> Consumer | None:
        return await self.first(self.in_org(org_id).where(Consumer.id == consumer_id))

    async def username_taken(
        self, org_id: uuid.UUID, username: str, *, except_id: uuid.UUID | None = None
    ) -> bool:
        statement = self.in_org(org_id).where(Consumer.username == username)
        if except_id is not None:
            statement = statement.where(Consumer.id != except_id)
        return await self.first(statement) is not None

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
