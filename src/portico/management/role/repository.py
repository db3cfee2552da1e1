from __future__ import annotations

import uuid

from sqlalchemy import ColumnElement, func, select

from portico.core.db.repository import OrgScopedRepository
from portico.core.pagination import ListQuery
from portico.management.role.models import Role, group_roles, membership_roles


class RoleRepository(OrgScopedRepository[Role]):
    model = Role
    sort_columns = {"name": Role.name, "createdAt": Role.created_at}
    filter_columns = {"name": Role.name}

    def conditions(self, query: ListQuery) -> list[ColumnElement[bool]]:
        conditions = super().conditions(query)
        predefined = query.boolean("predefined")
        if predefined is not None:
            conditions.append(Role.predefined.is_(predefined))
        return conditions

    async def by_name(self, org_id: uuid.UUID, name: str) -> Role | None:
        return await self.first(self.in_org(org_id).where(Role.name == name))

    async def holders(self, role_id: uuid.UUID) -> tuple[int, int]:
        """How many memberships and groups are granted the role (for the delete's audit)."""
        members = await self.session.scalar(
            select(func.count()).where(membership_roles.c.role_id == role_id)
        )
        groups = await self.session.scalar(
            select(func.count()).where(group_roles.c.role_id == role_id)
        )
        return int(members or 0), int(groups or 0)
