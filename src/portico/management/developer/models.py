"""A developer: a person outside the organisation who owns apps."""

from __future__ import annotations

import enum
import uuid

from sqlalchemy import ForeignKey, String, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from portico.core.db.base import Base, IdMixin, TimestampMixin


class DeveloperStatus(enum.StrEnum):
    ACTIVE = "active"
    INACTIVE = "inactive"


class Developer(IdMixin, TimestampMixin, Base):
    __tablename__ = "developers"
    __table_args__ = (UniqueConstraint("org_id", "email"),)

    org_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("orgs.id", ondelete="CASCADE"), index=True)
    first_name: Mapped[str] = mapped_column(String(64))
    last_name: Mapped[str] = mapped_column(String(64))
    #: lower-cased, so that uniqueness per org ignores case
    email: Mapped[str] = mapped_column(String(254))
    status: Mapped[str] = mapped_column(String(16), default=DeveloperStatus.ACTIVE)
