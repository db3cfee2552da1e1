"""HTTP shapes of subscriptions (snake_case): what the admin API lists and shows, the
reasons of a rejection and a revocation, and a subscription's analytics."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Annotated, Literal

from pydantic import Field

from portico.core.schema import PlainReadSchema, PlainWriteSchema
from portico.marketplace.subscription.models import Subscription, SubscriptionStatus

Reason = Annotated[
    str,
    Field(
        min_length=1,
        max_length=2000,
        pattern=r"\S",
        description="Why; stored and included in the developer's notification and email.",
    ),
]


class DecisionReason(PlainWriteSchema):
    reason: Reason


class SubscribedApp(PlainReadSchema):
    id: uuid.UUID | None = Field(description="Null once the app was deleted.")
    name: str
    owner_id: uuid.UUID | None = Field(description="The portal account that owns the app.")


class SubscribedNode(PlainReadSchema):
    id: uuid.UUID | None = Field(description="Null once the node was deleted.")
    bundle: Literal["apis", "api_products"]
    title: str


class Provisioning(PlainReadSchema):
    """The gateway side: where access is given, and the remote work still owed."""

    connection_id: uuid.UUID | None = Field(
        description="The gateway connection access is given on; null for a portal-native node."
    )
    pending: Literal["none", "grant", "withdraw"] = Field(
        description="Remote work still owed: giving access, taking it back, or none."
    )
    attempts: int = Field(description="Attempts of the owed work so far.")
    last_error: str | None = Field(description="Why the last attempt failed, when it did.")
    last_attempt_at: datetime | None
    next_attempt_at: datetime | None = Field(
        description="When the owed work is tried next (or, while a worker has it in hand, "
        "when it is taken up again if that worker stops)."
    )


class SubscriptionRead(PlainReadSchema):
    id: uuid.UUID
    status: SubscriptionStatus
    app: SubscribedApp
    node: SubscribedNode
    reason: str | None = Field(description="Why it was rejected or revoked.")
    requested_at: datetime
    decided_at: datetime | None
    decided_by: uuid.UUID | None
    activated_at: datetime | None
    ended_at: datetime | None
    provisioning: Provisioning

    @classmethod
    def of(cls, s: Subscription) -> SubscriptionRead:
        return cls(
            id=s.id,
            status=s.status,
            app=SubscribedApp(id=s.app_id, name=s.app_name, owner_id=s.owner_id),
            node=SubscribedNode(id=s.node_id, bundle=s.node_bundle, title=s.node_title),
            reason=s.reason,
            requested_at=s.requested_at,
            decided_at=s.decided_at,
            decided_by=s.decided_by,
            activated_at=s.activated_at,
            ended_at=s.ended_at,
            provisioning=Provisioning(
                connection_id=s.connection_id,
                pending=s.remote_action.value,
                attempts=s.attempts,
                last_error=s.last_error,
                last_attempt_at=s.last_attempt_at,
                next_attempt_at=s.due_at,
            ),
        )


class LatencyRead(PlainReadSchema):
    p50: float | None
    p95: float | None
    p99: float | None


class QuotaRead(PlainReadSchema):
    limit: int | None = Field(description="Requests per quota window; null: unlimited.")
    used: int | None = Field(description="Requests of the current quota window.")


class SubscriptionAnalytics(PlainReadSchema):
    window: Literal["1h", "24h", "7d"]
    requests: int
    errors: int = Field(description="Answers with a status of 400 or more.")
    latency_ms: LatencyRead
    quota: QuotaRead
