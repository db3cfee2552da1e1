from __future__ import annotations

import uuid
from collections.abc import Sequence

from sqlalchemy import Select, func, select

from portico.core.db.repository import Repository
from portico.management.group.models import group_roles
from portico.management.org.models import membership_roles
from portico.management.role.models import Role


class RoleRepository(Repository[Role]):
    model = Role
    sort_columns = {"name": Role.name, "createdAt": Role.created_at}

    def in_org(self, org_id: uuid.UUID) -> Select[Role]:
        return select(Role).where(Role.org_id == org_id)

    async def get_in_org(self, org_id: uuid.UUID, role_id: uuid.UUID) -> Role | None:
        return await self.first(self.in_org(org_id).where(Role.id == role_id))

    async def many_in_org(self, org_id: uuid.UUID, role_ids: Sequence[uuid.UUID]) -> list[Role]:
        if not role_ids:
            return []
        return await self.all(self.in_org(org_id).where(Role.id.in_(role_ids)))

    async def name_taken(
        self, org_id: uuid.UUID, name: str, *, except_id: uuid.UUID | None = None
    ) -> bool:
        statement = self.in_org(org_id).where(Role.name == name)
        if except_id is not None:
            statement = statement.where(Role.id != except_id)
        return await self.first(statement) is not None

    async def holders(self, role_id: uuid.UUID) -> tuple[int, int]:
        """How many memberships and groups are granted the role (for the delete's audit)."""
        members = await self.session.scalar(
            select(func.count()).where(membership_roles.c.role_id == role_id)
        )
        groups = await self.session.scalar(
            select(func.count()).where(group_roles.c.role_id == role_id)
        )
        return int(members or 0), int(groups or 0)
