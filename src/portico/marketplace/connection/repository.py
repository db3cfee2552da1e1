from __future__ import annotations

import uuid
from dataclasses import dataclass

from sqlalchemy import Select, select

from portico.core.db.repository import Repository
from portico.marketplace.connection.models import ConnectionStatus, GatewayConnection


@dataclass(frozen=True)
class ConnectionFilters:
    source: str | None = None
    status: ConnectionStatus | None = None
    name: str | None = None


class GatewayConnectionRepository(Repository[GatewayConnection]):
    model = GatewayConnection
    sort_columns = {
        "name": GatewayConnection.name,
        "source": GatewayConnection.source,
        "status": GatewayConnection.status,
        "created_at": GatewayConnection.created_at,
        "last_checked": GatewayConnection.last_checked,
    }

    def matching(self, filters: ConnectionFilters) -> Select[GatewayConnection]:
        statement = select(GatewayConnection)
        if filters.source is not None:
            statement = statement.where(GatewayConnection.source == filters.source)
        if filters.status is not None:
            statement = statement.where(GatewayConnection.status == filters.status)
        if filters.name is not None:
            statement = statement.where(GatewayConnection.name == filters.name)
        return statement

    async def reread(self, connection_id: uuid.UUID) -> GatewayConnection | None:
        """The row as the store holds it now, locked until the transaction ends (PostgreSQL;
        SQLite's write transaction already excludes others): not the copy loaded before a
        wait, which a concurrent delete may have left without a row."""
        found: GatewayConnection | None = await self.session.get(
            GatewayConnection, connection_id, populate_existing=True, with_for_update=True
        )
        return found

    async def name_taken(self, name: str, *, besides: uuid.UUID | None = None) -> bool:
        statement = select(GatewayConnection).where(GatewayConnection.name == name)
        if besides is not None:
            statement = statement.where(GatewayConnection.id != besides)
        return await self.first(statement) is not None
