"""Reading and locking catalogue nodes; the catalogue, content, publishing and import
services build their own queries on top."""

from __future__ import annotations

import uuid
from collections.abc import Collection

from sqlalchemy import select

from portico.core.db.repository import Repository
from portico.marketplace.node.models import Bundle, CatalogueNode


class NodeRepository(Repository[CatalogueNode]):
    model = CatalogueNode

    async def in_bundle(self, bundle: Bundle, node_id: uuid.UUID) -> CatalogueNode | None:
        return await self.first(
            select(CatalogueNode).where(CatalogueNode.id == node_id, CatalogueNode.bundle == bundle)
        )

    async def in_bundle_for_update(
        self, bundle: Bundle, node_id: uuid.UUID
    ) -> CatalogueNode | None:
        """The node, locked until the transaction ends (PostgreSQL; SQLite's writer lock is
        taken by the first write), re-read so that a concurrent change is seen."""
        return await self.first(
            select(CatalogueNode)
            .where(CatalogueNode.id == node_id, CatalogueNode.bundle == bundle)
            .with_for_update()
            .execution_options(populate_existing=True)
        )

    async def many(self, node_ids: Collection[uuid.UUID]) -> dict[uuid.UUID, CatalogueNode]:
        """Those of ``node_ids`` that exist, by id."""
        if not node_ids:
            return {}
        rows = await self.all(select(CatalogueNode).where(CatalogueNode.id.in_(list(node_ids))))
        return {row.id: row for row in rows}

    async def imported(
        self, connection_id: uuid.UUID, bundle: Bundle, remote_id: str
    ) -> CatalogueNode | None:
        """The node a remote API or product of a connection was imported as."""
        return await self.first(
            select(CatalogueNode).where(
                CatalogueNode.connection_id == connection_id,
                CatalogueNode.bundle == bundle,
                CatalogueNode.remote_id == remote_id,
            )
        )
