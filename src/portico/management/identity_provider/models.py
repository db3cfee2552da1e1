"""Identity-provider (SAML) configurations of an organisation."""

from __future__ import annotations

import uuid
from typing import Any

from sqlalchemy import Boolean, ForeignKey, String, Text, UniqueConstraint, false
from sqlalchemy.orm import Mapped, mapped_column

from portico.core.db.base import Base, IdMixin, TimestampMixin
from portico.core.db.types import json_type


class IdentityProvider(IdMixin, TimestampMixin, Base):
    __tablename__ = "identity_providers"
    __table_args__ = (UniqueConstraint("org_id", "name"),)

    org_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("orgs.id", ondelete="CASCADE"), index=True)
    name: Mapped[str] = mapped_column(String(100))
    type: Mapped[str] = mapped_column(String(16), default="saml")
    #: where entity_id, sso_url and certificate were last read from, if they were
    metadata_url: Mapped[str | None] = mapped_column(String(2048), default=None)
    entity_id: Mapped[str] = mapped_column(String(1024))
    sso_url: Mapped[str] = mapped_column(String(2048))
    certificate: Mapped[str] = mapped_column(Text)
    mappings: Mapped[Any] = mapped_column(json_type(), default=list)
    #: a signed-in email with no account or membership in the organisation is given one
    #: (with the groups its assertion maps to) instead of being refused
    jit_provisioning: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false())

    @property
    def active(self) -> bool:
        """A configuration with no mappings cannot place anyone: it stays inactive (seed)."""
        return len(self.mappings or []) > 0
