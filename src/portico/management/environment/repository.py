from __future__ import annotations

import uuid

from sqlalchemy import Select, select

from portico.core.db.repository import Repository
from portico.management.environment.models import Environment, GatewayHost


class EnvironmentRepository(Repository[Environment]):
    model = Environment
    sort_columns = {
        "name": Environment.name,
        "createdAt": Environment.created_at,
        "updatedAt": Environment.updated_at,
    }

    def in_org(self, org_id: uuid.UUID) -> Select[Environment]:
        return select(Environment).where(Environment.org_id == org_id)

    async def get_in_org(self, org_id: uuid.UUID, env_id: uuid.UUID) -> Environment | None:
        return await self.first(self.in_org(org_id).where(Environment.id == env_id))

    async def name_taken(
        self, org_id: uuid.UUID, name: str, *, except_id: uuid.UUID | None = None
    ) -> bool:
        statement = self.in_org(org_id).where(Environment.name == name)
        if except_id is not None:
            statement = statement.where(Environment.id != except_id)
        return await self.first(statement) is not None

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
