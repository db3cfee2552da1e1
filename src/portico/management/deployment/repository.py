from __future__ import annotations

import uuid

from sqlalchemy import select

from portico.core.db.repository import Repository
from portico.management.api.models import Api
from portico.management.environment.models import Deployment, Environment
from portico.management.revision.models import Revision, UpstreamBinding
from portico.management.upstream.models import Upstream


class DeploymentRepository(Repository[Deployment]):
    """What the deploy operations and the snapshot builder read of deployments."""

    model = Deployment

    async def revision_for_update(
        self, api_id: uuid.UUID, revision_id: uuid.UUID
    ) -> Revision | None:
        """The API's revision, locked (PostgreSQL) like the revision edits lock it: an edit
        cannot slip in between "this revision is valid" and the deploy's commit."""
        revision: Revision | None = await self.session.scalar(
            select(Revision)
            .where(Revision.id == revision_id, Revision.api_id == api_id)
            .with_for_update()
        )
        return revision

    async def of_api_in(self, api_id: uuid.UUID, env_id: uuid.UUID) -> Deployment | None:
        deployment: Deployment | None = await self.session.scalar(
            select(Deployment).where(
                Deployment.api_id == api_id, Deployment.environment_id == env_id
            )
        )
        return deployment

    async def of_revision_in(self, revision_id: uuid.UUID, env_id: uuid.UUID) -> Deployment | None:
        deployment: Deployment | None = await self.session.scalar(
            select(Deployment).where(
                Deployment.revision_id == revision_id, Deployment.environment_id == env_id
            )
        )
        return deployment

    async def of_api(self, api_id: uuid.UUID) -> list[tuple[Deployment, Revision, Environment]]:
        """Where the API is live, by environment name."""
        rows = await self.session.execute(
            select(Deployment, Revision, Environment)
            .join(Revision, Revision.id == Deployment.revision_id)
            .join(Environment, Environment.id == Deployment.environment_id)
            .where(Deployment.api_id == api_id)
            .order_by(Environment.name)
        )
        return [(d, r, e) for d, r, e in rows]

    async def in_environment(self, env_id: uuid.UUID) -> list[tuple[Deployment, Revision, Api]]:
        """What is deployed in the environment, by API name (then id)."""
        rows = await self.session.execute(
            select(Deployment, Revision, Api)
            .join(Revision, Revision.id == Deployment.revision_id)
            .join(Api, Api.id == Deployment.api_id)
            .where(Deployment.environment_id == env_id)
            .order_by(Api.name, Api.id)
        )
        return [(d, r, a) for d, r, a in rows]

    async def bound_upstreams(self, env_id: uuid.UUID) -> list[Upstream]:
        """The upstreams that the revisions deployed in the environment are bound to there."""
        return list(
            await self.session.scalars(
                select(Upstream).where(
                    Upstream.id.in_(
                        select(UpstreamBinding.upstream_id)
                        .join(Deployment, Deployment.revision_id == UpstreamBinding.revision_id)
                        .where(
                            Deployment.environment_id == env_id,
                            UpstreamBinding.environment_id == env_id,
                        )
                    )
                )
            )
        )
