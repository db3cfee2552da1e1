from __future__ import annotations

import uuid
from collections.abc import Sequence

from sqlalchemy import Select, select

from portico.core.db.repository import Repository
from portico.management.group.models import Group
from portico.management.org.models import Membership


class GroupRepository(Repository[Group]):
    model = Group
    sort_columns = {"name": Group.name, "createdAt": Group.created_at}

    def in_org(self, org_id: uuid.UUID) -> Select[Group]:
        return select(Group).where(Group.org_id == org_id)

    async def get_in_org(self, org_id: uuid.UUID, group_id: uuid.UUID) -> Group | None:
        return await self.first(self.in_org(org_id).where(Group.id == group_id))

    async def name_taken(
        self, org_id: uuid.UUID, name: str, *, except_id: uuid.UUID | None = None
    ) -> bool:
        statement = self.in_org(org_id).where(Group.name == name)
        if except_id is not None:
            statement = statement.where(Group.id != except_id)
        return await self.first(statement) is not None

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
