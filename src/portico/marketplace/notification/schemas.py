"""HTTP shapes of notifications (snake_case, read only: notifications are written by the
marketplace's own operations through ``notification.service.notify``)."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from pydantic import Field

from portico.core.outbox import EmailStatus
from portico.core.schema import PlainReadSchema


class EmailDelivery(PlainReadSchema):
    """Where the email that went with a notification stands in the outbox."""

    id: uuid.UUID
    kind: str
    to_address: str
    status: EmailStatus = Field(description="pending (queued or being retried), sent, failed")
    attempts: int
    next_attempt_at: datetime | None = Field(description="When the next try is due (pending only).")
    sent_at: datetime | None
    last_error: str | None = Field(description="Why the last try failed, if it did.")


class NotificationRead(PlainReadSchema):
    id: uuid.UUID
    type: str = Field(description="What happened: user_activated, subscription_rejected, ...")
    audience: str = Field(description="Who it is for: user, administrators, organisation.")
    recipient_user_id: uuid.UUID | None
    recipient_email: str | None
    subject: str
    body: str
    entity_type: str | None = Field(description="What it is about (user, subscription...).")
    entity_id: str | None
    data: dict[str, Any]
    created_at: datetime
    email: EmailDelivery | None = Field(
        default=None, description="The email sent with it, if any, and its delivery state."
    )


class NotificationSummary(PlainReadSchema):
    total: int
    by_type: dict[str, int]
    by_audience: dict[str, int]
