"""What the developer is told of a decision on a subscription: a notification and an email
through the outbox, in the transaction of the decision, with the administrator's reason."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy.ext.asyncio import AsyncSession

from portico.core.account import find_by_id
from portico.marketplace.notification.service import notify
from portico.marketplace.subscription.models import Subscription

_WHAT = {
    "approved": "was approved",
    "rejected": "was rejected",
    "revoked": "was revoked",
}


async def tell_developer(
    session: AsyncSession, subscription: Subscription, outcome: str, now: datetime
) -> None:
    """``outcome``: approved, rejected or revoked. Nothing when the app's owner is gone."""
    if subscription.owner_id is None:
        return
    owner = await find_by_id(session, subscription.owner_id)
    if owner is None:
        return
    kind = "API" if subscription.node_bundle == "apis" else "API product"
    subject = (
        f"Your subscription of {subscription.app_name} to {subscription.node_title} "
        f"{_WHAT[outcome]}"
    )
    lines = [
        f"Your app {subscription.app_name}'s subscription to the {kind} "
        f"{subscription.node_title} {_WHAT[outcome]}."
    ]
    if subscription.reason:
        lines.append(f"Reason: {subscription.reason}")
    if outcome == "approved":
        lines.append("Your app's key is admitted by the gateway as soon as access is provisioned.")
    await notify(
        session,
        type=f"subscription_{outcome}",
        audience="user",
        subject=subject,
        body="\n\n".join(lines),
        recipient=owner,
        email_kind=f"subscription_{outcome}",
        now=now,
        entity_type="subscription",
        entity_id=subscription.id,
        data={
            "reason": subscription.reason,
            "app": subscription.app_name,
            "node": subscription.node_title,
            "status": subscription.status.value,
        },
    )


async def tell_administrators(
    session: AsyncSession, subscription: Subscription, now: datetime
) -> None:
    """A request waits in the approval queue (a site notification, no email)."""
    await notify(
        session,
        type="subscription_requested",
        audience="administrators",
        subject=f"{subscription.app_name} asks to subscribe to {subscription.node_title}",
        body="A subscription waits for approval in the admin API (GET /subscriptions).",
        recipient=None,
        email_kind=None,
        now=now,
        entity_type="subscription",
        entity_id=subscription.id,
    )
