"""APIs (the seed's "services")."""

from __future__ import annotations

import uuid
from typing import Any

from sqlalchemy import ForeignKey, String, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from portico.core.db.base import Base, IdMixin, TimestampMixin
from portico.core.db.types import json_type


class Api(IdMixin, TimestampMixin, Base):
    __tablename__ = "apis"
    __table_args__ = (UniqueConstraint("org_id", "name"),)

    org_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("orgs.id", ondelete="CASCADE"), index=True)
    name: Mapped[str] = mapped_column(String(100))
    description: Mapped[str] = mapped_column(String(256), default="")
    #: numbers are never reused, even after a revision is deleted
    next_revision_number: Mapped[int] = mapped_column(default=1)
    #: the OpenAPI document it was imported from, as a JSON object (None if not imported)
    spec_document: Mapped[Any] = mapped_column(json_type(), nullable=True, default=None)
