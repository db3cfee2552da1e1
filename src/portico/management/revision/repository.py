from __future__ import annotations

import uuid
from collections.abc import Iterable

from sqlalchemy import Select, exists, func, select
from sqlalchemy.ext.asyncio import AsyncSession

from portico.core.db.repository import Repository
from portico.management.api import ports as api_ports
from portico.management.api.models import Api
from portico.management.api.ports import DeploymentRow
from portico.management.environment import ports as environment_ports
from portico.management.environment.models import Deployment, Environment
from portico.management.environment.ports import DeployedApi
from portico.management.revision.models import Revision, UpstreamBinding
from portico.management.upstream import ports as upstream_ports
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

    # --- what the domains below revisions ask (their ports, provided below) ------------------

    async def revision_counts(self, api_ids: Iterable[uuid.UUID]) -> dict[uuid.UUID, int]:
        ids = list(api_ids)
        counts = {api_id: 0 for api_id in ids}
        if ids:
            rows = await self.session.execute(
                select(Revision.api_id, func.count())
                .where(Revision.api_id.in_(ids))
                .group_by(Revision.api_id)
            )
            counts.update({api_id: int(count) for api_id, count in rows})
        return counts

    async def api_deployments(
        self, api_ids: Iterable[uuid.UUID]
    ) -> dict[uuid.UUID, list[DeploymentRow]]:
        """Per API, where it is live, ordered by environment name."""
        ids = list(api_ids)
        found: dict[uuid.UUID, list[DeploymentRow]] = {api_id: [] for api_id in ids}
        if ids:
            rows = await self.session.execute(
                select(
                    Deployment.api_id,
                    Environment.id,
                    Environment.name,
                    Revision.id,
                    Revision.number,
                    Deployment.deployed_at,
                )
                .join(Environment, Environment.id == Deployment.environment_id)
                .join(Revision, Revision.id == Deployment.revision_id)
                .where(Deployment.api_id.in_(ids))
                .order_by(Environment.name, Environment.id)
            )
            for api_id, env_id, env_name, revision_id, number, deployed_at in rows:
                found[api_id].append(
                    DeploymentRow(env_id, env_name, revision_id, number, deployed_at)
                )
        return found

    async def deployed_apis(self, env_id: uuid.UUID) -> list[DeployedApi]:
        rows = await self.session.execute(
            select(Deployment, Api.name, Revision.number)
            .join(Api, Api.id == Deployment.api_id)
            .join(Revision, Revision.id == Deployment.revision_id)
            .where(Deployment.environment_id == env_id)
            .order_by(Api.name)
        )
        return [
            DeployedApi(
                api_id=d.api_id,
                api_name=name,
                revision_id=d.revision_id,
                revision_number=number,
                deployed_at=d.deployed_at,
                config_version=d.config_version,
            )
            for d, name, number in rows
        ]

    async def deployed_users(self, upstream_id: uuid.UUID) -> list[str]:
        rows = await self.session.execute(
            select(Api.name, Revision.number)
            .join(Revision, Revision.api_id == Api.id)
            .join(UpstreamBinding, UpstreamBinding.revision_id == Revision.id)
            .join(
                Deployment,
                (Deployment.revision_id == Revision.id)
                & (Deployment.environment_id == UpstreamBinding.environment_id),
            )
            .where(UpstreamBinding.upstream_id == upstream_id)
            .order_by(Api.name, Revision.number)
        )
        return [f"{name} revision {number}" for name, number in rows]


@api_ports.revision_counts.provide
async def _revision_counts(
    session: AsyncSession, api_ids: Iterable[uuid.UUID]
) -> dict[uuid.UUID, int]:
    return await RevisionRepository(session).revision_counts(api_ids)


@api_ports.deployments.provide
async def _api_deployments(
    session: AsyncSession, api_ids: Iterable[uuid.UUID]
) -> dict[uuid.UUID, list[DeploymentRow]]:
    return await RevisionRepository(session).api_deployments(api_ids)


@environment_ports.deployed_apis.provide
async def _deployed_apis(session: AsyncSession, env_id: uuid.UUID) -> list[DeployedApi]:
    return await RevisionRepository(session).deployed_apis(env_id)


@upstream_ports.deployed_users.provide
async def _deployed_users(session: AsyncSession, upstream_id: uuid.UUID) -> list[str]:
    return await RevisionRepository(session).deployed_users(upstream_id)
