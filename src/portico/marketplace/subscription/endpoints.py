"""Subscriptions, for administrators (permission ``administer apim subscriptions``; the
analytics ``view api analytics``): the approval queue (pending first), one subscription,
approve, reject and revoke with a reason, and its analytics from the gateway connection."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends, Query, Request

from portico.core.db.session import SessionDep
from portico.core.envelope import Collection, Envelope, collection
from portico.core.openapi import problems
from portico.core.pagination import ListQuery, ListSpec, list_query
from portico.marketplace.access import SiteCaller, parse_uuid, require
from portico.marketplace.subscription import hooks as _hooks  # noqa: F401  (registers them)
from portico.marketplace.subscription import service as subscription_service
from portico.marketplace.subscription.models import SubscriptionStatus
from portico.marketplace.subscription.schemas import (
    DecisionReason,
    LatencyRead,
    QuotaRead,
    SubscriptionAnalytics,
    SubscriptionRead,
)
from portico.marketplace.subscription.service import (
    AnalyticsUnavailable,
    NoGatewayAccess,
    SubscriptionNotFound,
    TransitionRefused,
)

router = APIRouter(prefix="/subscriptions", tags=["subscriptions"])

LIST = ListSpec(
    sortable=frozenset({"requested_at", "decided_at", "status", "app_name", "node_title"}),
    default_sort="requested_at",
    filterable=frozenset({"status", "app", "node"}),
    filter_style="bracket",
    size_param="limit",
    default_size=50,
    max_size=500,
)
FILTER_PARAMETERS: dict[str, dict[str, Any]] = {
    "status": {
        "description": "Subscriptions in this status.",
        "schema": {"type": "string", "enum": [s.value for s in SubscriptionStatus]},
    },
    "app": {
        "description": "Subscriptions of this developer app (its id).",
        "schema": {"type": "string", "format": "uuid"},
    },
    "node": {
        "description": "Subscriptions to this API or API product (its node id).",
        "schema": {"type": "string", "format": "uuid"},
    },
}
Administrator = Annotated[SiteCaller, Depends(require("administer apim subscriptions"))]
Analyst = Annotated[SiteCaller, Depends(require("view api analytics"))]


def _refused(action: str, states: str) -> dict[int | str, dict[str, Any]]:
    return problems(
        TransitionRefused,
        detail=f"The subscription is not {states}: it cannot be {action} (the state table).",
    )


@router.get(
    "",
    response_model=Collection[SubscriptionRead],
    openapi_extra={"parameters": LIST.openapi_parameters(FILTER_PARAMETERS)},
)
async def list_subscriptions(
    request: Request,
    _caller: Administrator,
    session: SessionDep,
    query: ListQuery = Depends(list_query(LIST)),
) -> Collection[SubscriptionRead]:
    """The approval queue: pending subscriptions first, then those being provisioned, then
    the rest, each group in the order ``sort`` asks (oldest request first by default).
    Filters ``filter[status]``, ``filter[app]``, ``filter[node]``."""
    page = await subscription_service.list_(session=session, query=query)
    return collection(request, page, [SubscriptionRead.of(s) for s in page.items])


@router.get("/{subscription}", response_model=Envelope[SubscriptionRead])
async def get_subscription(
    subscription: str, _caller: Administrator, session: SessionDep
) -> Envelope[SubscriptionRead]:
    """One subscription, with the state of its provisioning on the gateway (the remote work
    still owed, its attempts and last error)."""
    found = await subscription_service.get(
        session=session, subscription_id=parse_uuid(subscription, SubscriptionNotFound)
    )
    return Envelope[SubscriptionRead](data=SubscriptionRead.of(found))


@router.get(
    "/{subscription}/analytics",
    response_model=Envelope[SubscriptionAnalytics],
    responses={
        **problems(
            NoGatewayAccess,
            detail="The subscription holds no access on a gateway (not active, or its node "
            "is portal-native): there is nothing to report.",
        ),
        **problems(
            AnalyticsUnavailable, detail="The gateway connection could not be read just now."
        ),
    },
)
async def subscription_analytics(
    subscription: str,
    request: Request,
    _caller: Analyst,
    session: SessionDep,
    window: Annotated[
        Literal["1h", "24h", "7d"], Query(description="The window read, up to now.")
    ] = "24h",
) -> Envelope[SubscriptionAnalytics]:
    """The app's traffic on the subscribed API or product over the window, as the gateway
    connection reports it: requests, errors (status ≥ 400), the response time's
    percentiles, and the product's quota with what the current quota window used."""
    usage = await subscription_service.analytics(
        session=session,
        subscription_id=parse_uuid(subscription, SubscriptionNotFound),
        window=window,
        settings=request.app.state.settings,
    )
    return Envelope[SubscriptionAnalytics](
        data=SubscriptionAnalytics(
            window=window,
            requests=usage.requests,
            errors=usage.errors,
            latency_ms=LatencyRead.model_validate(dict(usage.latency_ms)),
            quota=QuotaRead(limit=usage.quota_limit, used=usage.quota_used),
        )
    )


@router.post(
    "/{subscription}/approve",
    response_model=Envelope[SubscriptionRead],
    responses=_refused("approved", "pending"),
)
async def approve_subscription(
    subscription: str, request: Request, caller: Administrator, session: SessionDep
) -> Envelope[SubscriptionRead]:
    """Pending → ``provisioning``: access is being given on the node's gateway connection
    (retried until it is, connection down or not), then ``active``. A node that is not from
    a gateway connection has nothing to provision: ``active`` at once. The developer is
    notified (and emailed)."""
    approved = await subscription_service.approve(
        session=session,
        caller=caller,
        subscription_id=parse_uuid(subscription, SubscriptionNotFound),
        now=request.app.state.clock.now(),
    )
    return Envelope[SubscriptionRead](data=SubscriptionRead.of(approved))


@router.post(
    "/{subscription}/reject",
    response_model=Envelope[SubscriptionRead],
    responses=_refused("rejected", "pending"),
)
async def reject_subscription(
    subscription: str,
    body: DecisionReason,
    request: Request,
    caller: Administrator,
    session: SessionDep,
) -> Envelope[SubscriptionRead]:
    """Pending → ``rejected``; the reason is stored and sent to the developer (notification
    and email)."""
    rejected = await subscription_service.reject(
        session=session,
        caller=caller,
        subscription_id=parse_uuid(subscription, SubscriptionNotFound),
        reason=body.reason,
        now=request.app.state.clock.now(),
    )
    return Envelope[SubscriptionRead](data=SubscriptionRead.of(rejected))


@router.post(
    "/{subscription}/revoke",
    response_model=Envelope[SubscriptionRead],
    responses=_refused("revoked", "active or provisioning"),
)
async def revoke_subscription(
    subscription: str,
    body: DecisionReason,
    request: Request,
    caller: Administrator,
    session: SessionDep,
) -> Envelope[SubscriptionRead]:
    """Active (or provisioning) → ``revoked`` at once; the access is taken back on the
    gateway (retried until it is). The reason is stored and sent to the developer."""
    revoked = await subscription_service.revoke(
        session=session,
        caller=caller,
        subscription_id=parse_uuid(subscription, SubscriptionNotFound),
        reason=body.reason,
        now=request.app.state.clock.now(),
    )
    return Envelope[SubscriptionRead](data=SubscriptionRead.of(revoked))
