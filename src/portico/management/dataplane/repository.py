from __future__ import annotations

import uuid

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from portico.management.dataplane.models import DataplaneNode, DataplaneToken


class DataplaneRepository:
    """Data-plane tokens and the gateway nodes that reported in, per environment."""

    def __init__(self, session: AsyncSession) -> None:
        self.session = session

    async def tokens_of(self, env_id: uuid.UUID) -> list[DataplaneToken]:
        """By creation time."""
        return list(
            await self.session.scalars(
                select(DataplaneToken)
                .where(DataplaneToken.environment_id == env_id)
                .order_by(DataplaneToken.created_at)
            )
        )

    async def token_of(self, env_id: uuid.UUID, token_id: uuid.UUID) -> DataplaneToken | None:
        row: DataplaneToken | None = await self.session.scalar(
            select(DataplaneToken).where(
                DataplaneToken.id == token_id, DataplaneToken.environment_id == env_id
            )
        )
        return row

    async def token_by_hash(self, token_hash: str) -> DataplaneToken | None:
        row: DataplaneToken | None = await self.session.scalar(
            select(DataplaneToken).where(DataplaneToken.token_hash == token_hash)
        )
        return row

    async def node(self, env_id: uuid.UUID, node_id: str) -> DataplaneNode | None:
        row: DataplaneNode | None = await self.session.get(DataplaneNode, (env_id, node_id))
        return row

    async def nodes_of(self, env_id: uuid.UUID) -> list[DataplaneNode]:
        """By node id."""
        return list(
            await self.session.scalars(
                select(DataplaneNode)
                .where(DataplaneNode.environment_id == env_id)
                .order_by(DataplaneNode.node_id)
            )
        )
