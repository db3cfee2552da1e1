"""Per-minute traffic rollups sent by gateway nodes, and the records they lost.

One row per (environment, minute, API, route, consumer, method, status): the analytics that
a later issue builds read these, never raw requests. Every measure is additive, so rows from
several nodes (or several batches of one) merge with ``INSERT ... ON CONFLICT DO UPDATE``
adding the new values, on SQLite and PostgreSQL alike. The latency histogram is one integer
column per bucket (bounds in ``portico.gateway.telemetry.LATENCY_BUCKETS_MS``) for the same
reason: a JSON array cannot be added to in place portably.
"""

from __future__ import annotations

import uuid
from datetime import datetime

from sqlalchemy import BigInteger, Float, ForeignKey, Index, Integer, String
from sqlalchemy.orm import Mapped, mapped_column

from portico.core.db.base import Base
from portico.core.db.types import UTCDateTime

BUCKET_COLUMNS = tuple(f"latency_b{index:02d}" for index in range(12))


class TelemetryRollup(Base):
    __tablename__ = "telemetry_rollups"
    __table_args__ = (Index("ix_telemetry_rollups_org_minute", "org_id", "minute"),)

    environment_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("environments.id", ondelete="CASCADE"), primary_key=True
    )
    minute: Mapped[datetime] = mapped_column(UTCDateTime(), primary_key=True)
    api_id: Mapped[str] = mapped_column(String(64), primary_key=True)
    route_id: Mapped[str] = mapped_column(String(128), primary_key=True)
    consumer: Mapped[str] = mapped_column(String(128), primary_key=True)
    method: Mapped[str] = mapped_column(String(16), primary_key=True)
    status: Mapped[int] = mapped_column(Integer, primary_key=True)
    org_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("orgs.id", ondelete="CASCADE"))
    requests: Mapped[int] = mapped_column(BigInteger, default=0)
    latency_ms_sum: Mapped[float] = mapped_column(Float, default=0.0)
    latency_ms_max: Mapped[float] = mapped_column(Float, default=0.0)
    upstream_requests: Mapped[int] = mapped_column(BigInteger, default=0)
    upstream_ms_sum: Mapped[float] = mapped_column(Float, default=0.0)
    request_bytes: Mapped[int] = mapped_column(BigInteger, default=0)
    response_bytes: Mapped[int] = mapped_column(BigInteger, default=0)
    latency_b00: Mapped[int] = mapped_column(BigInteger, default=0)
    latency_b01: Mapped[int] = mapped_column(BigInteger, default=0)
    latency_b02: Mapped[int] = mapped_column(BigInteger, default=0)
    latency_b03: Mapped[int] = mapped_column(BigInteger, default=0)
    latency_b04: Mapped[int] = mapped_column(BigInteger, default=0)
    latency_b05: Mapped[int] = mapped_column(BigInteger, default=0)
    latency_b06: Mapped[int] = mapped_column(BigInteger, default=0)
    latency_b07: Mapped[int] = mapped_column(BigInteger, default=0)
    latency_b08: Mapped[int] = mapped_column(BigInteger, default=0)
    latency_b09: Mapped[int] = mapped_column(BigInteger, default=0)
    latency_b10: Mapped[int] = mapped_column(BigInteger, default=0)
    latency_b11: Mapped[int] = mapped_column(BigInteger, default=0)


class TelemetryLoss(Base):
    """Records a node could not deliver (its buffer was full), by the minute it said so."""

    __tablename__ = "telemetry_loss"

    environment_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("environments.id", ondelete="CASCADE"), primary_key=True
    )
    minute: Mapped[datetime] = mapped_column(UTCDateTime(), primary_key=True)
    node_id: Mapped[str] = mapped_column(String(128), primary_key=True)
    org_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("orgs.id", ondelete="CASCADE"))
    dropped: Mapped[int] = mapped_column(BigInteger, default=0)
