"""The email outbox: a message is written in the same transaction as the change it reports,
and delivered later by the worker (``core.mailer``), so an API call never waits for, or fails
because of, a mail server. Delivery is retried with backoff; the row says what happened."""

from __future__ import annotations

import enum
import uuid
from datetime import datetime

from sqlalchemy import Enum, Index, Integer, String, Text
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import Mapped, mapped_column

from portico.core.clock import utcnow
from portico.core.db.base import Base, IdMixin
from portico.core.db.types import UTCDateTime


class EmailStatus(enum.StrEnum):
    PENDING = "pending"
    SENT = "sent"
    FAILED = "failed"  # gave up after the last retry


class OutboxEmail(IdMixin, Base):
    __tablename__ = "email_outbox"
    __table_args__ = (Index("ix_email_outbox_status_next", "status", "next_attempt_at"),)

    kind: Mapped[str] = mapped_column(String(64))  # activation, approval, rejection, ...
    to_address: Mapped[str] = mapped_column(String(254))
    subject: Mapped[str] = mapped_column(String(300))
    body_text: Mapped[str] = mapped_column(Text)
    status: Mapped[EmailStatus] = mapped_column(
        Enum(
            EmailStatus,
            native_enum=False,
            length=16,
            values_callable=lambda e: [m.value for m in e],
        ),
        default=EmailStatus.PENDING,
    )
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    next_attempt_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
    last_error: Mapped[str | None] = mapped_column(Text, default=None)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
    sent_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), default=None)


async def enqueue_email(
    session: AsyncSession, *, kind: str, to: str, subject: str, body: str, now: datetime
) -> OutboxEmail:
    """Queue one message in the caller's transaction (it leaves only if that commits)."""
    email = OutboxEmail(
        id=uuid.uuid4(),
        kind=kind,
        to_address=to,
        subject=subject,
        body_text=body,
        status=EmailStatus.PENDING,
        attempts=0,
        next_attempt_at=now,
        created_at=now,
    )
    session.add(email)
    await session.flush()
    return email
