from __future__ import annotations

import uuid
from collections.abc import Iterable

from sqlalchemy import exists, func, select

from portico.core.db.repository import OrgScopedRepository
from portico.management.environment.models import (
    Deployment,
    Environment,
    EnvironmentConfig,
    GatewayHost,
)


class EnvironmentRepository(OrgScopedRepository[Environment]):
    model = Environment
    sort_columns = {
        "name": Environment.name,
        "createdAt": Environment.created_at,
        "updatedAt": Environment.updated_at,
    }
    filter_columns = {"name": Environment.name}

    async def hosts_taken(
        self, hosts: list[str], *, except_env: uuid.UUID | None = None
    ) -> list[str]:
        """Which of ``hosts`` another environment (of any organisation) already serves."""
        if not hosts:
            return []
        statement = select(GatewayHost.host).where(GatewayHost.host.in_(hosts))
        if except_env is not None:
            statement = statement.where(GatewayHost.environment_id != except_env)
        return sorted(await self.session.scalars(statement))

    async def has_deployments(self, env_id: uuid.UUID) -> bool:
        return bool(
            await self.session.scalar(select(exists().where(Deployment.environment_id == env_id)))
        )

    async def lock(self, env_id: uuid.UUID) -> None:
        """Serialise changes of one environment's config. PostgreSQL: a row lock held until
        the transaction ends. SQLite: every transaction already holds the write lock (BEGIN
        IMMEDIATE)."""
        bind = self.session.bind
        if bind is not None and bind.dialect.name == "postgresql":
            await self.session.execute(
                select(Environment.id).where(Environment.id == env_id).with_for_update()
            )

    async def latest_version(self, env_id: uuid.UUID) -> int:
        """The number of the environment's latest config (0 before the first)."""
        version = await self.session.scalar(
            select(func.max(EnvironmentConfig.version)).where(
                EnvironmentConfig.environment_id == env_id
            )
        )
        return int(version or 0)

    async def by_ids(self, env_ids: Iterable[uuid.UUID]) -> list[Environment]:
        """The environments, in id order (the order every publisher locks them in)."""
        wanted = list(env_ids)
        if not wanted:
            return []
        return await self.all(
            select(Environment).where(Environment.id.in_(wanted)).order_by(Environment.id)
        )

    async def all_in_org_by_id(self, org_id: uuid.UUID) -> list[Environment]:
        """Every environment of the org, in id order (the order publishers lock them in)."""
        return await self.all(self.in_org(org_id).order_by(Environment.id))
