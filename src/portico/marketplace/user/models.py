"""What the marketplace keeps about accounts beyond ``core.account.User``: site roles and
the link to an external identity provider."""

from __future__ import annotations

import uuid
from datetime import datetime

from sqlalchemy import ForeignKey, String, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from portico.core.clock import utcnow
from portico.core.db.base import Base, IdMixin
from portico.core.db.types import UTCDateTime


class SiteRoleAssignment(Base):
    """A site role given to an account (``authenticated`` is implicit, never stored)."""

    __tablename__ = "user_site_roles"

    user_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("users.id", ondelete="CASCADE"), primary_key=True
    )
    role: Mapped[str] = mapped_column(String(64), primary_key=True)
    granted_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)


class ExternalIdentity(IdMixin, Base):
    """An account's link to its identity at an external provider (one per account)."""

    __tablename__ = "external_identities"
    __table_args__ = (UniqueConstraint("provider", "subject"),)

    user_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("users.id", ondelete="CASCADE"), unique=True
    )
    provider: Mapped[str] = mapped_column(String(64))
    subject: Mapped[str] = mapped_column(String(255))
    linked_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
