from __future__ import annotations

import uuid
from collections.abc import Sequence

from sqlalchemy import select

from portico.core.db.repository import OrgScopedRepository
from portico.management.group.models import Group, group_members
from portico.management.org.models import Membership
from portico.management.role.models import Role, group_roles, membership_roles


class GroupRepository(OrgScopedRepository[Group]):
    model = Group
    sort_columns = {"name": Group.name, "createdAt": Group.created_at}
    filter_columns = {"name": Group.name}

    async def permissions_of_membership(self, membership_id: uuid.UUID) -> frozenset[str]:
        """What a membership may do: the permissions of the roles granted to it directly and
        of the roles of its groups."""
        direct = (
            select(Role.permissions)
            .join(membership_roles, membership_roles.c.role_id == Role.id)
            .where(membership_roles.c.membership_id == membership_id)
        )
        via_groups = (
            select(Role.permissions)
            .join(group_roles, group_roles.c.role_id == Role.id)
            .join(Group, Group.id == group_roles.c.group_id)
            .join(group_members, group_members.c.group_id == Group.id)
            .where(group_members.c.membership_id == membership_id)
        )
        granted: set[str] = set()
        for permissions in await self.session.scalars(direct.union_all(via_groups)):
            granted.update(permissions or [])
        return frozenset(granted)

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
