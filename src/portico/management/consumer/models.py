"""Consumers: who calls the APIs of an organisation, with their credentials and the plugins
that apply to them whatever the route (the consumer scope, highest precedence)."""

from __future__ import annotations

import uuid
from typing import Any

from sqlalchemy import ForeignKey, String, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from portico.core.db.base import Base, IdMixin, TimestampMixin
from portico.core.db.types import json_type
from portico.management.consumer.credentials import public_plugins


class Consumer(IdMixin, TimestampMixin, Base):
    __tablename__ = "consumers"
    __table_args__ = (UniqueConstraint("org_id", "username"),)

    org_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("orgs.id", ondelete="CASCADE"), index=True)
    username: Mapped[str] = mapped_column(String(64))
    description: Mapped[str] = mapped_column(String(256), default="")
    #: as APISIX keeps them: credentials (secrets hashed or encrypted, see credentials.py) and
    #: consumer-scope plugin configurations, by plugin name
    plugins: Mapped[dict[str, Any]] = mapped_column(json_type(), default=dict)
    #: credentials replaced by a rotation that still work for a while:
    #: [{"plugin", "credential" (stored form), "expires_at" (ISO 8601)}]
    retiring: Mapped[list[dict[str, Any]]] = mapped_column(json_type(), default=list)

    @property
    def public_plugins(self) -> dict[str, Any]:
        """``plugins`` as a client may see them: no secret, hashed or not."""
        return public_plugins(self.plugins or {})
