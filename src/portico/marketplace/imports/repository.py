"""The queries of imports: which remote ids of a connection were imported as which nodes,
the nodes imported from a connection, and a connection's status (a product's APIs: the
node repository's)."""

from __future__ import annotations

import uuid
from collections.abc import Collection
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import Select, select, update

from portico.marketplace.connection.models import ConnectionStatus, GatewayConnection
from portico.marketplace.node.models import (
    Bundle,
    CatalogueNode,
    ModerationState,
    Visibility,
)
from portico.marketplace.node.repository import NodeRepository


@dataclass(frozen=True)
class ImportedFilters:
    moderation_state: ModerationState | None = None
    visibility: Visibility | None = None
    published: bool | None = None
    remote_id: str | None = None


class ImportRepository(NodeRepository):
    model = CatalogueNode
    sort_columns = {
        "title": CatalogueNode.title,
        "created_at": CatalogueNode.created_at,
        "updated_at": CatalogueNode.updated_at,
        "remote_id": CatalogueNode.remote_id,
    }

    async def node_ids(
        self, connection_id: uuid.UUID, bundle: Bundle, remote_ids: Collection[str] | None = None
    ) -> dict[str, uuid.UUID]:
        """remote id → node id of what was imported from the connection (only ``remote_ids``
        when given)."""
        statement = select(CatalogueNode.remote_id, CatalogueNode.id).where(
            CatalogueNode.connection_id == connection_id, CatalogueNode.bundle == bundle
        )
        if remote_ids is not None:
            if not remote_ids:
                return {}
            statement = statement.where(CatalogueNode.remote_id.in_(list(remote_ids)))
        rows = await self.session.execute(statement)
        return {remote_id: node_id for remote_id, node_id in rows if remote_id is not None}

    async def nodes(
        self, connection_id: uuid.UUID, bundle: Bundle, remote_ids: Collection[str]
    ) -> dict[str, CatalogueNode]:
        """remote id → node of those of ``remote_ids`` imported from the connection."""
        if not remote_ids:
            return {}
        rows = await self.all(
            select(CatalogueNode).where(
                CatalogueNode.connection_id == connection_id,
                CatalogueNode.bundle == bundle,
                CatalogueNode.remote_id.in_(list(remote_ids)),
            )
        )
        return {row.remote_id: row for row in rows if row.remote_id is not None}

    def imported_from(
        self, connection_id: uuid.UUID, bundle: Bundle, filters: ImportedFilters
    ) -> Select[CatalogueNode]:
        statement = select(CatalogueNode).where(
            CatalogueNode.connection_id == connection_id, CatalogueNode.bundle == bundle
        )
        if filters.moderation_state is not None:
            statement = statement.where(CatalogueNode.moderation_state == filters.moderation_state)
        if filters.visibility is not None:
            statement = statement.where(CatalogueNode.visibility == filters.visibility)
        if filters.published is not None:
            statement = statement.where(CatalogueNode.published == filters.published)
        if filters.remote_id is not None:
            statement = statement.where(CatalogueNode.remote_id == filters.remote_id)
        return statement

    async def set_connection_status(
        self, connection_id: uuid.UUID, status: ConnectionStatus, now: datetime
    ) -> None:
        """Record how the connection's remote side last answered. ``updated_at`` is kept as it
        is: it says when the connection was last replaced (the inventory's cache key)."""
        await self.session.execute(
            update(GatewayConnection)
            .where(GatewayConnection.id == connection_id)
            .values(status=status, last_checked=now, updated_at=GatewayConnection.updated_at)
        )
