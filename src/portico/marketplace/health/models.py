"""One health check of an API as stored: what was called, what came back, how long it took,
and the status read from it."""

from __future__ import annotations

import enum
import uuid
from datetime import datetime

from sqlalchemy import Enum, Float, ForeignKey, Index, Integer, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from portico.core.db.base import Base, IdMixin
from portico.core.db.types import UTCDateTime


class HealthStatus(enum.StrEnum):
    #: answered 2xx in time (and its body, when it says, says so)
    UP = "up"
    #: answered 2xx, but slowly or saying it is degraded
    DEGRADED = "degraded"
    #: no answer, an error status, or a body saying it fails
    DOWN = "down"
    #: not called: no health URL, or one the SSRF guard refuses (never checked, on the dashboard)
    UNKNOWN = "unknown"


class CheckTrigger(enum.StrEnum):
    SCHEDULED = "scheduled"
    MANUAL = "manual"


def _enum(kind: type[enum.Enum]) -> Enum:
    return Enum(kind, native_enum=False, length=16, values_callable=lambda e: [m.value for m in e])


class ApiHealthCheck(IdMixin, Base):
    __tablename__ = "api_health_checks"
    __table_args__ = (
        # an API's latest check and its recent ones, newest first
        Index("ix_api_health_checks_node_checked", "node_id", "checked_at", "id"),
    )

    node_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("catalogue_nodes.id", ondelete="CASCADE"))
    checked_at: Mapped[datetime] = mapped_column(UTCDateTime())
    trigger: Mapped[CheckTrigger] = mapped_column(_enum(CheckTrigger))
    status: Mapped[HealthStatus] = mapped_column(_enum(HealthStatus))
    #: the URL called; None when the API has none
    url: Mapped[str | None] = mapped_column(String(2048), default=None)
    http_status: Mapped[int | None] = mapped_column(Integer, default=None)
    #: from sending the request to reading the answer's body, in milliseconds
    latency_ms: Mapped[float | None] = mapped_column(Float, default=None)
    #: why it is not up (a refusal, a connection error, the body's word), or None
    detail: Mapped[str | None] = mapped_column(Text, default=None)
