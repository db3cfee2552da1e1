"""What people are told about their relationship with an organisation: the invitation, and
the decision on a partner registration. Plain text; queued in the outbox by
``notification.service.notify``, which also keeps the site-wide notification."""

from __future__ import annotations

from dataclasses import dataclass

from portico.core.account import User
from portico.marketplace.organisation.models import Organisation

#: where the portal's pages (``web/portal``) accept an invitation and sign people in,
#: relative to ``settings.public_url``
INVITATION_PATH = "/portal/invitations/"
SIGN_IN_PATH = "/portal/sign-in"


@dataclass(frozen=True)
class Message:
    type: str  # the notification's type
    kind: str  # the outbox email's kind
    subject: str
    #: kept on the notification, which administrators read: nothing secret
    body: str
    #: what the email says instead of ``body`` (None: the same), e.g. with a token
    email_body: str | None = None


def _hello(user: User) -> str:
    return f"Hello {user.display_name or user.email},\n\n"


def invitation(organisation: Organisation, user: User, *, token: str, base_url: str) -> Message:
    """The link carries the invitation's token: it is in the email only, never in the
    notification (the store keeps its hash)."""
    intro = f"{_hello(user)}You are invited to join {organisation.name} on the developer portal."
    link = f"{base_url.rstrip('/')}{INVITATION_PATH}{token}"
    return Message(
        type="organisation_invitation",
        kind="invitation",
        subject=f"You are invited to join {organisation.name}",
        body=f"{intro}\n",
        email_body=(
            f"{intro} To accept, open:\n\n{link}\n\n"
            "If you do not know this organisation, you can ignore this message.\n"
        ),
    )


def approval(organisation: Organisation, user: User, *, base_url: str) -> Message:
    return Message(
        type="partner_approved",
        kind="partner_approval",
        subject=f"Your registration with {organisation.name} is approved",
        body=(
            f"{_hello(user)}{organisation.name} approved your registration: you are now a "
            "member of the organisation on the developer portal. Sign in at:\n\n"
            f"{base_url.rstrip('/')}{SIGN_IN_PATH}\n"
        ),
    )


def rejection(
    organisation: Organisation, user: User, *, reason: str, account_deleted: bool
) -> Message:
    closing = (
        "Your account on the developer portal has been deleted.\n"
        if account_deleted
        else "Your account on the developer portal is not affected.\n"
    )
    return Message(
        type="partner_rejected",
        kind="partner_rejection",
        subject=f"Your registration with {organisation.name} was not approved",
        body=(
            f"{_hello(user)}{organisation.name} did not approve your registration.\n\n"
            f"Reason: {reason}\n\n{closing}"
        ),
    )
