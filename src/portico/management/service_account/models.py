"""Service accounts: machine identities of an organisation (the marketplace's connector, CI),
each with one long-lived bearer token (only its SHA-256 is stored) and roles of the org."""

from __future__ import annotations

import uuid
from datetime import datetime

from sqlalchemy import Column, ForeignKey, String, Table, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column, relationship

from portico.core.db.base import Base, IdMixin, TimestampMixin
from portico.core.db.types import UTCDateTime
from portico.management.role.models import Role

service_account_roles = Table(
    "service_account_roles",
    Base.metadata,
    Column(
        "service_account_id",
        ForeignKey("service_accounts.id", ondelete="CASCADE"),
        primary_key=True,
    ),
    Column("role_id", ForeignKey("roles.id", ondelete="CASCADE"), primary_key=True),
)


class ServiceAccount(IdMixin, TimestampMixin, Base):
    __tablename__ = "service_accounts"
    __table_args__ = (UniqueConstraint("org_id", "name"),)

    org_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("orgs.id", ondelete="CASCADE"), index=True)
    name: Mapped[str] = mapped_column(String(100))
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    expires_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), default=None)
    last_used_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), default=None)
    created_by: Mapped[uuid.UUID | None] = mapped_column(
        ForeignKey("users.id", ondelete="SET NULL"), default=None
    )
    roles: Mapped[list[Role]] = relationship(secondary=service_account_roles, lazy="selectin")
