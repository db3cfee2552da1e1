from __future__ import annotations

import uuid
from collections.abc import Sequence

from sqlalchemy import select

from portico.core.db.repository import OrgScopedRepository
from portico.management.group.models import Group
from portico.management.org.models import Membership


class GroupRepository(OrgScopedRepository[Group]):
    model = Group
    sort_columns = {"name": Group.name, "createdAt": Group.created_at}
    filter_columns = {"name": Group.name}

    async def memberships(
        self, org_id: uuid.UUID, user_ids: Sequence[uuid.UUID]
    ) -> list[Membership]:
        """The memberships in ``org_id`` of those of ``user_ids`` that have one."""
        if not user_ids:
            return []
        return list(
            await self.session.scalars(
                select(Membership).where(
                    Membership.org_id == org_id, Membership.user_id.in_(user_ids)
                )
            )
        )
