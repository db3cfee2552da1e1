from __future__ import annotations

import uuid
from collections.abc import Iterable

from sqlalchemy import Select, exists, select

from portico.core.db.repository import Repository
from portico.management.environment.models import Deployment, Environment
from portico.management.revision.models import Revision
from portico.management.upstream.models import Upstream


class RevisionRepository(Repository[Revision]):
    model = Revision
    sort_columns = {"number": Revision.number, "createdAt": Revision.created_at}

    def of_api(self, org_id: uuid.UUID, api_id: uuid.UUID) -> Select[Revision]:
        return select(Revision).where(Revision.org_id == org_id, Revision.api_id == api_id)

    def with_status(self, statement: Select[Revision], active: bool) -> Select[Revision]:
        deployed = exists().where(Deployment.revision_id == Revision.id)
        return statement.where(deployed if active else ~deployed)

    async def get_of_api(
        self,
        org_id: uuid.UUID,
        api_id: uuid.UUID,
        revision_id: uuid.UUID,
        *,
        for_update: bool = False,
    ) -> Revision | None:
        statement = self.of_api(org_id, api_id).where(Revision.id == revision_id)
        if for_update:
            # a change and a deploy of the same revision serialise on its row (PostgreSQL;
            # SQLite has one writer anyway), so "not deployed" stays true until the commit
            statement = statement.with_for_update()
        return await self.first(statement)

    async def deployed_to(self, revision_id: uuid.UUID) -> dict[uuid.UUID, str]:
        """Environment id → name, for each environment the revision is live in."""
        rows = await self.session.execute(
            select(Environment.id, Environment.name)
            .join(Deployment, Deployment.environment_id == Environment.id)
            .where(Deployment.revision_id == revision_id)
        )
        return {env_id: name for env_id, name in rows}

    async def deployed_to_many(
        self, revision_ids: Iterable[uuid.UUID]
    ) -> dict[uuid.UUID, list[uuid.UUID]]:
        ids = list(revision_ids)
        found: dict[uuid.UUID, list[uuid.UUID]] = {rid: [] for rid in ids}
        if ids:
            rows = await self.session.execute(
                select(Deployment.revision_id, Deployment.environment_id).where(
                    Deployment.revision_id.in_(ids)
                )
            )
            for revision_id, env_id in rows:
                found[revision_id].append(env_id)
        return found

    async def environments(
        self, org_id: uuid.UUID, env_ids: Iterable[uuid.UUID]
    ) -> dict[uuid.UUID, str]:
        """Which of ``env_ids`` are environments of the org: id → name."""
        rows = await self.session.execute(
            select(Environment.id, Environment.name).where(
                Environment.org_id == org_id, Environment.id.in_(list(env_ids))
            )
        )
        return {env_id: name for env_id, name in rows}

    async def upstream_environments(
        self, org_id: uuid.UUID, upstream_ids: Iterable[uuid.UUID]
    ) -> dict[uuid.UUID, uuid.UUID]:
        """Which of ``upstream_ids`` are upstreams of the org: id → its environment."""
        rows = await self.session.execute(
            select(Upstream.id, Upstream.environment_id).where(
                Upstream.org_id == org_id, Upstream.id.in_(list(upstream_ids))
            )
        )
        return {upstream_id: env_id for upstream_id, env_id in rows}
