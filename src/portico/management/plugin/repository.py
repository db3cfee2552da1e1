from __future__ import annotations

import uuid

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from portico.management.plugin.models import GlobalPlugin


class GlobalPluginRepository:
    """An environment's global plugins, keyed by (environment, plugin name)."""

    def __init__(self, session: AsyncSession) -> None:
        self.session = session

    async def of_environment(self, env_id: uuid.UUID) -> list[GlobalPlugin]:
        """By plugin name."""
        return list(
            await self.session.scalars(
                select(GlobalPlugin)
                .where(GlobalPlugin.environment_id == env_id)
                .order_by(GlobalPlugin.name)
            )
        )

    async def get(self, env_id: uuid.UUID, name: str) -> GlobalPlugin | None:
        row: GlobalPlugin | None = await self.session.get(GlobalPlugin, (env_id, name))
        return row
