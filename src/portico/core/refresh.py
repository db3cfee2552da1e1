"""Rotating refresh tokens, stored hashed, with reuse detection by family.

A family starts at sign-in. Each exchange marks the presented token used and issues its
successor in the same family. Presenting a token that was already used means two parties hold
it: the whole family is revoked, so the thief and the owner both have to sign in again.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import ForeignKey, String, select, update
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import Mapped, mapped_column

from portico.core.clock import Clock
from portico.core.db.base import Base, IdMixin
from portico.core.db.types import UTCDateTime
from portico.core.errors import Unauthorized
from portico.core.tokens import hash_opaque_token, new_opaque_token


class RefreshToken(IdMixin, Base):
    __tablename__ = "refresh_tokens"

    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    family_id: Mapped[uuid.UUID] = mapped_column(index=True)
    audience: Mapped[str] = mapped_column(String(32))
    subject_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("users.id", ondelete="CASCADE"), index=True
    )
    created_at: Mapped[datetime] = mapped_column(UTCDateTime())
    expires_at: Mapped[datetime] = mapped_column(UTCDateTime())
    used_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), default=None)
    revoked_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), default=None)


class RefreshTokenReused(Unauthorized):
    """The revocation of the family must survive the failed request (and so does what the
    caller records about it in the same transaction: the account and family are named for
    that, never the token)."""

    commit = True

    def __init__(self, detail: str, *, subject_id: uuid.UUID, family_id: uuid.UUID) -> None:
        super().__init__(detail)
        self.subject_id = subject_id
        self.family_id = family_id


@dataclass(frozen=True)
class IssuedRefreshToken:
    token: str
    subject_id: uuid.UUID
    family_id: uuid.UUID
    expires_at: datetime


INVALID = "invalid refresh token"


class RefreshTokenStore:
    def __init__(self, clock: Clock, *, ttl_seconds: int, audience: str) -> None:
        self._clock = clock
        self._ttl = timedelta(seconds=ttl_seconds)
        self._audience = audience

    async def issue(
        self, session: AsyncSession, *, subject_id: uuid.UUID, family_id: uuid.UUID | None = None
    ) -> IssuedRefreshToken:
        raw = new_opaque_token()
        now = self._clock.now()
        row = RefreshToken(
            token_hash=hash_opaque_token(raw),
            family_id=family_id or uuid.uuid4(),
            audience=self._audience,
            subject_id=subject_id,
            created_at=now,
            expires_at=now + self._ttl,
        )
        session.add(row)
        await session.flush()
        return IssuedRefreshToken(raw, subject_id, row.family_id, row.expires_at)

    async def rotate(self, session: AsyncSession, raw: str) -> IssuedRefreshToken:
        """Exchange ``raw`` for its successor; the same 401 for every kind of failure."""
        row = await session.scalar(
            select(RefreshToken)
            .where(RefreshToken.token_hash == hash_opaque_token(raw))
            .where(RefreshToken.audience == self._audience)
        )
        now = self._clock.now()
        if row is None or row.revoked_at is not None or row.expires_at <= now:
            raise Unauthorized(INVALID)
        if row.used_at is not None:
            await self.revoke_family(session, row.family_id)
            raise RefreshTokenReused(INVALID, subject_id=row.subject_id, family_id=row.family_id)
        # Mark used only if nobody else did in the meantime (two concurrent exchanges of the
        # same token: exactly one wins, the other is treated as reuse).
        result = await session.execute(
            update(RefreshToken)
            .where(RefreshToken.id == row.id, RefreshToken.used_at.is_(None))
            .values(used_at=now)
        )
        if getattr(result, "rowcount", 0) != 1:
            await self.revoke_family(session, row.family_id)
            raise RefreshTokenReused(INVALID, subject_id=row.subject_id, family_id=row.family_id)
        return await self.issue(session, subject_id=row.subject_id, family_id=row.family_id)

    async def revoke_family(self, session: AsyncSession, family_id: uuid.UUID) -> None:
        await session.execute(
            update(RefreshToken)
            .where(RefreshToken.family_id == family_id, RefreshToken.revoked_at.is_(None))
            .values(revoked_at=self._clock.now())
        )

    async def revoke_subject(self, session: AsyncSession, subject_id: uuid.UUID) -> None:
        await session.execute(
            update(RefreshToken)
            .where(RefreshToken.subject_id == subject_id, RefreshToken.revoked_at.is_(None))
            .values(revoked_at=self._clock.now())
        )
