"""What signing in, the caller's own view and accepting an invitation read."""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from portico.management.user.models import Invitation


class InvitationRepository:
    def __init__(self, session: AsyncSession) -> None:
        self.session = session

    async def by_token_hash(self, token_hash: str) -> Invitation | None:
        invitation: Invitation | None = await self.session.scalar(
            select(Invitation).where(Invitation.token_hash == token_hash)
        )
        return invitation
