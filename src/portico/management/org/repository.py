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

    async def all_by_name(self) -> list[Organization]:
        return await self.all(select(Organization).order_by(Organization.name))

    async def accepted_membership_id(
        self, org_id: uuid.UUID, user_id: uuid.UUID
    ) -> uuid.UUID | None:
        """The id of the user's membership in the org, once accepted (only the id: loading
        the membership would also load its account and roles)."""
        membership_id: uuid.UUID | None = await self.session.scalar(
            select(Membership.id).where(
                Membership.org_id == org_id,
                Membership.user_id == user_id,
                Membership.accepted_at.is_not(None),
            )
        )
        return membership_id

    async def accepted_memberships(self, user_id: uuid.UUID) -> list[Membership]:
        return list(
            await self.session.scalars(
                select(Membership).where(
                    Membership.user_id == user_id, Membership.accepted_at.is_not(None)
                )
            )
        )

    async def accepted_memberships_with_orgs(
        self, user_id: uuid.UUID
    ) -> list[tuple[Membership, Organization]]:
        """The user's accepted memberships with their organisations, by organisation name."""
        rows = await self.session.execute(
            select(Membership, Organization)
            .join(Organization, Organization.id == Membership.org_id)
            .where(Membership.user_id == user_id, Membership.accepted_at.is_not(None))
            .order_by(Organization.name)
        )
        return [(membership, org) for membership, org in rows]

    async def membership(self, org_id: uuid.UUID, user_id: uuid.UUID) -> Membership | None:
        result: Membership | None = await self.session.scalar(
            select(Membership).where(Membership.org_id == org_id, Membership.user_id == user_id)
        )
        return result
