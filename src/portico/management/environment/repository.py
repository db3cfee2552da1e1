from __future__ import annotations

import uuid

from sqlalchemy import select

from portico.core.db.repository import OrgScopedRepository
from portico.management.environment.models import Environment, GatewayHost


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
