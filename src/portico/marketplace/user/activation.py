"""What an approved account is told: the activation email (queued in the outbox) and the
site-wide notification that records it."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from portico.core.account import User
from portico.core.outbox import OutboxEmail
from portico.marketplace.notification.models import Notification

KIND = "activation"
NOTIFICATION_TYPE = "user_activated"
SUBJECT = "Your developer portal account is active"
#: where the portal signs people in, relative to ``settings.public_url`` (the portal itself
#: is a later issue; this is the path it is to serve)
SIGN_IN_PATH = "/user/login"


def email(user: User, *, base_url: str) -> dict[str, Any]:
    """``enqueue_email`` arguments; plain text, with the portal's sign-in address."""
    greeting = user.display_name or user.email
    body = (
        f"Hello {greeting},\n\n"
        "An administrator approved your registration on the developer portal. "
        "You can now sign in with the email address and password you registered with:\n\n"
        f"{base_url.rstrip('/')}{SIGN_IN_PATH}\n\n"
        "If you did not register, you can ignore this message.\n"
    )
    return {"kind": KIND, "to": user.email, "subject": SUBJECT, "body": body}


def notification(user: User, email: OutboxEmail, *, now: datetime) -> Notification:
    return Notification(
        id=uuid.uuid4(),
        type=NOTIFICATION_TYPE,
        audience="user",
        recipient_user_id=user.id,
        recipient_email=user.email,
        subject=email.subject,
        body=email.body_text,
        entity_type="user",
        entity_id=str(user.id),
        data={},
        email_id=email.id,
        created_at=now,
    )
