from __future__ import annotations

import uuid
from collections.abc import Iterable
from typing import Any

from sqlalchemy import delete, exists, func, select

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

    async def latest_config(self, env_id: uuid.UUID) -> EnvironmentConfig | None:
        config: EnvironmentConfig | None = await self.session.scalar(
            select(EnvironmentConfig)
            .where(EnvironmentConfig.environment_id == env_id)
            .order_by(EnvironmentConfig.version.desc())
            .limit(1)
        )
        return config

    async def latest_versions(self) -> dict[uuid.UUID, int]:
        """Every environment's latest config version (environments without one left out)."""
        rows = await self.session.execute(
            select(EnvironmentConfig.environment_id, func.max(EnvironmentConfig.version)).group_by(
                EnvironmentConfig.environment_id
            )
        )
        return {env_id: int(version) for env_id, version in rows}

    async def config_document(self, env_id: uuid.UUID, version: int) -> Any:
        """The stored snapshot of that version, or None (pruned, or never made)."""
        return await self.session.scalar(
            select(EnvironmentConfig.config).where(
                EnvironmentConfig.environment_id == env_id,
                EnvironmentConfig.version == version,
            )
        )

    async def by_name(self, org_id: uuid.UUID, name: str) -> Environment | None:
        return await self.first(self.in_org(org_id).where(Environment.name == name))

    async def host_free(self, host: str) -> bool:
        return await self.session.get(GatewayHost, host) is None

    async def prune_configs(self, env_id: uuid.UUID, *, up_to: int) -> None:
        """Delete the environment's configs numbered ``up_to`` or lower."""
        await self.session.execute(
            delete(EnvironmentConfig).where(
                EnvironmentConfig.environment_id == env_id,
                EnvironmentConfig.version <= up_to,
            )
        )

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
