from __future__ import annotations

import uuid
from collections.abc import Iterable
from datetime import datetime
from typing import NamedTuple

from sqlalchemy import exists, func, select, update

from portico.core.db.repository import OrgScopedRepository
from portico.management.api.models import Api
from portico.management.environment.models import Deployment, Environment
from portico.management.revision.models import Revision


class DeploymentRow(NamedTuple):
    """Where one revision of an API is live."""

    environment_id: uuid.UUID
    environment_name: str
    revision_id: uuid.UUID
    revision_number: int
    deployed_at: datetime


class ApiRepository(OrgScopedRepository[Api]):
    model = Api
    sort_columns = {
        "name": Api.name,
        "createdAt": Api.created_at,
        "updatedAt": Api.updated_at,
    }
    filter_columns = {"name": Api.name}

    async def is_deployed(self, api_id: uuid.UUID) -> bool:
        return bool(await self.session.scalar(select(exists().where(Deployment.api_id == api_id))))

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

    async def deployments(
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

    async def allocate_revision_number(self, api_id: uuid.UUID) -> int:
        """The API's next revision number, taken atomically: one UPDATE, so two concurrent
        creates never get the same number (and a number is never reused)."""
        taken = await self.session.scalar(
            update(Api)
            .where(Api.id == api_id)
            .values(next_revision_number=Api.next_revision_number + 1)
            .returning(Api.next_revision_number)
            .execution_options(synchronize_session=False)
        )
        assert taken is not None, "the API was resolved before"
        return int(taken) - 1
