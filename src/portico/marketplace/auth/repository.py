from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from portico.marketplace.auth.models import IdpSigningKey, SiteSetting


class SigningKeyRepository:
    """The ID tokens' signing keys (private halves encrypted under the server secret)."""

    def __init__(self, session: AsyncSession) -> None:
        self.session = session

    async def all_by_age(self) -> list[IdpSigningKey]:
        """Every key, oldest first (retired ones included)."""
        return list(
            await self.session.scalars(select(IdpSigningKey).order_by(IdpSigningKey.created_at))
        )


class SiteSettingRepository:
    def __init__(self, session: AsyncSession) -> None:
        self.session = session

    async def is_stored(self, key: str) -> bool:
        stored = await self.session.scalar(select(SiteSetting.key).where(SiteSetting.key == key))
        return stored is not None

    async def get(self, key: str) -> SiteSetting | None:
        row: SiteSetting | None = await self.session.get(SiteSetting, key)
        return row
