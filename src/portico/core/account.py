"""User accounts: the identity shared by both REST surfaces.

An account is a person who signs in (email + password, or later an identity provider).
What an account may do is decided elsewhere: organisation memberships and roles on the
management service, site roles on the marketplace. The bootstrap administrator is one
account that both surfaces recognise.
"""

from __future__ import annotations

import enum
import uuid
from datetime import datetime

from sqlalchemy import Boolean, Enum, String, Text, func, select
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import Mapped, mapped_column

from portico.core.db.base import Base, IdMixin, TimestampMixin
from portico.core.db.types import UTCDateTime

EMAIL_MAX_LENGTH = 254


def _values(enum_class: type[enum.Enum]) -> list[str]:
    return [str(member.value) for member in enum_class]


class AccountStatus(enum.StrEnum):
    INVITED = "invited"  # created by an invitation, no password yet
    PENDING = "pending"  # registered on the portal, awaiting approval
    ACTIVE = "active"
    BLOCKED = "blocked"
    REJECTED = "rejected"


class User(IdMixin, TimestampMixin, Base):
    __tablename__ = "users"

    email: Mapped[str] = mapped_column(String(EMAIL_MAX_LENGTH), unique=True)
    display_name: Mapped[str] = mapped_column(String(200), default="")
    password_hash: Mapped[str | None] = mapped_column(String(255), default=None)
    status: Mapped[AccountStatus] = mapped_column(
        Enum(AccountStatus, native_enum=False, length=16, values_callable=_values),
        default=AccountStatus.ACTIVE,
    )
    is_platform_admin: Mapped[bool] = mapped_column(Boolean, default=False)
    last_login_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), default=None)
    #: why the account was rejected or blocked, as the administrator wrote it
    status_reason: Mapped[str | None] = mapped_column(Text, default=None)
    status_changed_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), default=None)

    @property
    def can_sign_in(self) -> bool:
        """Whether the account may sign in and keep its session. A password sign-in also
        needs a password (``verify_password`` fails without one); an account made by a SAML
        sign-in (just-in-time provisioning) has none and signs in through its identity
        provider."""
        return self.status is AccountStatus.ACTIVE


def normalise_email(email: str) -> str:
    """Emails compare case-insensitively; the stored form is lower case."""
    return email.strip().lower()


async def find_by_id(session: AsyncSession, user_id: uuid.UUID) -> User | None:
    user: User | None = await session.get(User, user_id)
    return user


async def find_by_email(session: AsyncSession, email: str) -> User | None:
    return await session.scalar(
        select(User).where(func.lower(User.email) == normalise_email(email))
    )
