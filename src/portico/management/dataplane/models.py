"""Data-plane tokens: how a standalone gateway node authenticates to the control plane."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from sqlalchemy import ForeignKey, String
from sqlalchemy.orm import Mapped, mapped_column

from portico.core.db.base import Base, IdMixin, TimestampMixin
from portico.core.db.types import UTCDateTime, json_type


class DataplaneToken(IdMixin, TimestampMixin, Base):
    """Shown once at creation; only its SHA-256 is stored. Valid for one environment."""

    __tablename__ = "dataplane_tokens"

    org_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("orgs.id", ondelete="CASCADE"), index=True)
    environment_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("environments.id", ondelete="CASCADE"), index=True
    )
    name: Mapped[str] = mapped_column(String(100))
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    last_used_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), default=None)
    revoked_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), default=None)


class DataplaneNode(Base):
    """A gateway node as its last heartbeat described it."""

    __tablename__ = "dataplane_nodes"

    environment_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("environments.id", ondelete="CASCADE"), primary_key=True
    )
    node_id: Mapped[str] = mapped_column(String(128), primary_key=True)
    config_version: Mapped[int] = mapped_column(default=0)
    address: Mapped[str | None] = mapped_column(String(64), default=None)
    #: upstream id → what the node's discovery found for it (``DiscoveryReport``, as JSON)
    discovery: Mapped[dict[str, Any]] = mapped_column(json_type(), default=dict)
    first_seen_at: Mapped[datetime] = mapped_column(UTCDateTime())
    last_seen_at: Mapped[datetime] = mapped_column(UTCDateTime())
    #: the heartbeat's ``upstreamHealth`` as last sent (snake_case keys); None: not reported
    upstream_health: Mapped[Any] = mapped_column(json_type(), default=None, nullable=True)
