"""The developer's own rows: its relationships with organisations, and the relationship an
invitation token names."""

from __future__ import annotations

import uuid

from sqlalchemy import select

from portico.core.db.repository import Repository
from portico.marketplace.organisation.models import (
    MembershipStatus,
    Organisation,
    OrganisationMembership,
)

M = OrganisationMembership


class DeveloperRepository(Repository[OrganisationMembership]):
    model = OrganisationMembership

    async def relationships(
        self, user_id: uuid.UUID
    ) -> list[tuple[OrganisationMembership, Organisation]]:
        """The account's relationships that are not rejected, with their organisations, by
        organisation name (a person is in few: no page)."""
        rows = await self.session.execute(
            select(M, Organisation)
            .join(Organisation, Organisation.id == M.organisation_id)
            .where(M.user_id == user_id, M.status != MembershipStatus.REJECTED)
            .order_by(Organisation.name, Organisation.id)
        )
        return [(membership, organisation) for membership, organisation in rows]

    async def invited(self, token_hash: str) -> OrganisationMembership | None:
        """The invited relationship whose invitation carries the token of ``token_hash``
        (unique; cleared once decided), locked so that two acceptances are serialised."""
        return await self.first(
            select(M)
            .where(M.invitation_token_hash == token_hash, M.status == MembershipStatus.INVITED)
            .with_for_update()
        )
