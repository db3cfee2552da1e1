"""Site-wide notifications: what the marketplace told whom, and why (the email it queued,
if any, is in the outbox)."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from sqlalchemy import ForeignKey, Index, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from portico.core.clock import utcnow
from portico.core.db.base import Base, IdMixin
from portico.core.db.types import UTCDateTime, json_type


class Notification(IdMixin, Base):
    __tablename__ = "notifications"
    __table_args__ = (Index("ix_notifications_type_created", "type", "created_at"),)

    type: Mapped[str] = mapped_column(String(64))  # user_activated, subscription_rejected...
    audience: Mapped[str] = mapped_column(String(32))  # user, administrators, organisation
    recipient_user_id: Mapped[uuid.UUID | None] = mapped_column(
        ForeignKey("users.id", ondelete="SET NULL"), default=None, index=True
    )
    recipient_email: Mapped[str | None] = mapped_column(String(254), default=None)
    subject: Mapped[str] = mapped_column(String(300))
    body: Mapped[str] = mapped_column(Text, default="")
    entity_type: Mapped[str | None] = mapped_column(String(64), default=None)
    entity_id: Mapped[str | None] = mapped_column(String(64), default=None)
    data: Mapped[dict[str, Any]] = mapped_column(json_type(), default=dict)
    email_id: Mapped[uuid.UUID | None] = mapped_column(
        ForeignKey("email_outbox.id", ondelete="SET NULL"), default=None
    )
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
