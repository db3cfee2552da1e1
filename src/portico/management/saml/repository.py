"""What a SAML sign-in reads and changes in the management store: the active
configurations offered on the sign-in page, and the account, membership and groups the
assertion's mappings place."""

from __future__ import annotations

import uuid
from collections.abc import Collection

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession

from portico.management.group.models import Group, group_members
from portico.management.identity_provider.models import IdentityProvider
from portico.management.identity_provider.repository import json_array_length
from portico.management.org.models import Membership, Organization


class SamlSignInRepository:
    def __init__(self, session: AsyncSession) -> None:
        self.session = session

    async def active_configurations(
        self, limit: int
    ) -> list[tuple[IdentityProvider, Organization]]:
        """Every active configuration (one mapping or more), with its organisation, by
        organisation name then configuration name."""
        rows = await self.session.execute(
            select(IdentityProvider, Organization)
            .join(Organization, Organization.id == IdentityProvider.org_id)
            .where(json_array_length(IdentityProvider.mappings) > 0)
            .order_by(Organization.name, IdentityProvider.name, IdentityProvider.id)
            .limit(limit)
        )
        return [(idp, org) for idp, org in rows]

    async def configuration(
        self, org_id: uuid.UUID, idp_id: uuid.UUID
    ) -> tuple[IdentityProvider, Organization] | None:
        row = (
            await self.session.execute(
                select(IdentityProvider, Organization)
                .join(Organization, Organization.id == IdentityProvider.org_id)
                .where(IdentityProvider.org_id == org_id, IdentityProvider.id == idp_id)
            )
        ).first()
        return None if row is None else (row[0], row[1])

    async def membership(self, org_id: uuid.UUID, user_id: uuid.UUID) -> Membership | None:
        found: Membership | None = await self.session.scalar(
            select(Membership).where(Membership.org_id == org_id, Membership.user_id == user_id)
        )
        return found

    async def groups_named(self, org_id: uuid.UUID, names: Collection[str]) -> list[Group]:
        """The organisation's groups whose names are among ``names`` (case-insensitive)."""
        if not names:
            return []
        lowered = {name.lower() for name in names}
        return list(
            await self.session.scalars(
                select(Group)
                .where(Group.org_id == org_id, func.lower(Group.name).in_(lowered))
                .order_by(Group.name)
            )
        )

    async def groups_of(self, membership_id: uuid.UUID) -> list[Group]:
        return list(
            await self.session.scalars(
                select(Group)
                .join(group_members, group_members.c.group_id == Group.id)
                .where(group_members.c.membership_id == membership_id)
                .order_by(Group.name)
            )
        )
