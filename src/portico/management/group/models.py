"""Groups: sets of organisation members; roles granted to a group apply to its members."""

from __future__ import annotations

import uuid

from sqlalchemy import Column, ForeignKey, String, Table, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column, relationship

from portico.core.db.base import Base, IdMixin, TimestampMixin
from portico.management.org.models import Membership
from portico.management.role.models import Role, group_roles

group_members = Table(
    "group_members",
    Base.metadata,
    Column("group_id", ForeignKey("groups.id", ondelete="CASCADE"), primary_key=True),
    Column("membership_id", ForeignKey("memberships.id", ondelete="CASCADE"), primary_key=True),
)


class Group(IdMixin, TimestampMixin, Base):
    __tablename__ = "groups"
    __table_args__ = (UniqueConstraint("org_id", "name"),)

    org_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("orgs.id", ondelete="CASCADE"), index=True)
    name: Mapped[str] = mapped_column(String(100))
    description: Mapped[str] = mapped_column(String(1000), default="")
    roles: Mapped[list[Role]] = relationship(secondary=group_roles, lazy="selectin")
    members: Mapped[list[Membership]] = relationship(secondary=group_members, lazy="selectin")
