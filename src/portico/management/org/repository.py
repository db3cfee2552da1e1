from __future__ import annotations

import uuid

from sqlalchemy import Select, select

from portico.core.db.repository import Repository
from portico.management.org.models import Membership, Organization


class OrganizationRepository(Repository[Organization]):
    model = Organization
    sort_columns = {"name": Organization.name, "createdAt": Organization.created_at}

    def visible_to(self, user_id: uuid.UUID, *, everything: bool) -> Select[Organization]:
        statement = select(Organization)
        if not everything:
            statement = statement.join(Membership, Membership.org_id == Organization.id).where(
                Membership.user_id == user_id
            )
        return statement

    async def by_name(self, name: str) -> Organization | None:
        return await self.first(select(Organization).where(Organization.name == name))

    async def membership(self, org_id: uuid.UUID, user_id: uuid.UUID) -> Membership | None:
        result: Membership | None = await self.session.scalar(
            select(Membership).where(Membership.org_id == org_id, Membership.user_id == user_id)
        )
        return result
