"""A stored secret: a name unique in its organisation and its value, encrypted."""

from __future__ import annotations

import uuid

from sqlalchemy import ForeignKey, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from portico.core.db.base import Base, IdMixin, TimestampMixin


class StoredSecret(IdMixin, TimestampMixin, Base):
    __tablename__ = "secrets"
    __table_args__ = (UniqueConstraint("org_id", "name"),)

    org_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("orgs.id", ondelete="CASCADE"), index=True)
    name: Mapped[str] = mapped_column(String(64))
    #: Fernet under a key derived from the server secret for this purpose (``service.BOX``)
    value_encrypted: Mapped[str] = mapped_column(Text)
