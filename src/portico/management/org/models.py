"""Organisations and memberships: the tenancy boundary of the management service."""

from __future__ import annotations

import uuid
from datetime import datetime

from sqlalchemy import ForeignKey, String, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column, relationship

from portico.core.account import User
from portico.core.db.base import Base, IdMixin, TimestampMixin
from portico.core.db.types import UTCDateTime
from portico.management.role.models import Role, membership_roles


class Organization(IdMixin, TimestampMixin, Base):
    __tablename__ = "orgs"

    name: Mapped[str] = mapped_column(String(100), unique=True)
    description: Mapped[str] = mapped_column(String(1000), default="")


class Membership(IdMixin, TimestampMixin, Base):
    """A user's place in an organisation, with the roles granted to them directly."""

    __tablename__ = "memberships"
    __table_args__ = (UniqueConstraint("org_id", "user_id"),)

    org_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("orgs.id", ondelete="CASCADE"), index=True)
    user_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("users.id", ondelete="CASCADE"), index=True
    )
    #: None while the invitation that created the membership is not accepted: until then the
    #: membership grants nothing (the inviter, who saw the token, cannot act as the invitee).
    accepted_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), default=None)
    user: Mapped[User] = relationship(lazy="joined")
    roles: Mapped[list[Role]] = relationship(secondary=membership_roles, lazy="selectin")
