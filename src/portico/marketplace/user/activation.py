"""What an approved account is told: the activation email (queued in the outbox through
``notification.service.notify``, which also records the site-wide notification)."""

from __future__ import annotations

from typing import Any

from portico.core.account import User

KIND = "activation"
NOTIFICATION_TYPE = "user_activated"
SUBJECT = "Your developer portal account is active"
#: where the portal's pages sign people in (``web/portal``), relative to
#: ``settings.public_url``
SIGN_IN_PATH = "/portal/sign-in"


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
