from __future__ import annotations

import uuid

from sqlalchemy import exists, select, update

from portico.core.db.repository import OrgScopedRepository
from portico.management.api.models import Api
from portico.management.environment.models import Deployment


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
