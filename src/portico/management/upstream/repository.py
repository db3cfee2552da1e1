from __future__ import annotations

import uuid

from sqlalchemy import Select, exists, select
from sqlalchemy.ext.asyncio import AsyncSession

from portico.core.db.repository import Repository
from portico.management.environment import ports as environment_ports
from portico.management.upstream.models import Upstream


class UpstreamRepository(Repository[Upstream]):
    model = Upstream
    sort_columns = {
        "name": Upstream.name,
        "createdAt": Upstream.created_at,
        "updatedAt": Upstream.updated_at,
    }

    def in_environment(
        self, org_id: uuid.UUID, env_id: uuid.UUID, *, name: str | None = None
    ) -> Select[Upstream]:
        # org_id too: an environment id never crosses organisations, but the query says so
        statement = select(Upstream).where(
            Upstream.org_id == org_id, Upstream.environment_id == env_id
        )
        if name is not None:
            statement = statement.where(Upstream.name == name)
        return statement

    async def get_in_environment(
        self, org_id: uuid.UUID, env_id: uuid.UUID, upstream_id: uuid.UUID
    ) -> Upstream | None:
        return await self.first(
            self.in_environment(org_id, env_id).where(Upstream.id == upstream_id)
        )

    async def name_taken(
        self,
        org_id: uuid.UUID,
        env_id: uuid.UUID,
        name: str,
        *,
        except_id: uuid.UUID | None = None,
    ) -> bool:
        statement = self.in_environment(org_id, env_id, name=name)
        if except_id is not None:
            statement = statement.where(Upstream.id != except_id)
        return await self.first(statement) is not None

    async def any_in_environment(self, env_id: uuid.UUID) -> bool:
        return bool(
            await self.session.scalar(select(exists().where(Upstream.environment_id == env_id)))
        )


@environment_ports.has_upstreams.provide
async def _has_upstreams(session: AsyncSession, env_id: uuid.UUID) -> bool:
    return await UpstreamRepository(session).any_in_environment(env_id)
