"""A gateway connection as stored: its non-secret configuration as JSON, its secret fields
sealed together (Fernet, ``core/sealing.py``), and the outcome of its last check."""

from __future__ import annotations

import enum
import uuid
from datetime import datetime
from typing import Any

from sqlalchemy import Enum, ForeignKey, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from portico.core.db.base import Base, IdMixin, TimestampMixin
from portico.core.db.types import UTCDateTime, json_type


class ConnectionStatus(enum.StrEnum):
    #: the connector's check passed when it was last run
    CONNECTED = "connected"
    #: the last check failed (set by the work that uses the connection, e.g. an import)
    FAILING = "failing"


class GatewayConnection(IdMixin, TimestampMixin, Base):
    __tablename__ = "gateway_connections"

    name: Mapped[str] = mapped_column(String(200), unique=True)
    source: Mapped[str] = mapped_column(String(64), index=True)
    #: the connection fields that are not secret
    config: Mapped[dict[str, Any]] = mapped_column(json_type(), default=dict)
    #: the secret fields, as one JSON object sealed with the server's keys
    sealed_secrets: Mapped[str] = mapped_column(Text, default="")
    status: Mapped[ConnectionStatus] = mapped_column(
        Enum(
            ConnectionStatus,
            native_enum=False,
            length=16,
            values_callable=lambda e: [m.value for m in e],
        )
    )
    last_checked: Mapped[datetime] = mapped_column(UTCDateTime())
    created_by: Mapped[uuid.UUID | None] = mapped_column(
        ForeignKey("users.id", ondelete="SET NULL"), default=None
    )
