"""A portal organisation (a group of developers, with the web domains of its portal) and its
teams. A fresh installation has one: the portal owner's (migration 0015)."""

from __future__ import annotations

import uuid
from typing import Any

from sqlalchemy import ForeignKey, String, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from portico.core.db.base import Base, IdMixin, TimestampMixin
from portico.core.db.types import json_type

#: the name of the organisation every installation starts with
PORTAL_OWNER = "Portal owner"


class Organisation(IdMixin, TimestampMixin, Base):
    __tablename__ = "portal_organisations"

    name: Mapped[str] = mapped_column(String(200), unique=True)
    #: the host names its portal answers on (syndication targets), e.g. ["dev.example.com"]
    domains: Mapped[list[Any]] = mapped_column(json_type(), default=list)


class Team(IdMixin, TimestampMixin, Base):
    __tablename__ = "portal_teams"
    __table_args__ = (UniqueConstraint("organisation_id", "name"),)

    organisation_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("portal_organisations.id", ondelete="CASCADE"), index=True
    )
    name: Mapped[str] = mapped_column(String(200))
