"""Roles: named sets of permissions within an organisation, and their grants: to a member
(``membership_roles``) or to a group (``group_roles``). The grant tables live here, with the
role, so that the packages of members and groups import them from below, and a role can tell
who holds it without importing either."""

from __future__ import annotations

import uuid
from typing import Any

from sqlalchemy import Boolean, Column, ForeignKey, String, Table, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from portico.core.db.base import Base, IdMixin, TimestampMixin
from portico.core.db.types import json_type


class Role(IdMixin, TimestampMixin, Base):
    __tablename__ = "roles"
    __table_args__ = (UniqueConstraint("org_id", "name"),)

    org_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("orgs.id", ondelete="CASCADE"), index=True)
    name: Mapped[str] = mapped_column(String(100))
    description: Mapped[str] = mapped_column(String(1000), default="")
    permissions: Mapped[Any] = mapped_column(json_type(), default=list)
    predefined: Mapped[bool] = mapped_column(Boolean, default=False)


membership_roles = Table(
    "membership_roles",
    Base.metadata,
    Column("membership_id", ForeignKey("memberships.id", ondelete="CASCADE"), primary_key=True),
    Column("role_id", ForeignKey("roles.id", ondelete="CASCADE"), primary_key=True),
)

group_roles = Table(
    "group_roles",
    Base.metadata,
    Column("group_id", ForeignKey("groups.id", ondelete="CASCADE"), primary_key=True),
    Column("role_id", ForeignKey("roles.id", ondelete="CASCADE"), primary_key=True),
)
