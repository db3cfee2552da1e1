"""HTTP shapes of an app's subscriptions on the portal (snake_case): the request (an API or
a product, exactly one) and the subscription as its developer sees it, with its status and
the reason of a rejection or revocation (not the gateway-side provisioning details the
admin API shows: they are the operators' business)."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Annotated, Any

from pydantic import ConfigDict, Field, model_validator

from portico.core.schema import PlainReadSchema, PlainWriteSchema
from portico.core.validation import invalid
from portico.marketplace.public import SubscribedNode, SubscriptionRead, SubscriptionStatus

NodeId = Annotated[uuid.UUID, Field(strict=False)]


def _exactly_one(schema: dict[str, Any]) -> None:
    schema["oneOf"] = [{"required": ["api"]}, {"required": ["product"]}]


class SubscriptionRequest(PlainWriteSchema):
    """``{"api": node}`` or ``{"product": node}``: exactly one."""

    model_config = ConfigDict(json_schema_extra=_exactly_one)

    api: NodeId | None = Field(None, description="A published API's id (GET /apis).")
    product: NodeId | None = Field(
        None, description="A published API product's id (GET /products)."
    )

    @model_validator(mode="after")
    def _one_of_them(self) -> SubscriptionRequest:
        if self.api is not None and self.product is not None:
            invalid(("product",), "send either api or product, not both")
        if self.api is None and self.product is None:
            invalid(("api",), "send api (an API's id) or product (an API product's id)")
        return self


class AppSubscription(PlainReadSchema):
    id: uuid.UUID
    status: SubscriptionStatus = Field(
        description="pending (waiting for an administrator), provisioning (approved; the "
        "gateway is being told), active, rejected, revoked or cancelled."
    )
    node: SubscribedNode = Field(description="The API or API product subscribed to.")
    reason: str | None = Field(description="Why it was rejected or revoked.")
    requested_at: datetime
    decided_at: datetime | None
    activated_at: datetime | None
    ended_at: datetime | None

    @classmethod
    def of(cls, read: SubscriptionRead) -> AppSubscription:
        return cls(
            id=read.id,
            status=read.status,
            node=read.node,
            reason=read.reason,
            requested_at=read.requested_at,
            decided_at=read.decided_at,
            activated_at=read.activated_at,
            ended_at=read.ended_at,
        )
